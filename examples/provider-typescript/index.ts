// LeaderWorkerSet, ModelServing and DisaggregatedSet from TypeScript. `@pulumi/lws` is the SDK
// `pulumi package add ../..` generates from the provider's schema (../../schema.json).
// Checked offline by tests/provider/test_provider_examples.py: each `new lws.<Component>(...)`
// names a component of the schema and every argument key is one of its inputs.
import * as pulumi from "@pulumi/pulumi";
import * as lws from "@pulumi/lws";

const container = { name: "server", image: "nginxinc/nginx-unprivileged:1.27" };

const sample = new lws.LeaderWorkerSet("sample", {
    name: "leaderworkerset-sample",
    namespace: "default",
    replicas: 4,
    size: 4,
    // int-or-percent: a count or a percent, as in a Kubernetes manifest
    rollout: { maxUnavailable: 2, maxSurge: "25%" },
    workerTemplate: { spec: { containers: [container] } },
});

const serving = new lws.ModelServing("serving", {
    name: "pd",
    namespace: "default",
    replicas: 2,
    schedulerName: "default-scheduler",
    rolloutStrategy: { type: "ServingGroupRollingUpdate", rollingUpdateConfiguration: { maxUnavailable: 1 } },
    roles: ["prefill", "decode"].map((role) => ({
        name: role,
        replicas: 1,
        workerReplicas: 1,
        entryTemplate: { spec: { containers: [container] } },
        workerTemplate: { spec: { containers: [container] } },
    })),
});

const disaggregated = new lws.DisaggregatedSet("disaggregated", {
    name: "pd-disagg",
    namespace: "default",
    slices: 1,
    roles: [
        { name: "prefill", spec: { replicas: 3, leaderWorkerTemplate: { size: 2, workerTemplate: { spec: { containers: [container] } } } } },
        { name: "decode", spec: { replicas: 1, leaderWorkerTemplate: { size: 2, workerTemplate: { spec: { containers: [container] } } } } },
    ],
});

export const leaderName: pulumi.Output<string> = sample.leaderName;
export const stage = sample.stage;
export const blocker = sample.blocker;
export const servingStage = serving.stage;
export const disaggregatedStage = disaggregated.stage;
