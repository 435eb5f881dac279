"""The DisaggregatedSet stage planner: one slice's observation -> what one ``pulumi up`` declares.

Upstream's ``reconcileSlice`` + executor as a pure function (reference §4.3; design in
docs/disaggregatedset.md, "Rollout decisions"):

1. **Steady** (no old revision has replicas, on any role — spec or removed): every spec role's
   child of the target revision at its target replicas (``reconcileSimple``); old children are
   no longer declared (deleted). A new slice therefore starts at its target directly and a slice
   change never rolls (slices are planned independently; :func:`plan` deletes removed slices).
   While the target children still *replace* older revisions (their ``replaces-revisions``
   annotation, set by every rollout stage: an early full drain, ``maxUnavailable``, lands here
   before the new revision reached its targets) the barrier holds raises: none while a target
   child has unready replicas (a :data:`WAITING` blocker; :func:`~.blockers.steady_unready`);
   the annotation is dropped in the stage that leaves every role at its target. Without it (a
   scale-up outside a rollout: a replicas edit, an External role's autoscaler) every role goes to
   its target at once, unready replicas elsewhere or not, as upstream's ``reconcileSimple``.
2. **Rollout** (some old revision has replicas):

   * *init* (no child of the target revision yet): every old child is stamped ``initial-replicas``
     = its ``spec.replicas`` and every spec role's new child is created — fused with the planner's
     first step from that state (upstream creates at 0 and requeues; its next reconcile computes
     the same step from the same state). An old child without the annotation while the target
     revision exists (a rollback to a revision that still has children) is stamped the same way
     (upstream falls back to ``spec.replicas`` every reconcile: a moving baseline);
   * *barrier*: no role advances until every spec role's new child has all its replicas ready
     (``isRevisionStable``, ready >= spec); a waiting barrier is a :data:`WAITING` blocker, or
     :data:`PROGRESS_DEADLINE_EXCEEDED` once ``progress_deadline_seconds`` passed since the new
     revision's replicas were last raised (old capacity kept: nothing is drained);
   * the planner's ``ComputeNextStep`` over every role (spec roles in spec order, then removed
     roles by name, target 0), applied with :func:`pulumi_lws.disaggregatedset.rollout.apply.
     apply_step` (ready floor, ceiling, no orphan) and :func:`distribute_drain` (newest first,
     exact budget);
   * old revisions whose roles are all at 0 stay declared (at 0, with their annotation) until no
     old revision in the slice has replicas, then all are deleted in that stage: upstream deletes
     each as soon as it is drained, which silently shrinks the planner's baseline Σ initial-replicas
     mid-rollout (addenda §4.3); a revision left only with replicas of a removed role is drained
     and deleted like any other (addenda §4.4: upstream skips the executor then and never deletes
     it).

The plan's types and its mode/branch values are :mod:`.slice_plan`'s; a rollout
stage's children are placed on its old and new revisions by :mod:`.assemble`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from pulumi_lws.core.contract.stage import Blocker
from pulumi_lws.disaggregatedset.planner import (
    DEFAULT_CONFIG,
    UpdateStep,
    batch_size,
    compute_next_new,
    compute_next_step,
    total_steps,
)
from pulumi_lws.disaggregatedset.rollout.apply import (
    Applied,
    RoleState,
    apply_step,
)
from pulumi_lws.disaggregatedset.rollout.assemble import build as _build
from pulumi_lws.disaggregatedset.rollout.blockers import (
    OLD_GROUPS_NOTE,
    PROGRESS_DEADLINE_EXCEEDED,  # noqa: F401 - re-exported: a stage blocker code
    WAITING,  # noqa: F401 - re-exported: a stage blocker code
    steady_held_note,
    steady_unready,
)
from pulumi_lws.disaggregatedset.rollout.blockers import (
    barrier_blocker as _barrier_blocker,
)
from pulumi_lws.disaggregatedset.rollout.blockers import held_notes as _held_notes
from pulumi_lws.disaggregatedset.rollout.observation import (
    ChildObservation,
    RoleTarget,
    SliceObservation,
)
from pulumi_lws.disaggregatedset.rollout.slice_plan import (
    BARRIER,
    INIT,
    PLANNER_DONE,
    RAISE_FIRST,
    REMOVED_SLICE,
    ROLLOUT,
    STEADY,
    ChildPlan,
    DisaggregatedPlan,
    RoleLine,
    SlicePlan,
)

POLICY = "disaggregatedset"
STALLED = "rollout-stalled"


def _steady(
    obs: SliceObservation,
    target: str,
    roles: Sequence[RoleTarget],
    *,
    progress_deadline_seconds: float | None = None,
    new_scaled_at: float | None = None,
    now: float | None = None,
) -> SlicePlan:
    new_rev = obs.revision(target)
    children: list[ChildPlan] = []
    lines = []
    pending = []
    current = {r.name: new_rev.children.get(r.name) if new_rev else None for r in roles}
    replaces = next((c.replaces for c in current.values() if c is not None and c.replaces), None)
    unready = steady_unready(target, current) if replaces else []  # the barrier: only while rolling
    held: list[str] = []
    planned: list[tuple[RoleTarget, ChildObservation | None, int]] = []
    for r in roles:
        c = current[r.name]
        now_at = c.replicas if c else 0
        goal = r.replicas if r.replicas is not None else now_at
        replicas = now_at if unready and goal > now_at else goal  # the barrier: a raise waits
        held += [r.name] if replicas < goal else []
        planned.append((r, c, replicas))
    for r, c, replicas in planned:  # still catching up while a raise is held; at the targets the rollout is over
        children.append(ChildPlan(obs.slice, target, r.name, replicas, c, replaces=replaces if held else None))
    for r, c, replicas in planned:
        goal = r.replicas if r.replicas is not None else (c.replicas if c else 0)
        lines.append(RoleLine(r.name, True, goal, 0, c.replicas if c else 0, 0, c.ready if c else 0, 0, replicas))
        if c is None or c.ready < goal or c.replicas != goal:
            pending.append((r.name, target, ChildObservation(goal, c.ready if c else 0)))
    for rev in obs.revisions:
        if rev.revision == target:
            for role, c in rev.children.items():
                if role not in {r.name for r in roles}:
                    children.append(ChildPlan(obs.slice, target, role, 0, c, declared=False))
            continue
        children.extend(
            ChildPlan(obs.slice, rev.revision, role, 0, c, c.initial_replicas, declared=False)
            for role, c in rev.children.items()
        )
    plan = SlicePlan(obs.slice, target, STEADY, tuple(children), tuple(lines))
    blocker = None
    if held or (pending and not plan.changed):
        # the progress deadline also runs here: a rollout whose budgets let it drain every old
        # replica (maxUnavailable) leaves no old revision, and a new one that never becomes
        # ready must still be named (the same holds for a first deploy)
        blocker = _barrier_blocker(
            obs.slice, unready if held else pending, progress_deadline_seconds, new_scaled_at, now, old_kept=False
        )
    notes = (steady_held_note(obs.slice, held),) if held else ()
    return SlicePlan(
        obs.slice,
        target,
        STEADY,
        tuple(children),
        tuple(lines),
        stable=not held,
        branch=BARRIER if held else "",
        blocker=blocker,
        complete=not pending,
        notes=notes,
    )


def _role_order(obs: SliceObservation, target: str, roles: Sequence[RoleTarget]) -> list[tuple[str, bool]]:
    spec = [r.name for r in roles]
    removed = sorted({role for rev in obs.revisions if rev.revision != target for role in rev.children} - set(spec))
    return [(n, True) for n in spec] + [(n, False) for n in removed]


def plan_slice(
    obs: SliceObservation,
    target_revision: str,
    roles: Sequence[RoleTarget],
    *,
    progress_deadline_seconds: float | None = None,
    new_scaled_at: float | None = None,
    now: float | None = None,
) -> SlicePlan:
    """One slice's stage (module doc). ``new_scaled_at``/``now``: seconds (any epoch) of the last
    raise of the target revision's replicas in this slice and of this reconcile."""
    target = target_revision
    old_revs = [r for r in obs.revisions if r.revision != target]
    order = _role_order(obs, target, roles)
    if sum(rev.total for rev in old_revs) == 0:
        return _steady(
            obs,
            target,
            roles,
            progress_deadline_seconds=progress_deadline_seconds,
            new_scaled_at=new_scaled_at,
            now=now,
        )

    by_name = {r.name: r for r in roles}
    new_rev = obs.revision(target)
    init = new_rev is None or not new_rev.children
    new_children: dict[str, ChildObservation | None] = {
        name: (new_rev.children.get(name) if new_rev else None) for name, in_spec in order if in_spec
    }

    # initial-replicas: stamped at init (every old child) or when missing (rollback)
    stamps: dict[tuple[str, str], int] = {}
    for rev in old_revs:
        for role, child in rev.children.items():
            stamps[(rev.revision, role)] = (
                child.replicas if (init or child.initial_replicas is None) else child.initial_replicas
            )

    # barrier (a missing new child is created at 0: trivially stable)
    pending = [
        (name, target, child)
        for name, child in new_children.items()
        if child is not None and child.ready < child.replicas
    ]
    states = []
    for name, in_spec in order:
        initial_old = sum(stamps[(rev.revision, name)] for rev in old_revs if name in rev.children)
        old = sum(rev.children[name].replicas for rev in old_revs if name in rev.children)
        ready_old = sum(
            min(rev.children[name].ready, rev.children[name].replicas) for rev in old_revs if name in rev.children
        )
        c: ChildObservation | None = new_children.get(name)
        new = c.replicas if c else 0
        if in_spec:
            r = by_name[name]
            t = new if r.replicas is None else r.replicas
            if r.external and t < new:
                t = new  # upstream's no-shrink guard for External roles mid-rollout
            cfg = r.config
        else:
            t, cfg = 0, DEFAULT_CONFIG
        states.append(
            RoleState(
                name,
                initial_old,
                old,
                new,
                t,
                cfg,
                ready_old,
                min(c.ready, c.replicas) if c else 0,
                in_spec,
                tuple(rev.children[name] for rev in old_revs if name in rev.children),
            )
        )

    if pending:
        blocker = _barrier_blocker(obs.slice, pending, progress_deadline_seconds, new_scaled_at, now)
        return _build(
            obs,
            target,
            INIT if init else ROLLOUT,
            old_revs,
            states,
            stamps,
            tuple(s.old for s in states),
            tuple(s.new for s in states),
            stable=False,
            step=None,
            applied=None,
            branch=BARRIER,
            blocker=blocker,
        )

    initial = tuple(s.initial_old for s in states)
    cur_old = tuple(s.old for s in states)
    cur_new = tuple(s.new for s in states)
    targets = tuple(s.target for s in states)
    configs = tuple(s.config for s in states)
    step = compute_next_step(initial, cur_old, cur_new, targets, configs)
    branch = step.branch if step else PLANNER_DONE
    asked = step if step is not None else UpdateStep((0,) * len(states), cur_new, PLANNER_DONE)
    mode = INIT if init else ROLLOUT

    def build(app: Applied, notes: Sequence[str], branch_: str = branch, relaxed: bool = False) -> SlicePlan:
        return _build(
            obs,
            target,
            mode,
            old_revs,
            states,
            stamps,
            app.old,
            app.new,
            stable=True,
            step=step,
            applied=app,
            branch=branch_,
            notes=tuple(notes),
            ceiling_relaxed=relaxed,
        )

    applied = apply_step(states, asked.old, asked.new)
    plan = build(applied, _held_notes(obs.slice, applied))
    if not plan.changed:
        # upstream's step would break the floor and nothing else moves: raise new first, to the
        # planner's next new point within the ceiling (apply module doc)
        # planner's next new point within the ceiling (lockstep kept), else one batch per role
        nxt = compute_next_new(targets, cur_new, total_steps(initial, targets, configs))
        batch = tuple(
            max(n, min(t, n + batch_size(c.max_surge, c.max_unavailable))) for n, t, c in zip(cur_new, targets, configs)
        )
        for raise_to in (nxt, batch):
            raised = apply_step(states, cur_old, raise_to)
            candidate = build(
                raised,
                [
                    (
                        f"slice {obs.slice}: upstream's step {list(asked.old)}|{list(asked.new)} "
                        "would break the availability floor; new replicas are raised first"
                    )
                ],
                RAISE_FIRST,
            )
            if candidate.changed:
                plan = candidate
                break
    if not plan.changed and applied.held_raise:
        declared_only = apply_step([replace(st, old_children=()) for st in states], asked.old, asked.new)
        if not declared_only.held_raise:
            # held only by old groups still running beyond their declared replicas (an unready old
            # child whose LWS controller keeps its surge, e.g. a broken B in A -> B -> C: they may
            # never go) and nothing else moves: waiting could last forever, so the raise is applied
            # on declared counts
            plan = build(
                declared_only,
                [OLD_GROUPS_NOTE.format(slice=obs.slice, roles=", ".join(applied.held_raise))],
                relaxed=True,
            )
        else:
            # upstream's own step exceeds the surge ceiling (apply module doc): apply its raise as upstream
            relaxed = apply_step(states, asked.old, asked.new, ceiling=False)
            plan = build(
                relaxed,
                [n for n in _held_notes(obs.slice, relaxed) if "surge ceiling" not in n]
                + [
                    (
                        f"slice {obs.slice}: upstream's step {list(asked.old)}|{list(asked.new)} exceeds maxSurge (force "
                        "drain undone by orphan prevention); its raise is applied as upstream does"
                    )
                ],
                relaxed=True,
            )
    if not plan.changed and plan.blocker is None:
        plan = replace(
            plan,
            blocker=Blocker(
                STALLED,
                f"slice {obs.slice}: the planner's step "
                f"{list(asked.old)}|{list(asked.new)} cannot be applied within the "
                "availability floor and the surge ceiling",
            ),
        )
    return plan


def removed_slice(obs: SliceObservation, target_revision: str) -> SlicePlan:
    """A slice at or above ``spec.slices``: every child deleted (``cleanupRemovedSlices``)."""
    children = tuple(
        ChildPlan(obs.slice, rev.revision, role, 0, c, c.initial_replicas, declared=False)
        for rev in obs.revisions
        for role, c in rev.children.items()
    )
    return SlicePlan(
        obs.slice, target_revision, REMOVED_SLICE, children, (), branch=REMOVED_SLICE, complete=not children
    )


def plan(
    observations: Sequence[SliceObservation],
    slices: int,
    target_revision: str,
    roles: Sequence[RoleTarget],
    *,
    progress_deadline_seconds: float | None = None,
    new_scaled_at: Mapping[int, float] | None = None,
    now: float | None = None,
) -> DisaggregatedPlan:
    """Every slice ``0..slices-1`` planned independently (an unobserved slice is empty: created at
    its target), observed slices ``>= slices`` deleted."""
    by_slice = {o.slice: o for o in observations}
    out = []
    for i in range(slices):
        obs = by_slice.get(i, SliceObservation(i))
        out.append(
            plan_slice(
                obs,
                target_revision,
                roles,
                progress_deadline_seconds=progress_deadline_seconds,
                new_scaled_at=(new_scaled_at or {}).get(i),
                now=now,
            )
        )
    out += [removed_slice(by_slice[i], target_revision) for i in sorted(by_slice) if i >= slices]
    return DisaggregatedPlan(target_revision, tuple(r.name for r in roles), tuple(out))
