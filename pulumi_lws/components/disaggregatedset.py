"""``lws:index:DisaggregatedSet``: one Pulumi component = one DisaggregatedSet, one stage per ``up``.

A thin adapter on :class:`pulumi_lws.components.base.WorkloadComponent` (which observes,
reconciles, registers children with ``parent=self`` and ``depends_on``, and runs actions): this
module only documents the arguments (the Python user's :class:`DisaggregatedSetArgs`; what they
mean is the API's ``Workload.arguments``, built by :func:`pulumi_lws.components.args.build_spec`,
raising before anything registers) and publishes the DisaggregatedSet outputs. Every child LeaderWorkerSet is expanded into native
objects by the project's LeaderWorkerSet pipeline.
"""

from typing import Any, TypedDict

import pulumi

from pulumi_lws.components.base import WorkloadComponent, register_component
from pulumi_lws.components.prepare import run_workload, workload_outputs
from pulumi_lws.workloads import workload_for

TYPE = "lws:index:DisaggregatedSet"
KIND = "DisaggregatedSet"

__all__ = ["TYPE", "DisaggregatedSet", "DisaggregatedSetArgs"]


class DisaggregatedSetArgs(TypedDict, total=False):
    """Arguments of a DisaggregatedSet: an upstream ``manifest``, individual fields, or both (fields win)."""

    manifest: pulumi.Input[Any]
    """An upstream ``disaggregatedset.x-k8s.io/v1`` DisaggregatedSet manifest (object or YAML text)."""
    name: pulumi.Input[str]
    """``metadata.name`` (default: the manifest's, else the resource name)."""
    namespace: pulumi.Input[str]
    """Namespace of every object (default: the manifest's, else ``default``)."""
    roles: pulumi.Input[list[Any]]
    """``spec.roles`` as upstream: each ``{name, scaling, metadata, spec: <LeaderWorkerSet spec>}``."""
    slices: pulumi.Input[int]
    """Independent copies of the whole role topology (default 1)."""
    placement_policy: pulumi.Input[Any]
    """``spec.placementPolicy``: ``{type: None | ExclusiveSlice | ExclusiveTopology, topology}``."""
    mode: pulumi.Input[str]
    """``operator-free`` (default: pulumi-lws expands and rolls out) or ``controller`` (register the upstream
    DisaggregatedSet CR for an installed DisaggregatedSet controller; docs/modes.md)."""
    progress_deadline_seconds: pulumi.Input[float]
    """A new revision not ready this long after its last scale-up is reported as the blocker
    ``progress-deadline-exceeded`` (old capacity kept), and as ``Progressing=False`` (reason
    ``ProgressDeadlineExceeded``) once nothing progressed this long. Default 600; 0 disables."""
    paused: pulumi.Input[bool]
    """Hold the rollout at its current stage: register what the cluster shows, no group moves, failure
    recovery goes on (the manifest annotation ``pulumi-lws.io/paused``; docs/rollout-control.md)."""
    check_capacity: pulumi.Input[bool]
    """Before creating pods, check that they fit: read the cluster's Nodes (allocatable, labels, taints,
    cordon) and running pods' requests, and hold a stage whose new pods do not fit the free capacity
    of nodes matching their selector with the blocker ``insufficient-capacity`` naming the shortfall
    and the remedy (the manifest annotation ``pulumi-lws.io/check-capacity``; needs nodes get/list and
    pods list cluster-wide: ``pulumi-lws render --rbac --check-capacity``; docs/capacity.md). Default false."""
    per_pod_values: pulumi.Input[str]
    """Where the values upstream's pod webhook sets per pod come from, for every Ordinal role that does
    not choose itself (a role's ``pulumi-lws.io/per-pod-values`` annotation wins): ``template``
    (default) or ``admission-policy`` (a MutatingAdmissionPolicy per child LeaderWorkerSet sets them
    when each pod is created; Kubernetes >= 1.34 with the policy API enabled, or >= 1.36). The
    manifest annotation ``pulumi-lws.io/per-pod-values``; docs/rendering.md."""
    gang_provider: pulumi.Input[str]
    """Gang scheduling objects for a role's ``spec.scheduling``, in every child LeaderWorkerSet:
    ``kubernetes`` (default) or ``volcano`` (as the LeaderWorkerSet component's ``gang_provider``)."""
    volcano_queue: pulumi.Input[str]
    """``gang_provider: volcano``: the Volcano queue of every child's PodGroups (a role's
    ``scheduling.volcano.sh/queue-name`` annotation wins)."""


class DisaggregatedSet(WorkloadComponent):
    """A DisaggregatedSet (prefill/decode roles of LeaderWorkerSets rolled in proportional lockstep)
    without an operator.

    Each ``pulumi up`` observes the cluster and applies exactly one safe stage; run ``pulumi up``
    again (or ``pulumi-lws rollout``) until ``stage.complete`` is true.
    """

    revision: pulumi.Output[str]
    """Target revision (upstream ``ComputeRevision``: role names and leaderWorkerTemplates)."""
    stage: pulumi.Output[dict[str, Any]]
    """This stage: policy, replicas, complete, and per role ``old|new`` replicas, ``paused``; ``control``: paused, progress deadline, updated/ready/total groups, startedAt/now (docs/rollout-control.md); ``pods``: the namespace and label selector of its pods, which ``pulumi-lws rollout`` polls."""
    blocker: pulumi.Output[str | None]
    """Why the rollout cannot advance ("code: message"), or null."""
    remaining_stages: pulumi.Output[list[dict[str, Any]]]
    """Predicted stages after this one."""
    actions: pulumi.Output[list[str]]
    """Imperative actions of this stage (the children's, executed on update only)."""
    status: pulumi.Output[dict[str, Any]]
    """roleStatuses (replicas, readyReplicas, updatedReplicas per role) and the Available/Progressing condition."""

    def __init__(self, name: str, args: DisaggregatedSetArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        # mode, Output inputs, spec (SpecError) and the controller-mode CRD check, before anything registers;
        # the backend observes (and the live one LISTs) the PodGroup kind of the children's gang provider
        workload = workload_for(KIND)
        run = run_workload(self, TYPE, name, args, opts, workload)
        outputs = workload_outputs(workload, run)
        self._publish_outputs(outputs)


register_component(KIND, DisaggregatedSet)
