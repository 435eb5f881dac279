"""DisaggregatedSet as the shells see it: the :class:`~pulumi_lws.core.contract.workload.Workload` contract.

Registered on import; the shells reach it through :func:`pulumi_lws.core.contract.workload.workload_for`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from pulumi_lws.core.contract.facts import ArgumentSchema, KindRef, Option, RbacFacts, Words, seconds
from pulumi_lws.core.contract.ports import Scope
from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.core.contract.stage import Lane, Stage, lane_title
from pulumi_lws.core.contract.stagetable import Lanes
from pulumi_lws.core.contract.trace import GroupCell, GroupsView
from pulumi_lws.core.contract.workload import Budgets, Reconciled, UpstreamController, Workload, register
from pulumi_lws.core.features.adoption import held_for_pod_owners, with_field_ownership
from pulumi_lws.core.features.control import control_choices, controlled, with_control_conditions
from pulumi_lws.core.features.terminating import without_terminating
from pulumi_lws.disaggregatedset import reconcile as _reconcile_module
from pulumi_lws.disaggregatedset.adoption import CHILD_UPSTREAM, target_revision, with_disown
from pulumi_lws.disaggregatedset.api.disaggregatedset import (
    API_VERSION,
    KIND,
    DisaggregatedSet,
)
from pulumi_lws.disaggregatedset.api.fields import RUC, role_path
from pulumi_lws.disaggregatedset.external import SCALER_API_VERSION, SCALER_KIND
from pulumi_lws.disaggregatedset.observe import (
    ds_scope,
    observe_children,
    split_by_child,
)
from pulumi_lws.disaggregatedset.reconcile import (
    DisaggregatedSetOptions,
    role_targets,
    status_of,
)
from pulumi_lws.disaggregatedset.revision import compute_revision
from pulumi_lws.disaggregatedset.rollout.cases import CASE_WORDS
from pulumi_lws.lws import workload as lws_workload
from pulumi_lws.lws.api.per_pod_rules import PER_POD_VALUES
from pulumi_lws.lws.reconcile import ReconcileOptions
from pulumi_lws.lws.rollout.placement import needs_nodes
from pulumi_lws.lws.trace_view import read_groups
from pulumi_lws.lws.workload import GROUP_LABELS as LWS_GROUP_LABELS

#: External scaling's per-role scale subresource objects (disaggregatedset/external.py)
SCALER = KindRef(SCALER_KIND, SCALER_API_VERSION, plural="disaggregatedsetrolescalers", optional=True)

#: the component arguments: field name (snake_case) -> path inside the manifest, and the
#: pulumi-lws options ``progress_deadline_seconds`` (a new revision not ready this long after its
#: last scale-up is reported as a blocker, old capacity kept; default 600, 0 disables: the DS
#: option, not an annotation), ``gang_provider`` and ``volcano_queue`` (every child
#: LeaderWorkerSet's, as the LeaderWorkerSet component's arguments of the same name)
ARGUMENTS = ArgumentSchema(
    fields={
        "name": ("metadata", "name"),
        "namespace": ("metadata", "namespace"),
        "roles": ("spec", "roles"),
        "slices": ("spec", "slices"),
        "placement_policy": ("spec", "placementPolicy"),
        # every Ordinal role without its own choice (DisaggregatedSet.inherited_annotations)
        "per_pod_values": ("metadata", "annotations", PER_POD_VALUES),
    },
    options=(Option("progress_deadline_seconds", seconds), *lws_workload.GANG_OPTIONS),
    control=("paused", "check_capacity"),
    model=DisaggregatedSet,
)


class DisaggregatedSetWorkload(Workload):
    """``disaggregatedset.x-k8s.io/v1`` DisaggregatedSet: roles of LeaderWorkerSets rolled in lockstep."""

    kind = KIND
    api_version = API_VERSION
    #: its pods are its LeaderWorkerSet children's: found by the LeaderWorkerSet labels
    group_labels = LWS_GROUP_LABELS
    #: the stage planner's case ids in plain words (the component's preview log, ``status``)
    case_words = CASE_WORDS
    words = Words(
        "DisaggregatedSet",
        "prefill/decode roles of LeaderWorkerSets rolled in proportional lockstep (kubernetes-sigs/lws)",
    )
    arguments = ARGUMENTS
    gang = lws_workload.GANG  # the children's
    rbac = RbacFacts(
        actions=lws_workload.ACTIONS | {("patch-status", SCALER_KIND)},
        renders=(*lws_workload.RENDERS, SCALER),
        configures=lws_workload.CONFIGURES,  # a role's per-pod values admission-policy
    )
    observes = (*lws_workload.OBSERVES, SCALER)
    reconcile_written_annotations = lws_workload.LeaderWorkerSetWorkload.reconcile_written_annotations  # the children's
    upstream = UpstreamController(
        group="disaggregatedset.x-k8s.io",
        plural="disaggregatedsets",
        controller="the DisaggregatedSet controller (kubernetes-sigs/lws, which also installs the LeaderWorkerSet "
        "controller; CRD disaggregatedsets.disaggregatedset.x-k8s.io)",
        model="the step sequence is upstream's ComputeNextStep (checked against its planner vectors); it approximates "
        "where upstream's executor diverges from its planner (the coordinated drain over-drains) and where "
        "pulumi-lws adds a progress deadline upstream lacks",
        owner_kinds=(KIND,),
    )

    def parse(
        self, manifest: Mapping[str, Any], *, namespace: str | None = None, validate: bool = True
    ) -> DisaggregatedSet:
        return DisaggregatedSet.from_manifest(dict(manifest), namespace=namespace, validate=validate)

    def validate_update(self, spec: DisaggregatedSet, old: DisaggregatedSet) -> None:
        spec.validate(old)

    def identity(self, spec: DisaggregatedSet) -> tuple[str, str]:
        return spec.namespace, spec.name

    def options(self, **choices: Any) -> DisaggregatedSetOptions:
        children = {k: v for k, v in choices.items() if k in ("update_order", "gang_provider", "volcano_queue") and v}
        return DisaggregatedSetOptions(
            progress_deadline_seconds=choices.get("progress_deadline_seconds"),
            children=ReconcileOptions(**children),
            control=control_choices(choices),
        )

    def required_apis(
        self, spec: DisaggregatedSet, gang_provider: str | None = None
    ) -> tuple[tuple[str, str, str], ...]:
        """The children's (a role with per-pod values ``admission-policy``, a role with
        ``spec.scheduling``: its gang objects by ``gang_provider``), each API once (the first
        role asking for it names the field)."""
        child = lws_workload.LeaderWorkerSetWorkload()
        out: dict[tuple[str, str], tuple[str, str, str]] = {}
        for i, r in enumerate(spec.roles):
            for api in child.required_apis(spec.role_spec_as_lws(r), gang_provider, field=f"{role_path(i)}.spec"):
                out.setdefault(api[:2], api)
        return tuple(out.values())

    def mode_notes(self, spec: DisaggregatedSet) -> dict[str, str]:
        """``perPodValues`` of every role whose manifest chooses it."""
        child = lws_workload.LeaderWorkerSetWorkload()
        notes = [
            f"role {r.name}: {line}" for r in spec.roles for line in child.mode_notes(spec.role_spec_as_lws(r)).values()
        ]
        return {"perPodValues": "; ".join(notes)} if notes else {}

    def scope(self, spec: DisaggregatedSet, *, nodes: bool | None = None) -> Scope:
        if nodes is None:
            nodes = spec.placement_type != "None" or any(needs_nodes(spec.role_spec_as_lws(r)) for r in spec.roles)
        return ds_scope(spec.namespace, spec.name, nodes=nodes, scalers=any(r.external for r in spec.roles))

    def reconcile(
        self, spec: DisaggregatedSet, snapshot: Snapshot, options: DisaggregatedSetOptions | None = None
    ) -> Reconciled:
        # through the module, so tests can monkeypatch ``pulumi_lws.disaggregatedset.reconcile.reconcile``
        options = options or DisaggregatedSetOptions()
        result = without_terminating(_reconcile_module.reconcile(spec, snapshot, options), snapshot)
        result = with_disown(result, snapshot, self.upstream)
        held_view = lambda stage: self.held_stage(spec, snapshot, stage)  # noqa: E731
        result = controlled(
            KIND,
            spec,
            spec.name,
            result,
            snapshot,
            options.control,
            total=self.budgets(spec)[""].replicas,
            held_view=held_view,
        )
        # an adopted fleet: hold a moving stage while a child's leader-Pod owners remain (Ordinal
        # roles), force the apply over upstream's field manager (core.features.adoption)
        result = held_for_pod_owners(result, snapshot, held_view)
        adopted: Reconciled = with_field_ownership(result, snapshot, (self.upstream, CHILD_UPSTREAM))
        return adopted

    def budgets(self, spec: DisaggregatedSet) -> dict[str, Budgets]:
        """Per role (every slice together) the ceiling ``target + maxSurge`` and the floor
        ``target - maxUnavailable`` of its groups; ``""``: their sums over the roles."""
        out: dict[str, Budgets] = {}
        for i, t in enumerate(role_targets(spec)):  # in spec.roles order
            replicas = (t.replicas or 0) * spec.slices
            out[t.name] = Budgets(
                replicas,
                t.config.max_surge * spec.slices,
                t.config.max_unavailable * spec.slices,
                path=f"{role_path(i)}.{RUC}",
            )
        out[""] = Budgets(
            sum(b.replicas for b in out.values()),
            sum(b.max_surge for b in out.values()),
            sum(b.max_unavailable for b in out.values()),
        )
        return out

    def status(self, spec: DisaggregatedSet, snapshot: Snapshot, stage: Stage) -> dict[str, Any]:
        return with_control_conditions(status_of(spec, snapshot), stage)

    def covered(self, spec: Any, snapshot: Snapshot | None = None) -> dict[Any, Any]:
        """Rollback (:class:`pulumi_lws.core.features.rollback.Revertible`): the revision-covered values by path."""
        from pulumi_lws.disaggregatedset import rollback

        return rollback.covered(spec, snapshot)

    def recorded_revisions(self, spec: Any, snapshot: Snapshot) -> list[Any]:
        """Rollback: the revisions the cluster records (:mod:`pulumi_lws.disaggregatedset.rollback`)."""
        from pulumi_lws.disaggregatedset import rollback

        return rollback.recorded_revisions(spec, snapshot)

    def target_revision(self, spec: DisaggregatedSet) -> str:
        """The spec's own key; an adopted fleet converges to upstream's (:meth:`observed_target_revision`)."""
        return compute_revision(spec)

    def observed_target_revision(self, spec: DisaggregatedSet, snapshot: Snapshot) -> str:
        """The revision the reconcile converges to on ``snapshot``: :meth:`target_revision` unless
        an adopted upstream revision's children match the spec (its ``rev8`` is kept; adoption.py)."""
        return target_revision(spec, observe_children(spec, snapshot, counts=False), snapshot)

    def stage_lanes(self, spec: DisaggregatedSet) -> Lanes:
        """One ``old|new`` lane per role (per slice past slice 0)."""
        return Lanes.ROLES

    def held_stage(self, spec: DisaggregatedSet, snapshot: Snapshot, stage: Stage) -> Stage:
        """A held stage's lanes and per-(slice, role) groups as the cluster shows them
        (:meth:`trace_view`'s lanes) instead of the old|new the planner would declare after the
        stage: ``phase`` the observed ``old|new``, ``updated`` no old group left and new at the
        role's target, ``ready`` also every new group ready."""
        lanes = {lane.name: lane for lane in self.trace_view(spec, snapshot).lanes}
        targets = {t.name: t.replicas or 0 for t in role_targets(spec)}
        groups = []
        for g in stage.groups:
            role = g.id.split("/", 1)[1] if "/" in g.id else g.id
            lane = lanes.get(lane_title(g.index or 0, role))
            if lane is None:
                groups.append(g)
                continue
            updated = lane.old == 0 and lane.new >= targets.get(role, 0)
            groups.append(
                dataclasses.replace(
                    g,
                    updated=updated,
                    ready=g.exists and updated and lane.new_ready >= lane.new,
                    phase=f"{lane.old}|{lane.new}",
                )
            )
        return dataclasses.replace(stage, groups=tuple(groups), lanes=tuple(lanes.values()))

    def trace_view(self, spec: DisaggregatedSet, snapshot: Snapshot) -> GroupsView:
        """One cell per group of every child, ``<slice>/<role>/<revision>/<i>``: U/u on the target
        revision, o/x on an old one. Live = groups of every child of a spec role; available = their
        ready groups. A role removed from the spec keeps its cells and lane while it drains, but its
        groups count in neither total: the budgets (``budgets``) are the spec roles' only."""
        parts = split_by_child(snapshot)
        # the children's identity only (target, order, replicas): their cells are read below
        children = observe_children(spec, snapshot, parts, counts=False)
        target = target_revision(spec, children, snapshot)
        cells: list[GroupCell] = []
        live = available = 0
        lanes: dict[str, list[int]] = {}
        for s in range(spec.slices):
            for role in spec.role_names:
                lanes[lane_title(s, role)] = [0, 0, 0, 0]
        for child in sorted(children, key=lambda c: (c.slice, c.role, c.revision != target, c.name)):
            lws = spec.role_spec_as_lws(child.role) if child.role in spec.role_names else None
            size = lws.size if lws is not None else 1
            view = read_groups(parts.get(child.name, snapshot), child.name, child.replicas, size, "", child.hash_mode)
            updated = child.revision == target
            for cell in view.cells:
                ready = cell.state in "Uo"
                state = ("U" if ready else "u") if updated else ("o" if ready else "x")
                if cell.state == "-":
                    state = "-"
                cells.append(
                    GroupCell(
                        id=f"{child.slice}/{child.role}/{child.revision[:8]}/{cell.id}",
                        state=state,
                        revision=child.revision,
                        detail=cell.detail,
                    )
                )
            if lws is not None:  # a removed role's groups drain outside the spec's budgets
                live += view.live
                available += view.available
            lane = lanes.setdefault(lane_title(child.slice, child.role), [0, 0, 0, 0])
            k = 1 if updated else 0
            lane[k] += view.live
            lane[k + 2] += view.available
        # what the role LeaderWorkerSets are asked to run (old and new, surge included), as the
        # planner's Stage.replicas: the Replicas column means the same in plan and simulate
        replicas = sum(
            child.replicas for child in children if child.role in spec.role_names and not child.being_deleted
        )
        return GroupsView(
            replicas=replicas,
            partition=None,
            cells=tuple(cells),
            live=live,
            available=available,
            lanes=tuple(Lane(name, c[0], c[1], c[2], c[3]) for name, c in lanes.items()),
        )


WORKLOAD = register(DisaggregatedSetWorkload())
