"""``lws:index:ModelServing``: one Pulumi component = one Kthena ModelServing, one stage per ``up``.

A thin adapter on :class:`pulumi_lws.components.base.WorkloadComponent` (which observes,
reconciles, registers children with ``parent=self`` and ``depends_on``, and runs actions): this
module only documents the arguments (the Python user's :class:`ModelServingArgs`; what they mean
is the API's ``Workload.arguments``, built by :func:`pulumi_lws.components.args.build_spec`,
raising before anything registers) and publishes the ModelServing outputs.
"""

from typing import Any, TypedDict

import pulumi

from pulumi_lws.components.base import WorkloadComponent, register_component
from pulumi_lws.components.prepare import run_workload, workload_outputs
from pulumi_lws.workloads import workload_for

TYPE = "lws:index:ModelServing"
KIND = "ModelServing"

__all__ = ["TYPE", "ModelServing", "ModelServingArgs"]


class ModelServingArgs(TypedDict, total=False):
    """Arguments of a ModelServing: an upstream ``manifest``, individual fields, or both (fields win)."""

    manifest: pulumi.Input[Any]
    """An upstream ``workload.serving.volcano.sh/v1alpha1`` ModelServing manifest (object or YAML text)."""
    name: pulumi.Input[str]
    """``metadata.name`` (default: the manifest's, else the resource name)."""
    namespace: pulumi.Input[str]
    """Namespace of every object (default: the manifest's, else ``default``)."""
    replicas: pulumi.Input[int]
    """Number of ServingGroups."""
    scheduler_name: pulumi.Input[str]
    """``spec.schedulerName`` (upstream default ``volcano``: one Volcano PodGroup per ServingGroup)."""
    recovery_policy: pulumi.Input[str]
    """``ServingGroupRecreate``, ``RoleRecreate`` (default) or ``None``."""
    rollout_strategy: pulumi.Input[Any]
    """``spec.rolloutStrategy`` as upstream: ``{type, rollingUpdateConfiguration{maxUnavailable, maxSurge, partition}}``."""
    roles: pulumi.Input[list[Any]]
    """``spec.template.roles`` as upstream (name, replicas, entryTemplate, workerReplicas, workerTemplate, ...)."""
    mode: pulumi.Input[str]
    """``operator-free`` (default: pulumi-lws expands and rolls out) or ``controller`` (register the upstream
    ModelServing CR for an installed Kthena controller; docs/modes.md)."""
    max_groups_in_flight: pulumi.Input[int]
    """RoleRollingUpdate only: at most this many ServingGroups have roles being replaced at once
    (default: unlimited, upstream's independent per-group behaviour)."""
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


class ModelServing(WorkloadComponent):
    """A Kthena ModelServing (ServingGroups of roles; ServingGroup- or Role-level rolling updates)
    without an operator.

    Each ``pulumi up`` observes the cluster and applies exactly one safe rollout stage; run
    ``pulumi up`` again (or ``pulumi-lws rollout``) until ``stage.complete`` is true.
    """

    selector: pulumi.Output[str]
    """Upstream ``status.labelSelector``: one entry pod per ServingGroup (for an HPA or KEDA)."""
    revision: pulumi.Output[str]
    """Target revision (upstream ``ModelServingRevision``)."""
    stage: pulumi.Output[dict[str, Any]]
    """This stage: policy, replicas, complete, groups (one char per ServingGroup: U o u x -), ``paused``; ``control``: paused, progress deadline, updated/ready/total groups, startedAt/now (docs/rollout-control.md); ``pods``: the namespace and label selector of its pods, which ``pulumi-lws rollout`` polls."""
    blocker: pulumi.Output[str | None]
    """Why the rollout cannot advance ("code: message"), or null."""
    remaining_stages: pulumi.Output[list[dict[str, Any]]]
    """Predicted stages after this one."""
    actions: pulumi.Output[list[str]]
    """Imperative actions of this stage (executed on update only)."""
    status: pulumi.Output[dict[str, Any]]
    """replicas, currentReplicas, updatedReplicas, availableReplicas, currentRevision, updateRevision, conditions."""

    def __init__(self, name: str, args: ModelServingArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        # mode, Output inputs, spec (SpecError) and the controller-mode CRD check, before anything registers
        workload = workload_for(KIND)
        outputs = workload_outputs(workload, run_workload(self, TYPE, name, args, opts, workload))
        self._publish_outputs({"selector": outputs["status"].get("labelSelector", ""), **outputs})


register_component(KIND, ModelServing)
