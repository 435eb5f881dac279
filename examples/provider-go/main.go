// LeaderWorkerSet, ModelServing and DisaggregatedSet from Go. The lws package is the SDK
// `pulumi package add ../..` generates from the provider's schema (../../schema.json).
// Checked offline by tests/provider/test_provider_examples.py: each lws.New<Component> names a
// component of the schema and every field of its Args literal is one of its inputs.
package main

import (
	"github.com/pulumi-lws/pulumi-lws/sdk/go/lws"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

func podTemplate() pulumi.Map {
	return pulumi.Map{"spec": pulumi.Map{"containers": pulumi.Array{
		pulumi.Map{"name": pulumi.String("server"), "image": pulumi.String("nginxinc/nginx-unprivileged:1.27")},
	}}}
}

func role(name string, replicas int) pulumi.Map {
	return pulumi.Map{"name": pulumi.String(name), "spec": pulumi.Map{
		"replicas":             pulumi.Int(replicas),
		"leaderWorkerTemplate": pulumi.Map{"size": pulumi.Int(2), "workerTemplate": podTemplate()},
	}}
}

func main() {
	pulumi.Run(func(ctx *pulumi.Context) error {
		sample, err := lws.NewLeaderWorkerSet(ctx, "sample", &lws.LeaderWorkerSetArgs{
			Name:      pulumi.String("leaderworkerset-sample"),
			Namespace: pulumi.String("default"),
			Replicas:  pulumi.Int(4),
			Size:      pulumi.Int(4),
			// int-or-percent inputs are typed as users write them: a count or a percent
			Rollout:        &lws.RolloutArgsArgs{MaxUnavailable: pulumi.Int(2), MaxSurge: pulumi.String("25%")},
			WorkerTemplate: podTemplate(),
		})
		if err != nil {
			return err
		}
		serving, err := lws.NewModelServing(ctx, "serving", &lws.ModelServingArgs{
			Name:          pulumi.String("pd"),
			Namespace:     pulumi.String("default"),
			Replicas:      pulumi.Int(2),
			SchedulerName: pulumi.String("default-scheduler"),
			RolloutStrategy: pulumi.Map{"type": pulumi.String("ServingGroupRollingUpdate"),
				"rollingUpdateConfiguration": pulumi.Map{"maxUnavailable": pulumi.Int(1)}},
			Roles: pulumi.Array{
				pulumi.Map{"name": pulumi.String("prefill"), "replicas": pulumi.Int(1), "workerReplicas": pulumi.Int(1),
					"entryTemplate": podTemplate(), "workerTemplate": podTemplate()},
				pulumi.Map{"name": pulumi.String("decode"), "replicas": pulumi.Int(1), "workerReplicas": pulumi.Int(1),
					"entryTemplate": podTemplate(), "workerTemplate": podTemplate()},
			},
		})
		if err != nil {
			return err
		}
		disaggregated, err := lws.NewDisaggregatedSet(ctx, "disaggregated", &lws.DisaggregatedSetArgs{
			Name:      pulumi.String("pd-disagg"),
			Namespace: pulumi.String("default"),
			Slices:    pulumi.Int(1),
			Roles:     pulumi.Array{role("prefill", 3), role("decode", 1)},
		})
		if err != nil {
			return err
		}
		ctx.Export("leaderName", sample.LeaderName)
		ctx.Export("stage", sample.Stage)
		ctx.Export("servingStage", serving.Stage)
		ctx.Export("disaggregatedStage", disaggregated.Stage)
		return nil
	})
}
