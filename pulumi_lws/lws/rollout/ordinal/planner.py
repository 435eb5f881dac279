"""Ordinal-mode planner: one safe stage per reconcile (``plan_ordinal``).

observe (leader StatefulSet + per-ordinal groups from the Snapshot) -> inputs of upstream's
``rollingUpdateParameters`` -> the **fixed point** for what was observed (one stage per readiness
change, never a stage that only moves the partition to where the next call would go) -> Stage.

Invariants (tests: conformance vectors, hypothesis model, re-run tests):
* pure: the stage is a function of the spec, the catalog and the snapshot; planning twice on the
  same snapshot gives the same stage, so a crash or re-run can never move more groups than the
  budget allows;
* ``group_revisions`` covers ``[0, stage.replicas)``; an ordinal below the partition keeps the
  revision it is observed on (never the target unless it is observed on the target);
* the partition never rises within a rollout and is never below the user partition;
* ``stage.replicas <= R + MS``; a stage never deletes ready groups below ``max(0, R - MU)`` ready
  (pulumi-lws's surge hold on top of upstream's reclamation, :mod:`pulumi_lws.lws.rollout.budget`);
  with ``RolloutFirst`` no added ordinal is created while old groups
  still need replacing (see :mod:`pulumi_lws.lws.rollout.budget`).

The upstream pure functions are re-exported from :mod:`pulumi_lws.lws.rollout.ordinal.algo`; the rule
applied is :func:`pulumi_lws.lws.rollout.budget.rule_for` (upstream + surge hold, or RolloutFirst).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pulumi_lws.core.contract.snapshot import Snapshot, annotations_of, is_deleting, sts_partition, sts_replicas
from pulumi_lws.core.contract.stage import Blocker, GroupView, Stage
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.observe import revision_of
from pulumi_lws.lws.revision import RevisionCatalog
from pulumi_lws.lws.rollout.budget import DEADLOCK_717, REMEDIES_717, rollout_first_applies, rule_for, surge_held
from pulumi_lws.lws.rollout.ordinal.algo import (  # noqa: F401  (re-exported API)
    Decision,
    LeaderSts,
    RolloutInputs,
    calculate_rolling_update_replicas,
    continuous_ready_replicas,
    fixed_point,
    lws_unready_replicas,
    rolling_update_parameters,
    rolling_update_partition,
    scale_budgets,
)
from pulumi_lws.lws.rollout.ordinal.groups import (
    group_chars,
    group_revisions,
    leader_current_revision,
    observe_ordinal,
    observed_worker_revisions,
    revisions_in_use,
)
from pulumi_lws.lws.rollout.ordinal.predict import Prediction, is_complete, is_settled, prediction

POLICY = "lws/ordinal"
WAITING = "waiting-for-groups"
STS_TERMINATING = "leader-statefulset-terminating"
SURGE_HELD = "surge-held-by-partition"


def observed_leader_sts(sts: Mapping[str, Any] | None) -> LeaderSts | None:
    """The leader StatefulSet as the algorithm reads it (None when absent)."""
    if sts is None:
        return None
    raw = annotations_of(sts).get(L.REPLICAS)
    annotation = int(raw) if raw is not None and str(raw).lstrip("-").isdigit() else None
    return LeaderSts(sts_replicas(sts), sts_partition(sts), annotation)


def ordinal_inputs(
    lws: LeaderWorkerSet, sts: Mapping[str, Any] | None, groups: tuple[GroupView, ...], target_key: str
) -> RolloutInputs:
    """Observation -> :class:`RolloutInputs`. "Template changed" = leader STS label != target key."""
    leader = observed_leader_sts(sts)
    s = leader.replicas if leader else 0
    return RolloutInputs(
        replicas=lws.replicas,
        max_unavailable=lws.max_unavailable(),
        max_surge=lws.max_surge(),
        user_partition=lws.user_partition(),
        sts=leader,
        template_changed=leader is not None and revision_of(sts) != target_key,
        states=group_chars(groups)[:s],
    )


def _ids(ordinals: Iterable[int | None]) -> str:
    return ",".join(str(i) for i in ordinals)


def deadlock_717(inp: RolloutInputs, d: Decision, groups: tuple[GroupView, ...]) -> Blocker | None:
    """#717: new-revision groups unschedulable while old ready groups below the partition hold capacity."""
    stuck = [
        g.index
        for g in groups
        if g.index is not None
        and g.index < d.replicas
        and g.index >= d.partition
        and not g.ready
        and g.phase == "unschedulable"
    ]
    holders = [
        g.index
        for g in groups
        if g.index is not None and inp.user_partition <= g.index < d.partition and g.ready and not g.updated
    ]
    if not stuck or not holders:
        return None
    new = (
        f"group {_ids(stuck)} on the new revision is"
        if len(stuck) == 1
        else f"groups {_ids(stuck)} on the new revision are"
    )
    old = f"old group {_ids(holders)} holds" if len(holders) == 1 else f"old groups {_ids(holders)} hold"
    msg = (
        f"{new} unschedulable while {old} the capacity it needs; maxUnavailable={inp.max_unavailable} forbids "
        f"replacing an old group until a new one is ready (resource deadlock, upstream #717)"
    )
    return Blocker(DEADLOCK_717, msg, tuple(str(i) for i in stuck), REMEDIES_717)


def waiting_blocker(inp: RolloutInputs, d: Decision, groups: tuple[GroupView, ...]) -> Blocker:
    """The rollout waits for readiness changes: name the groups it waits for."""
    live = [(g.index, g) for g in groups if g.index is not None and g.index < d.replicas]
    waiting = [i for i, g in live if not g.ready]
    if waiting:
        return Blocker(WAITING, f"waiting for groups {_ids(waiting)} to become ready", tuple(str(i) for i in waiting))
    stale = [i for i, g in live if i >= d.partition and not g.updated]
    return Blocker(
        WAITING, f"waiting for groups {_ids(stale)} to be recreated on the new revision", tuple(str(i) for i in stale)
    )


def blocker_for(inp: RolloutInputs, d: Decision, groups: tuple[GroupView, ...], complete: bool) -> Blocker | None:
    """A blocker when the fixed point equals the observed state and the rollout is not complete."""
    if complete or inp.sts is None or inp.template_changed:
        return None
    unchanged = (d.replicas, d.partition) == (
        inp.sts.replicas,
        inp.sts.partition,
    ) and inp.sts.replicas_annotation == inp.replicas
    if not unchanged:
        return None
    if is_settled(inp, d):
        held = ",".join(str(i) for i in range(inp.replicas, d.replicas))
        return Blocker(
            SURGE_HELD,
            f"partition {d.partition} keeps groups below it on the old revision; surge groups "
            f"{held} stay until the partition is reset to 0 (upstream behaviour)",
            tuple(held.split(",")),
        )
    return deadlock_717(inp, d, groups) or waiting_blocker(inp, d, groups)


def stage_case(trace: tuple[Decision, ...]) -> str:
    """The branch that produced the applied values: the last call that changed something."""
    return trace[-2].case if len(trace) > 1 else trace[-1].case


def surge_hold_note(inp: RolloutInputs, d: Decision) -> str | None:
    """A note when pulumi-lws's surge hold keeps groups upstream would reclaim now (docs/rollout.md §2)."""
    held = surge_held(inp, d) if inp.sts is not None else 0
    if not held:
        return None
    floor = max(0, inp.replicas - inp.max_unavailable)
    return (
        f"surge hold: keeping replicas {d.replicas} (upstream would reclaim to {d.replicas - held}) so that "
        f"ready groups stay >= {floor} (replicas - maxUnavailable) until the replacements are ready"
    )


def stage_notes(inp: RolloutInputs, trace: tuple[Decision, ...], order: str, target: str) -> tuple[str, ...]:
    notes = []
    if inp.template_changed:
        notes.append(f"template changed: new rollout to revision {target}")
    if len(trace) > 1:
        notes.append("fixed point of cases " + "→".join(t.case for t in trace))
    if order == "RolloutFirst" and inp.sts is not None and rollout_first_applies(inp):  # (it needs the StatefulSet)
        notes.append(f"RolloutFirst: replacing old groups before scaling up from {inp.sts.replicas} to {inp.replicas}")
    hold = surge_hold_note(inp, trace[-1])
    if hold:
        notes.append(hold)
    return tuple(notes)


def plan_ordinal(lws: LeaderWorkerSet, snapshot: Snapshot, catalog: RevisionCatalog, options: Any = None) -> Stage:
    """Plan one stage for an Ordinal LWS from what ``snapshot`` shows (pure)."""
    if options is not None and hasattr(options, "for_lws"):
        options = options.for_lws(lws)  # the LWS annotation pulumi-lws.io/update-order wins (idempotent)
    order = getattr(options, "update_order", "ScaleFirst") or "ScaleFirst"
    target = catalog.target.key
    sts = snapshot.get("StatefulSet", lws.name)
    groups, observed_workers = observe_ordinal(lws, snapshot, target)
    inp = ordinal_inputs(lws, sts, groups, target)
    d, trace = fixed_point(inp, rule_for(order))
    workers = observed_worker_revisions(lws, snapshot, max(len(groups), d.replicas), observed_workers)
    revisions = group_revisions(groups, d.replicas, d.partition, catalog, revision_of(sts), workers)
    kept = revisions_in_use(groups, workers, leader_current_revision(snapshot, sts), catalog)
    complete = inp.sts is not None and is_complete(inp, d)
    blocker = blocker_for(inp, d, groups, complete)
    if sts is not None and is_deleting(sts):
        blocker = Blocker(STS_TERMINATING, f"leader StatefulSet {lws.name} is being deleted; waiting for it to go")
        complete = False
    predicted = Prediction((), True) if complete else prediction(inp, order)
    remaining = predicted.stages
    notes = stage_notes(inp, trace, order, target) + predicted.notes()
    return Stage(
        policy=POLICY,
        target_revision=target,
        replicas=d.replicas,
        partition=d.partition,
        group_revisions=revisions,
        groups=groups,
        blocker=blocker,
        complete=complete,
        case=stage_case(trace),
        remaining=remaining,
        notes=notes,
        kept_revisions=kept,
    )
