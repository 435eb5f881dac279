"""Budget-driven update order (``RolloutFirst``, upstream #1018 proposal) and the #717 diagnosis.

Upstream ("ScaleFirst") handles a template change combined with a scale-up by creating the added
ordinals first (partition = old replicas) and touching no old group until enough new tail groups
are ready. On a cluster without spare capacity the new groups never schedule: the #717 deadlock.

``RolloutFirst`` (opt-in) replaces the old groups first and scales up afterwards:

* **Applies** while the observed leader StatefulSet is smaller than the spec (``S < R``), some
  group in ``[P_user, S)`` is not on the target revision and ``MU > 0`` ("phase A"; with
  ``maxUnavailable: 0`` only surge can replace a group, so upstream's order is kept). Otherwise the upstream rule
  (:func:`rolling_update_parameters`) is used unchanged, so once every old group is replaced the
  scale-up proceeds exactly like upstream (Case 3b, then Case 5/3).
* **Old replica count** = the observed ``S``: phase A never changes the StatefulSet's replicas, so
  the old count stays observable across any number of reconciles, crashes and re-runs.
* **Floor** ``F = max(0, min(S, R) - MU)`` (MU scaled against the new R). A group counts toward
  availability when it is ready, whatever its revision or ordinal, so ready updated groups
  (including ready added groups, if any exist) count.
* **Partition**: the lowest ``p' >= P_user`` and ``<= current`` such that the groups still ready
  after admitting ``[p', S)`` -- ready groups below ``p'`` plus ready updated groups at or above
  it -- are at least ``min(F, ready now)``. ``current`` is ``S`` on a template change (a new
  rollout), else the observed partition: the partition never rises within a rollout. Admitting
  a not-ready or already-updated group costs nothing, so a stuck rollout still escapes (#567).
* **Replicas** stay ``S``: no added ordinal is created while old groups still need replacing,
  and ``maxSurge`` is not used in phase A (live groups = S <= R <= R + MS).

Invariants: live groups <= R + MS; if the rollout started with every group ready, ready groups
>= F after every stage (worst case: every admitted old group down at once); the decision is
idempotent (applying it and planning again with the same groups returns the same decision).

**Surge hold** (:func:`hold_surge_for_availability`, both orders; the one place ScaleFirst
deviates from upstream): upstream's surge reclamation ``want(U)`` counts only the not-ready
groups in ``[0, R)`` and ignores that ready surge groups carry availability, so a stage can
delete ready surge groups while the groups replacing them are not ready yet (R=5, MU=2, MS=4:
``oUuuuuuUU`` -> replicas 7 leaves 2 ready < 3). When a decision shrinks the leader StatefulSet,
pulumi-lws keeps the smallest ``replicas`` >= upstream's value (and <= the observed ``S`` and
``R + MS``) whose kept ordinals still hold ``min(max(0, R - MU), ready if nothing is deleted)``
ready groups after the stage. It only delays reclamation; it never adds a group and never
changes the partition.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import replace

from pulumi_lws.lws.rollout.ordinal.algo import (
    Decision,
    RolloutInputs,
    Rule,
    applied,
    is_ready,
    is_ready_updated,
    is_updated,
    rolling_update_parameters,
)

ROLLOUT_FIRST_CASE = "rf"
DEADLOCK_717 = "resource-deadlock-717"
REMEDIES_717 = (
    "Update in two steps: first change spec.leaderWorkerTemplate to the smaller per-group request "
    "with spec.replicas unchanged; once the existing groups have rolled and freed capacity, scale "
    "spec.replicas up.",
    "Raise maxUnavailable above the scale-up delta (maxUnavailable > newReplicas - oldReplicas); in "
    "Ordinal mode with several pending added ordinals use maxUnavailable: 100% (or newReplicas) so "
    "the partition drops to 0 at once.",
    "Or opt into the budget-driven order: annotation pulumi-lws.io/update-order: RolloutFirst "
    "(replace old groups first, then scale up).",
)


def pending_old(inp: RolloutInputs) -> list[int]:
    """Ordinals in ``[P_user, min(S, R))`` not on the target revision (all of them on a template change)."""
    if inp.sts is None:
        return []
    hi = min(inp.sts.replicas, inp.replicas)
    if inp.template_changed:
        return list(range(inp.user_partition, hi))
    return [i for i in range(inp.user_partition, hi) if not is_updated(inp.states, i)]


def rollout_first_applies(inp: RolloutInputs) -> bool:
    """Phase A: scale-up not applied yet (S < R), old groups still to replace, and MU > 0.

    With ``maxUnavailable`` 0 no old group may go down before a replacement is ready, which only
    surge capacity can provide: the upstream order (added ordinals first) is used.
    """
    return (
        inp.sts is not None and inp.max_unavailable > 0 and inp.sts.replicas < inp.replicas and bool(pending_old(inp))
    )


def availability_floor(old_replicas: int, replicas: int, max_unavailable: int) -> int:
    """``max(0, min(oldReplicas, R) - MU)``: the #1018 floor."""
    return max(0, min(old_replicas, replicas) - max_unavailable)


def ready_after(inp: RolloutInputs, partition: int) -> int:
    """Groups still ready after admitting ``[partition, S)``: ready below it + ready updated at or above.

    On a template change nothing is updated yet (the target revision is new).
    """
    s = inp.sts.replicas if inp.sts else 0
    below = sum(1 for i in range(min(partition, s)) if is_ready(inp.states, i))
    if inp.template_changed:
        return below
    return below + sum(1 for i in range(partition, s) if is_ready_updated(inp.states, i))


def rollout_first_partition(inp: RolloutInputs) -> int:
    """Lowest partition in ``[P_user, current]`` keeping ``ready_after >= min(F, ready_after(current))``."""
    assert inp.sts is not None
    s = inp.sts.replicas
    current = s if inp.template_changed else min(inp.sts.partition, s)
    current = max(current, inp.user_partition)
    floor = availability_floor(s, inp.replicas, inp.max_unavailable)
    need = min(floor, ready_after(inp, current))
    p = current
    while p - 1 >= inp.user_partition and ready_after(inp, p - 1) >= need:
        p -= 1
    return p


def ready_kept(states: str, partition: int, replicas: int) -> int:
    """Groups still ready after applying ``(partition, replicas)``, worst case.

    Among the kept ordinals ``[0, replicas)``: ready groups below the partition plus ready+updated
    groups at or above it (an admitted old group goes down). The same worst case as
    :func:`pulumi_lws.lws.rollout.ordinal.predict.apply_decision`; str ops, O(replicas) in C.
    """
    cut = max(0, min(partition, replicas))
    head = states[:cut]
    return head.count("U") + head.count("o") + states.count("U", cut, max(cut, replicas))


def hold_surge_for_availability(
    d: Decision, states: str, replicas: int, max_unavailable: int, max_surge: int, sts_replicas: int | None
) -> Decision:
    """pulumi-lws's guard on upstream's surge reclamation: never delete ready groups below the floor.

    Applies only when ``d`` shrinks the leader StatefulSet (``d.replicas < sts_replicas``). With
    ``F = max(0, R - MU)`` and ``need = min(F, ready_kept(states, d.partition, S))`` (what the
    stage would keep ready if it deleted nothing), the result's replicas is the smallest value
    ``r >= d.replicas`` with ``ready_kept(states, d.partition, r) >= need``, capped at
    ``min(S, R + MS)`` (never above upstream's value when the cap is below it).

    Invariants: ``d.replicas <= result.replicas <= max(d.replicas, min(S, R + MS))``: the guard
    only delays reclamation, never adds a group and never breaks the surge bound; the partition and
    the case are unchanged; when nothing ready would drop below the floor, ``d`` is returned as is
    (upstream-exact). Deleting not-ready groups is always allowed; when fewer than ``F`` groups are
    ready anyway (a rollout that did not start healthy, a fault), only the ready ones are kept.
    """
    if sts_replicas is None or d.replicas >= sts_replicas:
        return d
    cap = max(d.replicas, min(sts_replicas, replicas + max_surge))
    need = min(max(0, replicas - max_unavailable), ready_kept(states, d.partition, sts_replicas))
    # ready_kept is non-decreasing in r: bisect [d.replicas, cap] (O(S log MS) in C, no per-ordinal loop)
    r = bisect_left(range(d.replicas, cap), need, key=lambda n: ready_kept(states, d.partition, n)) + d.replicas
    return d if r == d.replicas else replace(d, replicas=r)


def hold_surge(rule: Rule) -> Rule:
    """``rule`` followed by :func:`hold_surge_for_availability` on the inputs it was called with."""

    def guarded(inp: RolloutInputs) -> Decision:
        d = rule(inp)
        s = inp.sts.replicas if inp.sts is not None else None
        return hold_surge_for_availability(d, inp.states, inp.replicas, inp.max_unavailable, inp.max_surge, s)

    guarded.__name__ = guarded.__qualname__ = f"hold_surge({rule.__name__})"
    guarded.__doc__ = f"{rule.__name__} with pulumi-lws's surge hold (:func:`hold_surge_for_availability`)."
    return guarded


#: ScaleFirst as pulumi-lws applies it: upstream's rule plus the surge hold.
scale_first_parameters: Rule = hold_surge(rolling_update_parameters)


def rollout_first_parameters(inp: RolloutInputs) -> Decision:
    """The RolloutFirst rule: phase A while it applies, ScaleFirst (upstream + surge hold) otherwise.

    Phase A never shrinks the StatefulSet, so the surge hold only acts on the ScaleFirst part.
    """
    if not rollout_first_applies(inp):
        return scale_first_parameters(inp)
    assert inp.sts is not None
    return Decision(rollout_first_partition(inp), inp.sts.replicas, ROLLOUT_FIRST_CASE)


def rule_for(update_order: str) -> Rule:
    """The decision rule ``plan_ordinal`` and the prediction model use for an update order.

    ``ScaleFirst`` = upstream's :func:`rolling_update_parameters` plus the surge hold;
    ``RolloutFirst`` = :func:`rollout_first_parameters` (which includes the surge hold).
    """
    return rollout_first_parameters if update_order == "RolloutFirst" else scale_first_parameters


def surge_held(inp: RolloutInputs, d: Decision) -> int:
    """Surge groups the guard keeps at the fixed point ``d`` that upstream would reclaim now (0 = none).

    Upstream's single call on the state after applying ``d`` (groups unchanged) vs ``d.replicas``.
    """
    return max(0, d.replicas - rolling_update_parameters(applied(inp, d)).replicas)
