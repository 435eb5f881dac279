"""A rollout stage's children, from the per-role old and new replicas the stage planner settled on.

Apart from :mod:`~pulumi_lws.disaggregatedset.rollout.stage_planner` because it decides no count:
given each role's old and new replicas after the stage, it only places them on children.
Invariants: each spec role's target child is declared at its new count (created when absent); a
role's old replicas are drained from its old revisions newest first, exactly
(:func:`~pulumi_lws.disaggregatedset.rollout.apply.distribute_drain`); old children carry the
``initial-replicas`` stamps the planner gives them and stay declared (at 0 once drained) until no
old revision has replicas, then all are deleted in that stage; the target children carry
``replaces-revisions`` until the old revisions are drained and every spec role is at its target;
a target child of a role no longer in the spec is deleted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pulumi_lws.core.contract.stage import Blocker
from pulumi_lws.disaggregatedset.planner import UpdateStep
from pulumi_lws.disaggregatedset.rollout.apply import Applied, RoleState, distribute_drain
from pulumi_lws.disaggregatedset.rollout.observation import RevisionObservation, SliceObservation
from pulumi_lws.disaggregatedset.rollout.slice_plan import ChildPlan, RoleLine, SlicePlan


def build(
    obs: SliceObservation,
    target: str,
    mode: str,
    old_revs: Sequence[RevisionObservation],
    states: Sequence[RoleState],
    stamps: Mapping[tuple[str, str], int],
    old_after: Sequence[int],
    new_after: Sequence[int],
    *,
    stable: bool,
    step: UpdateStep | None,
    applied: Applied | None,
    branch: str,
    blocker: Blocker | None = None,
    notes: tuple[str, ...] = (),
    ceiling_relaxed: bool = False,
) -> SlicePlan:
    children: list[ChildPlan] = []
    new_rev = obs.revision(target)
    per_role_old: dict[str, tuple[int, ...]] = {}
    for s, o in zip(states, old_after):
        per_role_old[s.name] = distribute_drain(
            s.old - o, [rev.children[s.name].replicas for rev in old_revs if s.name in rev.children]
        )
    all_drained = sum(old_after) == 0
    # the target children name the revisions they replace until the rollout leaves them at their
    # targets (an early full drain keeps it: the steady branch's barrier then knows it is catching up)
    at_targets = all(n >= s.target for s, n in zip(states, new_after) if s.in_spec)
    replaces = None if all_drained and at_targets else ",".join(sorted(rev.revision for rev in old_revs)) or None
    for s, n in zip(states, new_after):
        if not s.in_spec:
            continue
        c = new_rev.children.get(s.name) if new_rev else None
        children.append(ChildPlan(obs.slice, target, s.name, n, c, replaces=replaces))
    if new_rev:  # a target child of a role no longer in the spec cannot exist (the revision covers role names)
        spec = {s.name for s in states if s.in_spec}
        children.extend(
            ChildPlan(obs.slice, target, role, 0, c, declared=False)
            for role, c in new_rev.children.items()
            if role not in spec
        )
    cursor = {name: 0 for name in per_role_old}
    for rev in old_revs:
        for role, c in rev.children.items():
            replicas = per_role_old[role][cursor[role]]
            cursor[role] += 1
            children.append(
                ChildPlan(
                    obs.slice,
                    rev.revision,
                    role,
                    0 if all_drained else replicas,
                    c,
                    stamps[(rev.revision, role)],
                    declared=not all_drained,
                )
            )
    lines = tuple(
        RoleLine(s.name, s.in_spec, s.target, s.old, s.new, s.ready_old, s.ready_new, o, n, s.initial_old)
        for s, o, n in zip(states, old_after, new_after)
    )
    return SlicePlan(
        obs.slice,
        target,
        mode,
        tuple(children),
        lines,
        stable=stable,
        step=step,
        applied=applied,
        branch=branch,
        blocker=blocker,
        notes=notes,
        ceiling_relaxed=ceiling_relaxed,
    )
