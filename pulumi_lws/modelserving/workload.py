"""Kthena ModelServing as the shells see it: the :class:`~pulumi_lws.core.contract.workload.Workload` contract.

Registered on import; the shells reach it through :func:`pulumi_lws.core.contract.workload.workload_for`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_lws.core.contract.facts import ArgumentSchema, GangChoice, KindRef, Option, RbacFacts, Words, positive_int
from pulumi_lws.core.contract.ports import Scope
from pulumi_lws.core.contract.simulation import GroupLabels
from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.core.contract.stage import Lane, Stage
from pulumi_lws.core.contract.stagetable import Lanes
from pulumi_lws.core.contract.trace import GroupCell, GroupsView
from pulumi_lws.core.contract.workload import Budgets, Reconciled, UpstreamController, Workload, register
from pulumi_lws.core.features.adoption import with_adoption, with_field_ownership
from pulumi_lws.core.features.control import control_choices, controlled, with_control_conditions
from pulumi_lws.core.features.hold import observed_groups
from pulumi_lws.core.features.terminating import without_terminating
from pulumi_lws.modelserving import labels as L
from pulumi_lws.modelserving import reconcile as _reconcile_module
from pulumi_lws.modelserving.api.fields import RUC, role_path
from pulumi_lws.modelserving.api.modelserving import (
    API_VERSION,
    KIND,
    ROLE_ROLLING_UPDATE,
    ModelServing,
)
from pulumi_lws.modelserving.groups import DELETING, RUNNING, GroupState
from pulumi_lws.modelserving.observe import modelserving_scope, observe_groups
from pulumi_lws.modelserving.reconcile import (
    ModelServingOptions,
    max_groups_in_flight_annotation,
    status_of,
)
from pulumi_lws.modelserving.revision import build_catalog, modelserving_revision, role_template_hash
from pulumi_lws.modelserving.rollout.role_plan import role_lanes

#: Kthena's PodGroups are Volcano's, whatever a LeaderWorkerSet of the same program uses
GANG = GangChoice(("volcano",))
OBSERVES: tuple[KindRef, ...] = (
    KindRef("StatefulSet", "apps/v1"),
    KindRef("Pod", "v1"),
    KindRef("Service", "v1"),
    KindRef("ControllerRevision", "apps/v1"),
    GANG.podgroup(),
    KindRef("Node", "v1", namespaced=False),
)

#: the component arguments: field name (snake_case) -> path inside the manifest, and the
#: pulumi-lws option ``max_groups_in_flight`` (RoleRollingUpdate: at most this many ServingGroups
#: with roles being replaced at once; default: upstream's independent per-group behaviour)
ARGUMENTS = ArgumentSchema(
    fields={
        "name": ("metadata", "name"),
        "namespace": ("metadata", "namespace"),
        "replicas": ("spec", "replicas"),
        "scheduler_name": ("spec", "schedulerName"),
        "recovery_policy": ("spec", "recoveryPolicy"),
        "rollout_strategy": ("spec", "rolloutStrategy"),
        "roles": ("spec", "template", "roles"),
    },
    options=(Option("max_groups_in_flight", positive_int),),
    model=ModelServing,
)


class ModelServingWorkload(Workload):
    """``workload.serving.volcano.sh/v1alpha1`` ModelServing (ServingGroup- and Role-level rollouts)."""

    kind = KIND
    api_version = API_VERSION
    #: the simulated kubelet finds a pod's workload and ServingGroup by these (``group-name`` is ``<ms>-<g>``)
    group_labels = GroupLabels(owner=L.NAME, group=L.GROUP_NAME, group_pattern=r".*-(\d+)")
    words = Words(
        "Kthena ModelServing",
        "ServingGroups of roles, ServingGroup- or Role-level rolling updates (volcano-sh/kthena)",
        group="ServingGroup",
    )
    arguments = ARGUMENTS
    gang = GANG
    # Kthena creates the Pods itself, each with a controller ownerReference to the ModelServing
    # (kthena-modelserving-behaviour.md section 2): adoption disowns them though nothing renders them
    rbac = RbacFacts(
        actions=frozenset({("delete", "Pod")}),
        renders=tuple(k for k in OBSERVES if k.kind not in ("Pod", "Node")),
        upstream_owns_unrendered=frozenset({"Pod"}),
    )
    observes = OBSERVES
    upstream = UpstreamController(
        group="workload.serving.volcano.sh",
        plural="modelservings",
        controller="the Kthena ModelServing controller (volcano-sh/kthena; its Helm chart installs the CRD "
        "modelservings.workload.serving.volcano.sh)",
        model="the stage sequence is upstream's loop run to its fixed point per observation (exact for "
        "ServingGroupRollingUpdate and RoleRollingUpdate, sparse ordinals after a surge included); timing is "
        "approximate: upstream creates Pods directly where pulumi-lws renders StatefulSets",
        event_reasons={"delete": "RoleDeleting"},
        owner_kinds=(KIND,),
    )

    def parse(
        self, manifest: Mapping[str, Any], *, namespace: str | None = None, validate: bool = True
    ) -> ModelServing:
        ms = ModelServing.from_manifest(dict(manifest), namespace=namespace, validate=validate)
        max_groups_in_flight_annotation(ms)  # a bad pulumi-lws annotation fails before anything renders
        return ms

    def validate_update(self, spec: ModelServing, old: ModelServing) -> None:
        spec.validate(old)

    def identity(self, spec: ModelServing) -> tuple[str, str]:
        return spec.namespace, spec.name

    def options(self, **choices: Any) -> ModelServingOptions:
        return ModelServingOptions(
            max_groups_in_flight=choices.get("max_groups_in_flight"), control=control_choices(choices)
        )

    def required_apis(self, spec: ModelServing, gang_provider: str | None = None) -> tuple[tuple[str, str, str], ...]:
        """Volcano's PodGroup API when ``spec.schedulerName`` is ``volcano`` (Kthena's default): one
        PodGroup per ServingGroup is rendered then, and none with any other scheduler."""
        if spec.spec.scheduler_name != L.VOLCANO_SCHEDULER:
            return ()
        podgroup = GANG.podgroup()
        why = (
            f"spec.schedulerName: {L.VOLCANO_SCHEDULER} (Kthena's default) renders one Volcano PodGroup per "
            f"ServingGroup ({podgroup.api_version}) and its pods wait for the Volcano scheduler: install Volcano "
            "(its CRD podgroups.scheduling.volcano.sh), or set spec.schedulerName to the scheduler the cluster runs "
            "(default-scheduler: no PodGroups, no gang)"
        )
        return ((podgroup.api_version, podgroup.kind, why),)

    def scope(self, spec: ModelServing, *, nodes: bool | None = None) -> Scope:
        return modelserving_scope(spec.namespace, spec.name, nodes=bool(nodes))

    def reconcile(
        self, spec: ModelServing, snapshot: Snapshot, options: ModelServingOptions | None = None
    ) -> Reconciled:
        # through the module, so tests can monkeypatch ``pulumi_lws.modelserving.reconcile.reconcile``
        options = options or ModelServingOptions()
        result = _reconcile_module.reconcile(spec, snapshot, options)
        result = without_terminating(result, snapshot)  # never declared again while terminating
        result = controlled(
            KIND,
            spec,
            spec.name,
            result,
            snapshot,
            options.control,
            total=spec.replicas,
            held_view=lambda stage: self.held_stage(spec, snapshot, stage),
        )
        # a fleet upstream created: drop its ownerReferences, force the apply over its field manager
        result = with_adoption(result, snapshot, self.upstream)
        adopted: Reconciled = with_field_ownership(result, snapshot, (self.upstream,))
        return adopted

    def budgets(self, spec: ModelServing) -> dict[str, Budgets]:
        """ServingGroupRollingUpdate: the ServingGroup budget. RoleRollingUpdate: no ServingGroup
        surge and — as upstream, every group rolls its roles at once — no ServingGroup floor unless
        ``pulumi-lws.io/max-groups-in-flight`` caps it; each role's own budget is keyed by its name."""
        if spec.strategy == ROLE_ROLLING_UPDATE:
            cap = max_groups_in_flight_annotation(spec)
            out = {"": Budgets(spec.replicas, 0, spec.replicas if cap is None else min(cap, spec.replicas), path=RUC)}
            out.update(
                {
                    r.name: Budgets(
                        r.replicas,
                        spec.role_max_surge(r),
                        spec.role_max_unavailable(r),
                        min(spec.role_partition(r), r.replicas),
                        path=role_path(i),
                    )
                    for i, r in enumerate(spec.roles)
                }
            )
            return out
        return {
            "": Budgets(
                spec.replicas, spec.max_surge(), spec.max_unavailable(), min(spec.partition(), spec.replicas), path=RUC
            )
        }

    def status(self, spec: ModelServing, snapshot: Snapshot, stage: Stage) -> dict[str, Any]:
        return with_control_conditions(status_of(spec, snapshot), stage)

    def covered(self, spec: Any, snapshot: Snapshot | None = None) -> dict[Any, Any]:
        """Rollback (:class:`pulumi_lws.core.features.rollback.Revertible`): the revision-covered values by path."""
        from pulumi_lws.modelserving import rollback

        return rollback.covered(spec)

    def recorded_revisions(self, spec: Any, snapshot: Snapshot) -> list[Any]:
        """Rollback: the revisions the cluster records (:mod:`pulumi_lws.modelserving.rollback`)."""
        from pulumi_lws.modelserving import rollback

        return rollback.recorded_revisions(spec, snapshot)

    def target_revision(self, spec: ModelServing) -> str:
        """The spec's own key; an adopted fleet converges to upstream's (:meth:`observed_target_revision`)."""
        return modelserving_revision(spec)

    def observed_target_revision(self, spec: ModelServing, snapshot: Snapshot) -> str:
        """The revision the reconcile converges to on ``snapshot`` (the catalog's target): an observed
        ControllerRevision whose roles are the spec's (pruned) keeps upstream's key when none has the
        spec's own, so ``rollback`` never offers an adopted revision as its own predecessor."""
        return build_catalog(spec, snapshot.list("ControllerRevision", **{L.NAME: spec.name})).target

    def stage_lanes(self, spec: ModelServing) -> Lanes:
        """One ``R-<ordinal>`` column per ServingGroup; under RoleRollingUpdate, which rolls role
        replicas inside the groups, one ``<role> old|new`` column per role instead."""
        return Lanes.ROLE_REPLICAS if spec.strategy == ROLE_ROLLING_UPDATE else Lanes.GROUPS

    def held_stage(self, spec: ModelServing, snapshot: Snapshot, stage: Stage) -> Stage:
        """A held stage's ServingGroups (and RoleRollingUpdate lanes) as the cluster shows them
        (:meth:`trace_view`): the planner's views are the groups after the stage the hold does not
        apply (``ooou-`` while ``oooo`` is registered)."""
        return observed_groups(stage, self.trace_view(spec, snapshot))

    def trace_view(self, spec: ModelServing, snapshot: Snapshot) -> GroupsView:
        """One cell per observed ServingGroup (ordinal order): U/u on the target revision, o/x on
        another, ready = Running. Live = every observed group (Deleting ones too, as upstream counts
        them toward ``replicas + maxSurge``); available = Running groups."""
        catalog = build_catalog(spec, snapshot.list("ControllerRevision", **{L.NAME: spec.name}))
        groups = observe_groups(snapshot, spec, catalog)
        target = catalog.target  # an adopted fleet keeps upstream's revision key
        cells = []
        for g in groups:
            updated, ready = g.revision == target, g.status == RUNNING
            state = ("U" if ready else "u") if updated else ("o" if ready else "x")
            # no surge flag: ordinals do not identify surge capacity (upstream, sparse ordinals)
            cells.append(
                GroupCell(
                    id=str(g.ordinal),
                    state=state,
                    revision=g.revision,
                    detail="terminating" if g.status == DELETING else "",
                )
            )
        return GroupsView(
            replicas=spec.replicas,
            partition=spec.partition() or None,
            cells=tuple(cells),
            live=len(groups),
            available=sum(1 for g in groups if g.status == RUNNING),
            lanes=_role_lanes(spec, groups, target) if spec.strategy == ROLE_ROLLING_UPDATE else (),
        )


def _role_lanes(spec: ModelServing, groups: Sequence[GroupState], target: str) -> tuple[Lane, ...]:
    """RoleRollingUpdate lanes as the cluster shows them (the planner's ``RolePlan.role_lanes``
    read independently): per spec role its replicas not being deleted, updated when their
    role-template-hash is the spec role's (unlabelled ones: when their group is on the target)."""
    hashes = {r.name: role_template_hash(r) for r in spec.roles}
    replicas = (
        (
            rr.role,
            rr.template_hash == hashes[rr.role] or (not rr.template_hash and g.revision == target),
            rr.status == RUNNING,
        )
        for g in groups
        if g.status != DELETING
        for rr in g.roles
        if rr.role in hashes and rr.status != DELETING
    )
    return role_lanes(replicas, order=tuple(hashes))


WORKLOAD = register(ModelServingWorkload())
