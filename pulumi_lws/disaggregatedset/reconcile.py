"""The one place where observe -> plan -> render is wired for DisaggregatedSet (pure: no Pulumi, no I/O).

``reconcile(ds, snapshot)``: read every child LeaderWorkerSet the cluster shows (one Scope for the
whole set: :func:`~pulumi_lws.disaggregatedset.observe.observe_children`), plan one stage per slice
(:func:`~pulumi_lws.disaggregatedset.rollout.stage_planner.plan`: the barrier, upstream's
proportional planner, the drain newest revision first), and expand every declared child through the
project's LeaderWorkerSet pipeline (:func:`~pulumi_lws.disaggregatedset.render.render_children`),
plus the ``<lws>-prv`` Services of every revision ready on all roles. No state between calls: the
planner's baseline is the ``initial-replicas`` annotation recorded on the old children.

Invariants:
* each child's objects are exactly what the LWS pipeline renders for it (plus the four DS labels
  on their metadata), so a child rolls, heals and scales as a LeaderWorkerSet does;
* a revision's Services exist only while that revision has a ready group on every spec role;
* the stage's actions are the children's own actions (Hash-mode gates, failure handling).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pulumi_lws.core.contract.dependencies import check_dependency_order
from pulumi_lws.core.contract.snapshot import Snapshot, labels_of
from pulumi_lws.core.contract.workload import Reconciled
from pulumi_lws.core.features.control import Control, is_paused
from pulumi_lws.core.k8s.timestamps import parse_timestamp
from pulumi_lws.disaggregatedset import external, names
from pulumi_lws.disaggregatedset import labels as DL
from pulumi_lws.disaggregatedset.adoption import target_revision
from pulumi_lws.disaggregatedset.api.disaggregatedset import DisaggregatedSet
from pulumi_lws.disaggregatedset.observe import (
    ChildState,
    observe_children,
    revisions_newest_first,
    split_by_child,
)
from pulumi_lws.disaggregatedset.planner import extract_rolling_update_config
from pulumi_lws.disaggregatedset.render import render_children, services
from pulumi_lws.disaggregatedset.revision import compute_revision
from pulumi_lws.disaggregatedset.rollout.observation import (
    ChildObservation,
    RevisionObservation,
    RoleTarget,
    SliceObservation,
)
from pulumi_lws.disaggregatedset.rollout.predict import prediction
from pulumi_lws.disaggregatedset.rollout.slice_plan import ChildPlan, DisaggregatedPlan
from pulumi_lws.disaggregatedset.rollout.stage import to_stage
from pulumi_lws.disaggregatedset.rollout.stage_planner import plan
from pulumi_lws.lws.reconcile import ReconcileOptions

#: A new revision whose replicas have not all become ready this long after its last scale-up is
#: reported as the blocker ``progress-deadline-exceeded`` (old capacity kept). Annotation to
#: override it per DisaggregatedSet (seconds; "0" disables it).
PROGRESS_DEADLINE_ANNOTATION = "pulumi-lws.io/progress-deadline-seconds"
DEFAULT_PROGRESS_DEADLINE_SECONDS = 600.0


@dataclass(frozen=True)
class DisaggregatedSetOptions:
    """Choices outside the upstream API: the progress deadline (None: the annotation, else 600 s)
    and the options every child LeaderWorkerSet is reconciled with."""

    progress_deadline_seconds: float | None = None
    children: ReconcileOptions = field(default_factory=ReconcileOptions)
    #: pause / progress-deadline report (:mod:`pulumi_lws.core.features.control`), applied by ``Workload.reconcile``
    control: Control | None = None


def progress_deadline(ds: DisaggregatedSet, options: DisaggregatedSetOptions) -> float | None:
    if options.progress_deadline_seconds is not None:
        return options.progress_deadline_seconds or None
    raw = ds.metadata.annotations.get(PROGRESS_DEADLINE_ANNOTATION)
    if raw is not None and str(raw).isdigit():
        return float(raw) or None
    return DEFAULT_PROGRESS_DEADLINE_SECONDS


def external_scaling_active(ds: DisaggregatedSet) -> bool:
    """External scaling is wired (:mod:`~pulumi_lws.disaggregatedset.external`): some role is
    External, so the DS scope observes the scalers and their values are read back (never re-seeded)."""
    return any(r.external for r in ds.roles)


def role_targets(ds: DisaggregatedSet, scalers: Mapping[str, int] | None = None) -> tuple[RoleTarget, ...]:
    """Each spec role's per-slice target and resolved budgets. External roles: the value of their
    scaler read back this reconcile (``scalers``: :func:`pulumi_lws.disaggregatedset.external.targets`),
    else None = keep what runs."""
    out = []
    for role in ds.roles:
        target = (scalers or {}).get(role.name) if role.external else role.replicas
        cfg = role.spec.rollout_strategy.rolling_update_configuration
        config = extract_rolling_update_config(
            cfg.max_surge, cfg.max_unavailable, target or 0, ds.rolling_update_config_given(role)
        )
        out.append(RoleTarget(role.name, target, config, role.external))
    return tuple(out)


def slice_observations(children: Sequence[ChildState]) -> tuple[SliceObservation, ...]:
    """The observed children grouped per slice and revision, revisions newest first."""
    by_slice: dict[int, dict[str, dict[str, ChildObservation]]] = defaultdict(lambda: defaultdict(dict))
    for c in children:
        if c.being_deleted:
            continue
        by_slice[c.slice][c.revision][c.role] = ChildObservation(
            c.replicas, c.ready, c.initial_replicas, c.live, c.replaces
        )
    out = []
    for s in sorted(by_slice):
        order = [r for r in revisions_newest_first(children, s) if r in by_slice[s]]
        out.append(SliceObservation(s, tuple(RevisionObservation(r, by_slice[s][r]) for r in order)))
    return tuple(out)


def last_scale_up(snapshot: Snapshot, revision: str) -> dict[int, float]:
    """Per slice, the newest creationTimestamp of a pod of ``revision``: when its replicas were last
    increased (read from the cluster; the progress deadline counts from there)."""
    out: dict[int, float] = {}
    parsed: dict[str, float | None] = {}  # pods share creation seconds: each distinct stamp parsed once
    # a scan in any order (the max does not care): no reader of the whole snapshot needs its sorted
    # kind index, which a snapshot.list would build just for this
    for (kind, _), pod in snapshot.objects.items():
        if kind != "Pod" or labels_of(pod).get(DL.REVISION) != revision:
            continue
        raw = (pod.get("metadata") or {}).get("creationTimestamp")
        if not raw:
            continue
        if isinstance(raw, str):
            if raw not in parsed:
                parsed[raw] = parse_timestamp(raw)
            ts = parsed[raw]
        else:
            ts = parse_timestamp(raw)
        slice_label = labels_of(pod).get(DL.SLICE, "0")
        if ts is not None and slice_label.isdigit():
            out[int(slice_label)] = max(out.get(int(slice_label), ts), ts)
    return out


def ready_on_all_roles(
    ds: DisaggregatedSet, children: Iterable[ChildState], declared: Iterable[Any], target: str | None = None
) -> list[str]:
    """Revisions with a ready group on every spec role and still declared: their Services exist
    (upstream creates them once the revision is ready on all roles, the target first)."""
    ready: dict[str, set[str]] = defaultdict(set)
    for c in children:
        if c.ready >= 1 and not c.being_deleted:
            ready[c.revision].add(c.role)
    still = {c.revision for c in declared}
    roles = set(ds.role_names)
    target = target if target is not None else compute_revision(ds)
    revs = sorted((r for r, have in ready.items() if roles <= have and r in still), key=lambda r: (r != target, r))
    return revs


def held_children(p: DisaggregatedPlan) -> tuple[ChildPlan, ...]:
    """Paused (:mod:`pulumi_lws.core.features.control`): every observed child at its observed replicas, none
    created — what each child's LWS pipeline (its failure handling included) reconciles, so a
    group the planned stage would drain but the pause keeps still recovers when it fails."""
    return tuple(
        dataclasses.replace(
            c,
            replicas=c.observed.replicas,
            initial_replicas=c.observed.initial_replicas,
            replaces=c.observed.replaces,
            declared=True,
        )
        for c in p.children
        if c.observed is not None
    )


Key = tuple[str, str]


def drain_before_raise(
    ds: DisaggregatedSet,
    target: str,
    declared: Sequence[ChildPlan],
    manifests: Sequence[Mapping[str, Any]],
    dependencies: Mapping[Key, Sequence[Key]],
) -> dict[Key, tuple[Key, ...]]:
    """``dependencies`` plus, per (slice, role), the target child's leader workload depending on the
    leader workload of every declared old child of that role: an apply interrupted part-way (a
    crash, a failed resource) never raises the new revision without the drain planned beside it,
    so the surge ceiling holds through it (a drain alone is always safe: the floor never relies on
    it). Dependencies must be declared earlier: the old children are rendered first."""
    keys = {(m["kind"], m["metadata"]["name"]) for m in manifests}

    def leader(c: ChildPlan) -> Key | None:
        name = names.child_lws(ds.name, c.slice, c.revision, c.role)
        return next(((kind, name) for kind in ("StatefulSet", "Deployment") if (kind, name) in keys), None)

    out = {k: tuple(v) for k, v in dependencies.items()}
    old: dict[tuple[int, str], list[Key]] = defaultdict(list)
    for c in declared:
        if c.revision != target and (key := leader(c)) is not None:
            old[(c.slice, c.role)].append(key)
    for c in declared:
        new = leader(c) if c.revision == target else None
        if new is not None and old.get((c.slice, c.role)):
            out[new] = tuple(dict.fromkeys((*out.get(new, ()), *old[(c.slice, c.role)])))
    return out


def reconcile(
    ds: DisaggregatedSet, snapshot: Snapshot, options: DisaggregatedSetOptions = DisaggregatedSetOptions()
) -> Reconciled:
    """Plan one stage for ``ds`` against ``snapshot`` and render the objects it needs."""
    parts = split_by_child(snapshot)  # once: observation and rendering read the same parts
    children = observe_children(ds, snapshot, parts)
    target = target_revision(ds, children, snapshot)  # upstream's key when adopting its fleet
    observations = slice_observations(children)
    scalers = external.targets(ds, snapshot, children) if external_scaling_active(ds) else {}
    roles = role_targets(ds, scalers)
    deadline = progress_deadline(ds, options)
    p: DisaggregatedPlan = plan(
        observations,
        ds.slices,
        target,
        roles,
        progress_deadline_seconds=deadline,
        new_scaled_at=last_scale_up(snapshot, target) if deadline else None,
        now=snapshot.now,
    )
    predicted = prediction(p, observations, ds.slices, roles)
    declared = held_children(p) if is_paused("DisaggregatedSet", ds, options.control) else p.declared
    declared = tuple(sorted(declared, key=lambda c: c.revision == target))  # old children first: see below
    rendered = render_children(ds, declared, snapshot, options=options.children, parts=parts)
    svc = services(ds, ready_on_all_roles(ds, children, p.declared, target), range(ds.slices))
    manifests = (*rendered.manifests, *svc, *external.manifests(ds, scalers))
    dependencies = drain_before_raise(ds, target, declared, rendered.manifests, rendered.dependencies)
    check_dependency_order(manifests, dependencies)
    stage = to_stage(p, predicted.stages)
    if predicted.notes():
        stage = dataclasses.replace(stage, notes=stage.notes + predicted.notes())
    actions = tuple(a for name in sorted(rendered.stages) for a in rendered.stages[name].actions)
    if scalers:
        actions += external.status_actions(ds, snapshot, [c for c in children if not c.being_deleted])
    stage = dataclasses.replace(stage, actions=stage.actions + actions)
    return Reconciled(stage=stage, manifests=manifests, catalog=p, dependencies=dependencies)


def status_of(ds: DisaggregatedSet, snapshot: Snapshot) -> dict[str, Any]:
    """Upstream ``updateStatus`` over what the cluster shows: roleStatuses and the condition."""
    from pulumi_lws.disaggregatedset.status import ChildStatus, update_status

    observed = observe_children(ds, snapshot)
    target = target_revision(ds, observed, snapshot)
    children = [c for c in observed if not c.being_deleted]
    statuses = [
        ChildStatus(c.role, c.revision, c.replicas, c.ready, c.updated if c.revision == target else 0, c.slice)
        for c in children
    ]
    scalers = external.observed_replicas(ds, snapshot)  # an External role's target: its scaler (None: none yet)
    roles = [(r.name, scalers.get(r.name) if r.external else r.replicas) for r in ds.roles]
    return update_status(roles, statuses, target, ds.slices).to_wire()
