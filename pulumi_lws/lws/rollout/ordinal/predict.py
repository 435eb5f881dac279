"""A pure model of the cluster's side of an Ordinal rollout, and stage prediction on top of it.

The model is what ``pulumi-lws plan``, ``Stage.remaining`` and the property tests share:

* :func:`apply_decision` -- what the StatefulSet controller does with a stage, worst case: every
  admitted group (ordinal >= partition) not on the target revision goes down at once and comes
  back on the target (``u``); ordinals >= replicas disappear; new ordinals are created on the
  target (``u``) when admitted, else on the old revision (``x``).
* :func:`ready_order` -- "groups become ready in rollout order": freshly created groups first
  (ascending), then replaced groups from the highest ordinal down (StatefulSet update order).
* :func:`predict` -- alternate plan (fixed point of :func:`~pulumi_lws.lws.rollout.budget.rule_for`,
  the same rule ``plan_ordinal`` applies, surge hold included) and one readiness change until the
  rollout is complete, recording a :class:`ModelStep` per readiness change.
* :func:`predict_waves` -- the same walk for fleets too large to walk group by group: after each
  stage every group it waits for becomes ready at once (the groups that move together), so a
  10,000-group rollout is a handful of stages, each one a fixed point of the same rule on an
  observation the cluster can really show. :func:`walk` picks the walk (for :func:`prediction`
  and ``plan``'s rows): per group when the groups still to roll fit :data:`MAX_MODEL_STEPS`, else
  in waves; its work is bounded either way (below), and when a walk is cut it says so
  (:attr:`Prediction.finished`), never an empty "first 0 stages".

**Long walks.** At maxUnavailable 1 / maxSurge 0 each wave moves the partition by one: 1,000
groups are ~1,000 waves. The wave walk goes on past ``MAX_MODEL_STEPS`` stages while its work
(groups x fixed points) stays within :data:`MAX_WORK` (each fixed point is a few string operations
on the groups: ~0.1 ms at 1,000 groups), and a walk that ends there is shown in at most
:data:`MAX_WAVES` entries, each the exact state the last of its consecutive stages leaves (so every
entry is a stage the walk reaches, within the budgets, and the last one is the walk's end); a note
says so (:func:`grouping_note`). A walk cut at ``MAX_WORK`` is shown as before: its first
``MAX_MODEL_STEPS`` stages, "prediction stopped after ...". A walk that fits ``MAX_MODEL_STEPS``
is unchanged, stage by stage.

Availability in this model (and in the property tests): ``available`` = ready groups among the
live ordinals ``[0, S)``, surge ordinals included (they serve traffic), at most ``R``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pulumi_lws.core.contract.stage import PredictedStage
from pulumi_lws.lws.rollout.budget import rule_for
from pulumi_lws.lws.rollout.ordinal.algo import Decision, LeaderSts, RolloutInputs, fixed_point, state_at

MAX_MODEL_STEPS = 400
MAX_WORK = 5_000_000  # groups x fixed points of a wave walk past MAX_MODEL_STEPS: 2,000 groups at one per wave fit
MAX_WAVES = 50  # entries a walk longer than MAX_MODEL_STEPS is shown in
_ADMIT = str.maketrans({"-": "u", "o": "u", "x": "u"})
_WAKE = str.maketrans({"u": "U", "x": "o"})


@dataclass(frozen=True)
class ModelStep:
    """One readiness change and the stage planned for it (``decision`` None = initial state)."""

    inputs: RolloutInputs  # what the planner observed
    decision: Decision
    states: str  # groups after the stage was applied
    note: str = ""
    woke: int = 0  # groups that became ready together before this stage (the waves' walk)


def apply_decision(inp: RolloutInputs, d: Decision) -> tuple[RolloutInputs, str]:
    """Apply ``d`` (worst case) and return the next observation (same groups otherwise)."""
    old_states = inp.states
    live = old_states[: inp.sts.replicas if inp.sts else 0]
    has_old = inp.template_changed or "o" in live or "x" in live
    # str ops instead of a per-ordinal loop (the model runs up to MAX_MODEL_STEPS times per plan):
    # below the partition an absent ordinal is created old ("x") if any old group exists, else "u";
    # at or above it every absent or old ordinal comes back on the target, not ready ("u").
    padded = old_states[: d.replicas].ljust(d.replicas, "-")
    cut = min(max(d.partition, 0), d.replicas)
    states = padded[:cut].replace("-", "x" if has_old else "u") + padded[cut:].translate(_ADMIT)
    nxt = replace(inp, sts=LeaderSts(d.replicas, d.partition, inp.replicas), template_changed=False, states=states)
    return nxt, states


def ready_order(states: str, partition: int, created: frozenset[int]) -> list[int]:
    """Not-ready live groups in the order they are assumed to become ready."""
    fresh = sorted(i for i, c in enumerate(states) if c in "ux" and i in created)
    replaced = sorted((i for i, c in enumerate(states) if c in "ux" and i not in created), reverse=True)
    return fresh + replaced


def become_ready(states: str, i: int) -> str:
    c = states[i]
    return states[:i] + ("U" if c == "u" else "o") + states[i + 1 :]


def available(states: str, live: int, replicas: int) -> int:
    """Ready groups among the live ordinals ``[0, live)``, at most ``replicas``."""
    window = states[: max(0, live)]
    return min(replicas, window.count("U") + window.count("o"))


def _all_ready_updated(states: str, lo: int, hi: int) -> bool:
    """Every ordinal in ``[lo, hi)`` is ready+updated (positions past the string are absent)."""
    if hi <= lo:
        return True
    return hi <= len(states) and states.count("U", lo, hi) == hi - lo


def next_ready(states: str, created: set[int] | frozenset[int]) -> int | None:
    """``ready_order(states, _, created)[0]`` without building the whole order (O(|created|) + rfind)."""
    fresh = [i for i in created if i < len(states) and states[i] in "ux"]
    if fresh:
        return min(fresh)
    end = len(states)
    while True:
        j = max(states.rfind("u", 0, end), states.rfind("x", 0, end))
        if j < 0 or j not in created:
            return None if j < 0 else j
        end = j


def is_complete(inp: RolloutInputs, d: Decision) -> bool:
    """No rollout work remains: the decision is terminal and [P_user, R) is all ready+updated."""
    return (
        not inp.template_changed
        and d.partition == inp.user_partition
        and d.replicas == inp.replicas
        and _all_ready_updated(inp.states, inp.user_partition, inp.replicas)
    )


def is_settled(inp: RolloutInputs, d: Decision) -> bool:
    """Nothing moves until the spec changes: [P_user, R) all ready+updated at the user partition.

    Differs from :func:`is_complete` only when upstream keeps surge groups because a user
    partition > 0 keeps ``P_user`` groups old (``U >= P_user``; reference §1.6 "partition plus
    maxSurge"): the burst stays until the partition is reset to 0.
    """
    return (
        not inp.template_changed
        and d.partition == inp.user_partition
        and _all_ready_updated(inp.states, inp.user_partition, inp.replicas)
        and inp.sts is not None
        and (inp.sts.replicas, inp.sts.partition) == (d.replicas, d.partition)
    )


def at_rest_from_here(inp: RolloutInputs, d: Decision) -> bool:
    """After decision ``d`` every later call is upstream's Case 3 (partition 0, S == R), whatever
    readiness does: no user partition and the decision already has the final shape. Nothing is
    left to predict then (and a 10,000-group creation need not be walked group by group)."""
    return inp.user_partition == 0 and d.partition == 0 and d.replicas == inp.replicas


def predict(
    inp: RolloutInputs,
    update_order: str = "ScaleFirst",
    max_steps: int = MAX_MODEL_STEPS,
    first: Decision | None = None,
) -> list[ModelStep]:
    """Stages from ``inp`` assuming groups become ready in rollout order, one readiness change per step.

    ``first``: the fixed point for ``inp`` when the caller already has it (computed once per reconcile)."""
    rule = rule_for(update_order)
    steps: list[ModelStep] = []
    created: set[int] = set()
    cur = inp
    note = ""
    for _ in range(max_steps):
        d = first if first is not None and cur is inp else fixed_point(cur, rule)[0]
        before = cur.states
        live_before = cur.sts.replicas if cur.sts else 0
        cur, states = apply_decision(cur, d)
        created |= {i for i in range(live_before, d.replicas) if state_at(before, i) == "-"}
        created = {i for i in created if i < d.replicas}
        steps.append(ModelStep(cur, d, states, note))
        if is_complete(cur, d) or is_settled(cur, d):
            break
        i = next_ready(states, created)  # == ready_order(states, d.partition, created)[0]
        if i is None:
            break  # nothing can change any more: blocked
        cur = replace(cur, states=become_ready(states, i))
        created.discard(i)
        note = f"R-{i} ready"
    return steps


def finished(steps: list[ModelStep]) -> bool:
    """Whether a prediction reached the end of the rollout (False: cut at ``MAX_MODEL_STEPS``)."""
    if not steps:
        return True
    last = steps[-1]
    return (
        len(steps) < MAX_MODEL_STEPS
        or is_complete(last.inputs, last.decision)
        or is_settled(last.inputs, last.decision)
    )


def predict_waves(
    inp: RolloutInputs,
    update_order: str = "ScaleFirst",
    max_steps: int = MAX_MODEL_STEPS,
    first: Decision | None = None,
) -> list[ModelStep]:
    """Stages from ``inp`` assuming every group a stage waits for becomes ready together (one
    :class:`ModelStep` per stage). Same model as :func:`predict` otherwise; O(stages x groups) in C
    string operations instead of O(groups) fixed points."""
    return _waves(inp, update_order, max_steps, first, 0)[0]


def _waves(
    inp: RolloutInputs, update_order: str, max_steps: int, first: Decision | None, max_work: int
) -> tuple[list[ModelStep], bool]:
    """:func:`predict_waves`, going on past ``max_steps`` stages while the work (the groups of each
    fixed point, summed) stays within ``max_work``; and whether the walk ended (complete, settled,
    blocked) rather than at a bound."""
    rule = rule_for(update_order)
    steps: list[ModelStep] = []
    cur = inp
    note, woke = "", 0
    work = 0
    while True:
        width = max(len(cur.states), cur.replicas, 1)
        if len(steps) >= max_steps and work + width > max_work:
            return steps, False
        work += width
        d = first if first is not None and cur is inp else fixed_point(cur, rule)[0]
        cur, states = apply_decision(cur, d)
        steps.append(ModelStep(cur, d, states, note, woke))
        if is_complete(cur, d) or is_settled(cur, d):
            return steps, True
        woken = states.translate(_WAKE)
        if woken == states:
            return steps, True  # nothing can change any more: blocked
        woke = states.count("u") + states.count("x")
        note = f"{woke} groups ready"
        cur = replace(cur, states=woken)


@dataclass(frozen=True)
class Walk:
    """The model steps of a prediction (the first one the planned stage) and how they were walked."""

    steps: list[ModelStep]
    finished: bool  # the walk reached the end of the rollout (or a state where nothing changes)
    waves: bool  # in waves (:func:`predict_waves`), not group by group
    to_roll: int  # groups not yet ready+updated when planning (why waves were chosen)
    long: bool = False  # longer than MAX_MODEL_STEPS and finished: shown in at most MAX_WAVES entries


def walk(inp: RolloutInputs, update_order: str = "ScaleFirst", first: Decision | None = None) -> Walk:
    """The steps from ``inp`` (module doc): group by group while the groups still to roll fit
    ``MAX_MODEL_STEPS`` and that walk ends within them; else in waves, past ``MAX_MODEL_STEPS``
    within ``MAX_WORK`` (a walk cut there keeps its first ``MAX_MODEL_STEPS`` stages, as before
    the bound). The bounds are read at each call (tests lower them)."""
    to_roll = groups_to_roll(inp)
    if to_roll <= MAX_MODEL_STEPS:
        steps = predict(inp, update_order, MAX_MODEL_STEPS, first)
        if finished(steps):
            return Walk(steps, True, False, to_roll)
    steps, ended = _waves(inp, update_order, MAX_MODEL_STEPS, first, MAX_WORK)
    if len(steps) > MAX_MODEL_STEPS and ended:
        return Walk(steps, True, True, to_roll, long=True)
    steps = steps[:MAX_MODEL_STEPS]  # at most the walk of the first MAX_MODEL_STEPS, as before MAX_WORK
    return Walk(steps, finished(steps), True, to_roll)


def wave_ends(n: int, rows: int | None = None) -> list[int]:
    """The index of the last of each of at most ``rows`` (:data:`MAX_WAVES`) groups of consecutive
    items among ``n``, in order; the last group ends at ``n - 1``. Every index when ``n <= rows``."""
    rows = MAX_WAVES if rows is None else max(1, rows)
    if n <= rows:
        return list(range(n))
    per = -(-n // rows)
    return [min(i, n) - 1 for i in range(per, n + per, per)]


def grouping_note(walked: int, shown: int) -> str:
    """What a reader of a long walk's ``shown`` entries must know (module doc, "Long walks")."""
    per = -(-walked // max(1, shown))
    return (
        f"{walked:,} predicted stages exceed the {MAX_MODEL_STEPS} shown one by one: each one shown groups up "
        f"to {per} consecutive stages (the state the last of them leaves)"
    )


def waves_note(to_roll: int) -> str:
    """Why a prediction is in waves (:attr:`Prediction.waves`)."""
    return (
        f"prediction in waves: {to_roll:,} groups to roll exceed the group-by-group walk's "
        f"{MAX_MODEL_STEPS} steps, so the groups each stage waits for become ready together"
    )


@dataclass(frozen=True)
class Prediction:
    """The stages after the planned one and how they were predicted."""

    stages: tuple[PredictedStage, ...]
    finished: bool  # the walk reached the end of the rollout (or a state where nothing changes)
    waves: bool = False  # predicted in waves (:func:`predict_waves`), not group by group
    to_roll: int = 0  # groups not yet ready+updated when planning (why waves were chosen)
    walked: int = 0  # stages of a walk longer than MAX_MODEL_STEPS, ``stages`` its waves (0: not one)

    def notes(self) -> tuple[str, ...]:
        """What a reader must know about this prediction (empty when it is exact and complete)."""
        out = []
        if self.waves:
            out.append(waves_note(self.to_roll))
        if self.walked:
            out.append(grouping_note(self.walked, len(self.stages)))
        if not self.finished:
            out.append(
                f"prediction stopped after {len(self.stages)} stages ({MAX_MODEL_STEPS} model steps); "
                f"the rollout continues past the last one shown"
            )
        return tuple(out)


def groups_to_roll(inp: RolloutInputs) -> int:
    """A lower bound on the readiness changes left: every group of ``[0, max(R, S))`` not yet
    ready+updated becomes ready at least once before the rollout completes."""
    live = max(inp.replicas, inp.sts.replicas if inp.sts else 0)
    return live - inp.states.count("U", 0, live)


def prediction(inp: RolloutInputs, update_order: str = "ScaleFirst") -> Prediction:
    """Future stages after the one planned for ``inp`` (one per change of (replicas, partition)).

    Group by group (:func:`predict`) while the groups still to roll fit ``MAX_MODEL_STEPS``; in
    waves (:func:`predict_waves`) past that, or when the group-by-group walk was cut (:func:`walk`;
    a walk longer than ``MAX_MODEL_STEPS`` in at most ``MAX_WAVES`` stages)."""
    first, _trace = fixed_point(inp, rule_for(update_order))
    if at_rest_from_here(inp, first):
        return Prediction(settling(inp, first), True)
    w = walk(inp, update_order, first)
    stages = _stage_changes(w.steps)
    if not w.long:
        return Prediction(stages, w.finished, w.waves, w.to_roll)
    return Prediction(tuple(stages[i] for i in wave_ends(len(stages))), True, True, w.to_roll, len(stages))


def settling(inp: RolloutInputs, d: Decision) -> tuple[PredictedStage, ...]:
    """The one stage left when ``d`` already has the final shape (:func:`at_rest_from_here`) but
    some of its groups are not ready and updated yet — a creation, a scale-up: every group ready
    (``complete``), as the other APIs predict it. None when every group already is."""
    if inp.states.count("U", 0, d.replicas) >= d.replicas:
        return ()
    return (PredictedStage(d.replicas, d.partition, "U" * d.replicas, complete=True),)


def _stage_changes(steps: list[ModelStep]) -> tuple[PredictedStage, ...]:
    out: list[PredictedStage] = []
    last = (steps[0].decision.replicas, steps[0].decision.partition) if steps else None
    for step in steps[1:]:
        key = (step.decision.replicas, step.decision.partition)
        if key != last:
            out.append(PredictedStage(step.decision.replicas, step.decision.partition, step.states))
            last = key
    return tuple(out)


def remaining_stages(inp: RolloutInputs, update_order: str = "ScaleFirst") -> tuple[tuple[PredictedStage, ...], bool]:
    """``prediction(inp)`` as ``(stages, finished)``."""
    p = prediction(inp, update_order)
    return p.stages, p.finished
