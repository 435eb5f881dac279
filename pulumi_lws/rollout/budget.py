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
"""
from __future__ import annotations

from dataclasses import replace

from pulumi_lws.rollout.ordinal_algo import (
    Decision, RolloutInputs, is_ready, is_ready_updated, is_updated, rolling_update_parameters,
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
    return (inp.sts is not None and inp.max_unavailable > 0 and inp.sts.replicas < inp.replicas
            and bool(pending_old(inp)))


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


def rollout_first_parameters(inp: RolloutInputs) -> Decision:
    """The RolloutFirst rule: phase A while it applies, the upstream rule otherwise."""
    if not rollout_first_applies(inp):
        return rolling_update_parameters(inp)
    assert inp.sts is not None
    return Decision(rollout_first_partition(inp), inp.sts.replicas, ROLLOUT_FIRST_CASE)


def rule_for(update_order: str):
    """The decision rule for an update order (``ScaleFirst`` = upstream)."""
    return rollout_first_parameters if update_order == "RolloutFirst" else rolling_update_parameters


def with_states(inp: RolloutInputs, states: str) -> RolloutInputs:
    return replace(inp, states=states)
