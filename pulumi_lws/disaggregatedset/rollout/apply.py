"""How a planner step is applied: the project's rules on top of upstream's decision.

Upstream applies ``ComputeNextStep``'s ``(old, new)`` at once and drains the old revisions newest
first with a *coordinated drain* (a revision one of whose roles would reach 0 goes to 0 on every
role). pulumi-lws keeps the planner's decision and changes only its application:

* :func:`availability_floor` / :func:`surge_ceiling` — per role, the floor ``F = max(0,
  min(target, initialOld) - maxUnavailable)`` holds on **ready** replicas and the ceiling
  ``C = target + maxSurge`` on the groups the role runs (old + new: :func:`old_running`). A drain is applied only as far as
  ``min(readyOld, old') + readyNew >= F`` allows (the drain removes ready old replicas only after
  the unready ones — exact while the old replicas are all ready or all unready; a drain that
  lowers no ready count, ``old' >= readyOld``, is always allowed so a broken old revision can be
  replaced); a raise of new only as far as ``old_applied + new' <= C`` allows. ``min(target,
  initialOld)``: a role growing during the rollout cannot hold ``target - maxUnavailable`` before
  it has grown. Under the stability barrier (every new replica ready) one of the two always
  moves, so the rollout keeps going: a step that relied on new replicas not yet ready (upstream's
  force drain, addenda §4.6) is split into its raise now and its drain once they are ready.
* the one exception to the ceiling: upstream's force drain decides to drain before its orphan
  prevention puts drained replicas back, so its step can itself exceed ``target + maxSurge``
  (e.g. roles 1/3 with ``maxSurge 0, maxUnavailable 1``: ``[1,1]|[0,1] -> [1,1]|[1,1]``). When the
  ceiling would hold such a step entirely (nothing else moves), the raise is applied as upstream
  does — the floor still holds; the only alternatives are an orphaned old role or a stall;
* :func:`old_running` — the old side of the ceiling counts what the old children will still *run*,
  not only what they declare: an old child observed running more groups than its ``spec.replicas``
  (the LWS controller's surge reclamation keeps up to maxSurge unready groups while the child
  scales down, ``calculateRollingUpdateReplicas``; e.g. an A->B->C rollout draining an unready B)
  counts those groups until they are gone, and a child drained part-way while it has unready
  groups is assumed to keep them (it may: same rule). A child drained to 0 runs nothing (the
  leader StatefulSet goes to 0); a fully ready child drained part-way runs exactly its new count.
  When only such groups hold a stage, the stage planner applies the raise on declared counts
  (a held surge of an unready revision may never go: waiting would deadlock).
* :func:`keep_no_orphan` — holding one role's drain must not leave another role's old revision
  alone at 0 (the planner's own no-orphan rule, kept on the applied counts).
* :func:`distribute_drain` — each role's drain is taken from the old revisions newest first,
  **exactly** the planner's per-role budget: never the coordinated over-drain (addenda §4.3).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pulumi_lws.disaggregatedset.planner import RollingUpdateConfig
from pulumi_lws.disaggregatedset.rollout.observation import ChildObservation


@dataclass(frozen=True)
class RoleState:
    """One role in planner order: the planner inputs plus the ready counts the rules read."""

    name: str
    initial_old: int
    old: int  # Σ spec.replicas over the old revisions
    new: int  # the target revision's child spec.replicas
    target: int
    config: RollingUpdateConfig
    ready_old: int = 0
    ready_new: int = 0
    in_spec: bool = True
    old_children: tuple[ChildObservation, ...] = ()  # the old children, newest first (old == Σ replicas)

    @property
    def floor(self) -> int:
        return availability_floor(self.target, self.initial_old, self.config.max_unavailable)

    @property
    def ceiling(self) -> int:
        return surge_ceiling(self.target, self.config.max_surge)


def availability_floor(target: int, initial_old: int, max_unavailable: int) -> int:
    """Ready replicas a role keeps during the rollout: ``max(0, min(target, initialOld) - maxUnavailable)``."""
    return max(0, min(target, initial_old) - max_unavailable)


def surge_ceiling(target: int, max_surge: int) -> int:
    """Declared replicas (old + new) a role never exceeds: ``target + maxSurge``."""
    return target + max_surge


def ready_after_drain(ready_old: int, old_after: int, ready_new: int) -> int:
    """Ready replicas left once old is drained to ``old_after`` (unready old replicas go first)."""
    return min(ready_old, old_after) + ready_new


def floor_limited_old(role: RoleState, asked: int) -> int:
    """The lowest old count in ``[asked, old]`` the floor allows (module doc)."""
    if asked >= role.old:
        return role.old  # the planner never raises old; a non-drain keeps it
    # allowed: v >= readyOld (no ready replica removed) or v + readyNew >= F (v < readyOld)
    lowest = min(role.ready_old, max(0, role.floor - role.ready_new))
    return min(role.old, max(asked, lowest))


def kept_running(child: ChildObservation, after: int) -> int:
    """Groups one old child runs once declared at ``after`` replicas (module doc, :func:`old_running`)."""
    live = child.replicas if child.live is None else child.live
    if after >= child.replicas:
        return max(after, live)  # not drained: what runs now, held surge included
    if after == 0:
        return 0
    return after if child.ready >= max(live, child.replicas) else max(after, live)


def old_running(role: RoleState, old_applied: int) -> int:
    """Groups the role's old children run once drained to ``old_applied`` in total (newest first,
    :func:`distribute_drain`); ``old_applied`` itself when the children are not known."""
    if not role.old_children:
        return old_applied
    after = distribute_drain(role.old - old_applied, [c.replicas for c in role.old_children])
    return sum(kept_running(c, a) for c, a in zip(role.old_children, after))


def ceiling_limited_new(role: RoleState, asked: int, old_applied: int) -> int:
    """The highest new count in ``[new, asked]`` the ceiling allows with ``old_applied`` declared
    (the old side counted as :func:`old_running`)."""
    if asked <= role.new:
        return role.new  # the planner never lowers new
    if role.target == 0:
        return asked  # upstream's surge check skips roles without a target (asked == 0 anyway)
    return max(role.new, min(asked, role.ceiling - old_running(role, old_applied)))


def keep_no_orphan(roles: Sequence[RoleState], asked_old: Sequence[int], applied_old: Sequence[int]) -> tuple[int, ...]:
    """Among roles with ``initialOld > 0``: when the planner's step is not mixed (all of them at 0 or
    none) but the applied one is (a held drain kept some above 0), each role the step took from a
    positive count to 0 keeps 1 instead, as the planner's orphan prevention would."""
    live = [i for i, r in enumerate(roles) if r.initial_old > 0]

    def mixed(v: Sequence[int]) -> bool:
        return any(v[i] == 0 for i in live) and any(v[i] > 0 for i in live)

    if mixed(asked_old) or not mixed(applied_old):
        return tuple(applied_old)
    return tuple(1 if i in live and o == 0 and roles[i].old > 0 else o for i, o in enumerate(applied_old))


@dataclass(frozen=True)
class Applied:
    """The step as applied: per-role old and new counts and the roles whose part waits."""

    old: tuple[int, ...]
    new: tuple[int, ...]
    held_drain: tuple[str, ...] = ()  # roles whose drain waits for ready new replicas (floor)
    held_raise: tuple[str, ...] = ()  # roles whose raise waits for the drain (ceiling)


def apply_step(
    roles: Sequence[RoleState], asked_old: Sequence[int], asked_new: Sequence[int], ceiling: bool = True
) -> Applied:
    """Upstream's step ``(asked_old, asked_new)`` limited by the floor, the no-orphan rule and (when
    ``ceiling``) the surge ceiling."""
    old = tuple(floor_limited_old(r, a) for r, a in zip(roles, asked_old))
    old = keep_no_orphan(roles, asked_old, old)
    new = tuple(ceiling_limited_new(r, a, o) if ceiling else max(r.new, a) for r, a, o in zip(roles, asked_new, old))
    held_drain = tuple(r.name for r, a, o in zip(roles, asked_old, old) if o > a)
    held_raise = tuple(r.name for r, a, n in zip(roles, asked_new, new) if n < a)
    return Applied(old, new, held_drain, held_raise)


def distribute_drain(budget: int, replicas_newest_first: Sequence[int]) -> tuple[int, ...]:
    """One role's old replicas per revision (newest first) after draining exactly ``budget``."""
    out = []
    for replicas in replicas_newest_first:
        take = max(0, min(budget, replicas))
        out.append(replicas - take)
        budget -= take
    return tuple(out)
