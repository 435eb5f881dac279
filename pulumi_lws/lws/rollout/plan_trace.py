"""LeaderWorkerSet's exact ``pulumi-lws plan`` rows (pure): the readiness-ordered Ordinal model
(:mod:`pulumi_lws.lws.rollout.ordinal.predict`) and the Deployment + group-replacement-gate Hash
model (:mod:`pulumi_lws.lws.rollout.hash.predict`), as a :class:`~pulumi_lws.core.contract.trace.Trace`.

Reached by the shells through the workload's optional ``predict_trace`` capability
(``LeaderWorkerSetWorkload.predict_trace``); ``pulumi-lws plan`` documents the row semantics
(:mod:`pulumi_lws.cli.plan`). Every other API gets the generic prediction.

Invariant: OLD and NEW are checked first (:func:`check_pair`: same LWS, NEW a valid update of OLD,
budgets that resolve); :class:`~pulumi_lws.core.contract.trace.PlanInputError` or ``SpecError`` otherwise.
"""

from __future__ import annotations

from dataclasses import replace

from pulumi_lws.core.contract.trace import GroupCell, PlanInputError, Trace, TraceRow
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.revision import revision_key
from pulumi_lws.lws.rollout.hash import predict as HP
from pulumi_lws.lws.rollout.ordinal.algo import LeaderSts, RolloutInputs
from pulumi_lws.lws.rollout.ordinal.cases import describe_case
from pulumi_lws.lws.rollout.ordinal.predict import (
    ModelStep,
    available,
    grouping_note,
    is_complete,
    is_settled,
    walk,
    wave_ends,
    waves_note,
)


def check_pair(old: LeaderWorkerSet, new: LeaderWorkerSet) -> None:
    """OLD and NEW must be the same LWS, NEW a valid update of OLD (the API server's update rules:
    immutable fields; :class:`SpecError` naming the field), with budgets that scale."""
    if old.name != new.name:
        raise PlanInputError(f"OLD and NEW name different LeaderWorkerSets ({old.name!r} vs {new.name!r})")
    new.validate(old)
    try:
        for lws in (old, new):
            lws.max_unavailable(), lws.max_surge()
    except ValueError as exc:
        raise PlanInputError(f"invalid rollout budget: {exc}") from None


def initial_inputs(old: LeaderWorkerSet, new: LeaderWorkerSet) -> RolloutInputs:
    """Everything on OLD and ready; the leader StatefulSet at rest for OLD; NEW's budgets."""
    check_pair(old, new)
    if new.spec.group_identity != "Ordinal":
        raise PlanInputError(f"groupIdentity {new.spec.group_identity}: use build_hash_trace")
    mu, ms = new.max_unavailable(), new.max_surge()
    r0 = old.replicas
    changed = revision_key(old) != revision_key(new)
    return RolloutInputs(
        replicas=new.replicas,
        max_unavailable=mu,
        max_surge=ms,
        user_partition=new.user_partition(),
        sts=LeaderSts(r0, min(old.user_partition(), r0), r0),
        template_changed=changed,
        states=("o" if changed else "U") * r0,
    )


def cells(states: str, replicas: int) -> tuple[GroupCell, ...]:
    return tuple(GroupCell(id=str(i), state=c, surge=i >= replicas) for i, c in enumerate(states))


def initial_row(inp: RolloutInputs, key: str) -> TraceRow:
    """OLD's groups drawn against OLD's own revision (``key``), every one updated and ready, as
    ``simulate``'s first row and the upstream tables' stage 1."""
    s = inp.sts.replicas if inp.sts else 0
    return TraceRow(
        time=0,
        replicas=s,
        partition=inp.sts.partition if inp.sts else None,
        groups=cells(before(inp.states), inp.replicas),
        live=s,
        available=available(inp.states, s, inp.replicas),
        revision=key,
        note="before: every OLD group ready",
    )


def before(states: str) -> str:
    """OLD's groups as its own rows show them: ready ones updated to OLD's revision."""
    return states.replace("o", "U").replace("x", "u")


def step_row(n: int, step: ModelStep, key: str, first: bool, template_changed: bool) -> TraceRow:
    d, r = step.decision, step.inputs.replicas
    what = describe_case("2" if first and template_changed else d.case)
    note = ("apply NEW" if first else step.note) + (f": {what}" if what else "")
    if is_complete(step.inputs, d):
        note += "; rollout complete"
    elif is_settled(step.inputs, d):
        note += "; settled: user partition keeps the surge"
    return TraceRow(
        time=n,
        replicas=d.replicas,
        partition=d.partition,
        groups=cells(step.states, r),
        live=d.replicas,
        available=available(step.states, d.replicas, r),
        revision=key,
        note=note,
        case=d.case,
    )


def build_trace(old: LeaderWorkerSet, new: LeaderWorkerSet, order: str) -> Trace:
    """The predicted rows for OLD -> NEW with ``order`` (ignored in Hash mode)."""
    check_pair(old, new)
    if new.spec.group_identity == "Hash":
        return build_hash_trace(old, new)
    inp = initial_inputs(old, new)
    key = revision_key(new)
    w = walk(inp, order)  # group by group, else in waves (predict.prediction)
    steps = w.steps
    rows = [initial_row(inp, revision_key(old))] + [
        step_row(n, s, key, n == 1, inp.template_changed) for n, s in numbered(steps, w.long)
    ]
    last = steps[-1] if steps else None
    done = last is not None and (is_complete(last.inputs, last.decision) or is_settled(last.inputs, last.decision))
    trace = Trace(rows=rows, converged=done)
    if not done:
        trace.blocked = "prediction cut short" if not w.finished else "no group left to become ready"
    if w.long:
        trace.warnings = [waves_note(w.to_roll), grouping_note(len(steps) - 1, len(rows) - 2)]
    return trace


def numbered(steps: list[ModelStep], long: bool) -> list[tuple[int, ModelStep]]:
    """``steps`` numbered from 1 (the planned stage); a long walk's steps after the first grouped
    into waves (:func:`~pulumi_lws.lws.rollout.ordinal.predict.wave_ends`), each shown as its last
    step under that step's own number, its note counting the stages and the groups that became
    ready in them."""
    if not long:
        return list(enumerate(steps, 1))
    out, start = [(1, steps[0])], 1
    for end in (1 + i for i in wave_ends(len(steps) - 1)):
        ready = sum(s.woke for s in steps[start : end + 1])
        out.append((end + 1, replace(steps[end], note=f"{end + 1 - start} stages: {ready} groups ready")))
        start = end + 1
    return out


def hash_start(old: LeaderWorkerSet, new: LeaderWorkerSet) -> HP.ModelState:
    """OLD's groups ``#1``..``#R0``, all admitted and ready, on NEW's revision only when the
    template did not change; the Deployment at rest; NEW's replicas, budgets and policy."""
    same = revision_key(old) == revision_key(new)
    groups = [HP.ModelGroup(id=f"#{n}", new=same, ready=True, gated=False) for n in range(1, old.replicas + 1)]
    cfg = new.spec.rollout_strategy.rolling_update_configuration
    return HP.initial_state(groups, new.replicas, cfg.max_surge, cfg.max_unavailable, new.spec.group_replacement_policy)


def hash_row(n: int, state: HP.ModelState, key: str, note: str) -> TraceRow:
    cells = tuple(GroupCell(id=g.id, state=g.char, detail=g.detail) for g in state.groups)
    return TraceRow(
        time=n,
        replicas=state.replicas,
        partition=None,
        groups=cells,
        live=len(state.live()),
        available=min(state.replicas, state.available),
        revision=key,
        note=note,
    )


def build_hash_trace(old: LeaderWorkerSet, new: LeaderWorkerSet) -> Trace:
    """Predicted rows for a Hash-mode OLD -> NEW: the before row, then one row per model stage."""
    start, key = hash_start(old, new), revision_key(new)
    steps = HP.predict(start, next_id=old.replicas + 1)
    changed = revision_key(old) != key
    first = hash_row(0, start, revision_key(old), "before: every OLD group ready")
    first_cells = tuple(replace(c, state=before(c.state)) for c in first.groups)  # against OLD's own revision
    rows = [replace(first, replicas=old.replicas, groups=first_cells)]
    for n, state in enumerate(steps, 1):
        note = (
            ("apply NEW" + (": template changed: groups replaced on the new revision" if changed else ""))
            if n == 1
            else state.note
        )
        rows.append(hash_row(n, state, key, note + ("; rollout complete" if HP.is_done(state) else "")))
    done = bool(steps) and HP.is_done(steps[-1])
    trace = Trace(rows=rows, converged=done)
    if not done:
        trace.blocked = "no group left to become ready" if HP.finished(steps) else "prediction cut short"
    return trace
