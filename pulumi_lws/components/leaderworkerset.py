"""``lws:index:LeaderWorkerSet``: one Pulumi component = one LeaderWorkerSet, one stage per ``up``.

A thin adapter on :class:`pulumi_lws.components.base.WorkloadComponent` (which observes,
reconciles, registers children with ``parent=self`` and ``depends_on``, and runs actions): this
module only documents the arguments (the Python user's :class:`LeaderWorkerSetArgs`; what they
mean is the API's ``Workload.arguments``, built by :func:`pulumi_lws.components.args.build_spec`,
raising before anything registers) and publishes the LeaderWorkerSet outputs.
"""

from typing import Any, TypedDict

import pulumi

from pulumi_lws.components.base import WorkloadComponent, kubernetes_provider_settings, on_stage, register_component
from pulumi_lws.components.prepare import run_workload, workload_outputs
from pulumi_lws.workloads import workload_for

__all__ = ["TYPE", "LeaderWorkerSet", "LeaderWorkerSetArgs", "RolloutArgs", "kubernetes_provider_settings", "on_stage"]

TYPE = "lws:index:LeaderWorkerSet"
KIND = "LeaderWorkerSet"


class RolloutArgs(TypedDict, total=False):
    """``spec.rolloutStrategy.rollingUpdateConfiguration``."""

    max_unavailable: pulumi.Input[str]
    """Groups that may be unavailable during an update: an integer ("2") or a percent ("25%"). Default 1."""
    max_surge: pulumi.Input[str]
    """Extra groups created above replicas during an update: an integer or a percent. Default 0."""
    partition: pulumi.Input[int]
    """Groups with ordinal >= partition get the new template (Ordinal mode). Default 0."""


class LeaderWorkerSetArgs(TypedDict, total=False):
    """Arguments of a LeaderWorkerSet: an upstream ``manifest``, individual fields, or both (fields win)."""

    manifest: pulumi.Input[Any]
    """An upstream ``leaderworkerset.x-k8s.io/v1`` LeaderWorkerSet manifest (object or YAML text)."""
    name: pulumi.Input[str]
    """``metadata.name`` of the LeaderWorkerSet (default: the manifest's, else the resource name)."""
    namespace: pulumi.Input[str]
    """Namespace of every object (default: the manifest's, else ``default``)."""
    replicas: pulumi.Input[int]
    """Number of leader+worker groups."""
    size: pulumi.Input[int]
    """Pods per group, leader included."""
    leader_template: pulumi.Input[Any]
    """Pod template of the leader (default: the worker template)."""
    worker_template: pulumi.Input[Any]
    """Pod template of the workers."""
    rollout: pulumi.Input[RolloutArgs]
    """Rolling update budgets (maxUnavailable, maxSurge, partition)."""
    partition: pulumi.Input[int]
    """Shortcut for ``rollout.partition``."""
    startup_policy: pulumi.Input[str]
    """``LeaderCreated`` (default) or ``LeaderReady``."""
    subdomain_policy: pulumi.Input[str]
    """``Shared`` (default) or ``UniquePerReplica``."""
    group_identity: pulumi.Input[str]
    """``Ordinal`` (default, leader StatefulSet) or ``Hash`` (leader Deployment)."""
    group_replacement_policy: pulumi.Input[str]
    """``PostTermination`` (default) or ``Immediate``."""
    restart_policy: pulumi.Input[str]
    """``RecreateGroupOnPodRestart`` (default), ``RecreateGroupAfterStart`` or ``None``."""
    update_order: pulumi.Input[str]
    """``ScaleFirst`` (upstream, default) or ``RolloutFirst`` for a template change combined with a scale-up."""
    gang_provider: pulumi.Input[str]
    """Gang scheduling objects for ``spec.scheduling``: ``kubernetes`` (default) or ``volcano``."""
    volcano_queue: pulumi.Input[str]
    """``gang_provider: volcano``: the Volcano queue of the PodGroups (the manifest's
    ``scheduling.volcano.sh/queue-name`` annotation wins)."""
    paused: pulumi.Input[bool]
    """Hold the rollout at its current stage: register what the cluster shows, no group moves, failure
    recovery goes on (the manifest annotation ``pulumi-lws.io/paused``; docs/rollout-control.md)."""
    check_capacity: pulumi.Input[bool]
    """Before creating pods, check that they fit: read the cluster's Nodes (allocatable, labels, taints,
    cordon) and running pods' requests, and hold a stage whose new pods do not fit the free capacity
    of nodes matching their selector with the blocker ``insufficient-capacity`` naming the shortfall
    and the remedy (the manifest annotation ``pulumi-lws.io/check-capacity``; needs nodes get/list and
    pods list cluster-wide: ``pulumi-lws render --rbac --check-capacity``; docs/capacity.md). Default false."""
    progress_deadline_seconds: pulumi.Input[float]
    """Report ``Progressing=False`` (reason ``ProgressDeadlineExceeded``) when no group became ready and
    no stage advanced this long, from the cluster's timestamps (annotation
    ``pulumi-lws.io/progress-deadline-seconds``). Default 600; 0 disables."""
    per_pod_values: pulumi.Input[str]
    """Where the values upstream's pod webhook sets per pod come from: ``template`` (default: what the
    StatefulSet templates share, per-pod labels at the next reconcile) or ``admission-policy`` (a
    MutatingAdmissionPolicy sets them when each pod is created; Kubernetes >= 1.34 with the policy API
    enabled, or >= 1.36). The manifest annotation ``pulumi-lws.io/per-pod-values``; docs/rendering.md."""
    mode: pulumi.Input[str]
    """``operator-free`` (default: pulumi-lws expands and rolls out) or ``controller`` (register the upstream
    LeaderWorkerSet CR for an installed LWS controller; docs/modes.md)."""


class LeaderWorkerSet(WorkloadComponent):
    """A LeaderWorkerSet (leader + workers per group, group-level rolling updates) without an operator.

    Each ``pulumi up`` observes the cluster and applies exactly one safe rollout stage; run
    ``pulumi up`` again (or ``pulumi-lws rollout``) until ``stage.complete`` is true.
    """

    leader_name: pulumi.Output[str]
    """Name of the leader StatefulSet (Ordinal) or Deployment (Hash)."""
    service_name: pulumi.Output[str]
    """Name of the headless Service (the shared one; per-group Services add ``-<i>``)."""
    selector: pulumi.Output[str]
    """Label selector of the leader pods, for a HorizontalPodAutoscaler (upstream hpaPodSelector)."""
    revision: pulumi.Output[str]
    """Target template revision key."""
    stage: pulumi.Output[dict[str, Any]]
    """This stage: policy, replicas, partition, case, complete, groups (one char per group: U o u x -), ``paused``; ``control``: paused, progress deadline, updated/ready/total groups, startedAt/now (docs/rollout-control.md); ``pods``: the namespace and label selector of its pods, which ``pulumi-lws rollout`` polls."""
    blocker: pulumi.Output[str | None]
    """Why the rollout cannot advance ("code: message"), or null."""
    remaining_stages: pulumi.Output[list[dict[str, Any]]]
    """Predicted stages after this one (replicas, partition, groups)."""
    actions: pulumi.Output[list[str]]
    """Imperative actions of this stage (executed on update only)."""
    status: pulumi.Output[dict[str, Any]]
    """replicas, readyReplicas, updatedReplicas, hpaPodSelector and LWS conditions."""

    def __init__(self, name: str, args: LeaderWorkerSetArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        # mode, Output inputs, spec (SpecError) and the controller-mode CRD check, before anything registers
        workload = workload_for(KIND)
        run = run_workload(self, TYPE, name, args, opts, workload)
        outputs = workload_outputs(workload, run)
        self._publish_outputs(
            {
                "leader_name": run.built.spec.name,
                "service_name": run.built.spec.name,
                "selector": outputs["status"]["hpaPodSelector"],  # upstream status.hpaPodSelector: the leader pods
                **outputs,
            }
        )


register_component(KIND, LeaderWorkerSet)
