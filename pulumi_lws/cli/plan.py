"""``pulumi-lws plan OLD.yaml NEW.yaml [--name NAME] [--diff] [--format table|markdown|json] [--update-order ORDER]``.

Predicts the stages of changing a workload (LeaderWorkerSet, ModelServing, any kind the registry
models) from OLD to NEW, starting from every OLD group ready. OLD and NEW may be multi-document
files (:mod:`pulumi_lws.cli.documents`): documents that are not a workload (Service, HPA, ...)
are ignored; a file with several workloads needs ``--name``. NEW must be a valid update of OLD
(``workload.validate_update(new, old)``: immutable fields such as subGroupSize,
podTerminationPolicy, groupIdentity, scheduling), as for ``simulate`` and the component. When the
two workload documents are equal the plan is "no changes" (exit 0).

How the rows are predicted (:data:`PREDICTORS`, by the workload's kind):

* **generic** (every API, ModelServing included: :func:`generic_trace`): OLD is converged on the
  embedded cluster (the warm-up of ``simulate --from OLD --to NEW``); the first row is that
  state as the workload's ``trace_view`` shows it, the second the first reconcile of NEW on it
  (``Stage.groups``), then one row per ``Stage.remaining`` entry (the planner's own prediction:
  the groups each stage waits for become ready together; repeated states dropped). Descriptions
  are derived from the change between rows (:mod:`pulumi_lws.sim.narrate`), as in ``simulate``.
  A ``PredictedStage`` carries one char per declared group and no group ids, so predicted rows
  number the groups by position: exact while the ordinals stay dense (an image change at a fixed
  replica count, the seed's tables); after a surge is reclaimed the positions are the remaining
  groups in ordinal order.
* **LeaderWorkerSet** keeps its exact models (below).
Row descriptions are plain words (:mod:`pulumi_lws.lws.rollout.ordinal.cases`); the JSON keeps
the planner's ``case`` id. ``--diff`` then prints the per-object diff of the next ``pulumi up``
(:mod:`pulumi_lws.cli.diff`).

* Ordinal: groups become ready in rollout order (freshly created groups first, then replaced
  groups from the highest ordinal down; :mod:`pulumi_lws.lws.rollout.ordinal.predict`). One row per readiness
  change; each row shows the stage the planner applies for it (the fixed point, so upstream's
  transient Case-2 stage is folded into the first row). ``Live`` = leader replicas present
  (``stage.replicas``); ``Available`` = ready groups among the live ordinals, surge included, at
  most ``R`` (the quantity ``maxUnavailable`` bounds).
* Hash: the Deployment + group-replacement-gate model (:mod:`pulumi_lws.lws.rollout.hash.predict`),
  groups becoming ready in creation order. Group columns ``G-#1``, ``G-#2``... in creation order
  (OLD's groups first); 🔒 gated, 🗑️ terminating. ``Replicas`` = the Deployment's
  ``spec.replicas``; ``Live`` = leaders not being deleted (gated ones included); ``Available`` =
  ready groups among them, at most ``R``. ``--update-order`` does not apply.

Exit status: 0 when the prediction completes (or nothing changes), 1 when it ends blocked, 2 on
invalid input (either file, or an update the API server would reject).
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from pulumi_lws.cli import exit_codes as X
from pulumi_lws.cli.documents import one_workload
from pulumi_lws.core.control import PAUSED_ANNOTATION
from pulumi_lws.core.stage import PredictedStage, Stage
from pulumi_lws.core.trace import GroupCell, Trace, TraceRow, format_table, rows_changed
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.reconcile import UPDATE_ORDER_ANNOTATION
from pulumi_lws.lws.revision import revision_key
from pulumi_lws.lws.rollout.hash import predict as HP
from pulumi_lws.lws.rollout.ordinal.cases import describe_case
from pulumi_lws.lws.rollout.ordinal.planner import LeaderSts, RolloutInputs
from pulumi_lws.lws.rollout.ordinal.predict import (
    MAX_MODEL_STEPS,
    ModelStep,
    available,
    finished,
    groups_to_roll,
    is_complete,
    is_settled,
    predict,
    predict_waves,
)
from pulumi_lws.workloads import Workload

FORMATS = ("table", "markdown", "json")
ORDERS = ("ScaleFirst", "RolloutFirst")


class PlanInputError(ValueError):
    """OLD/NEW are valid workloads but cannot be planned together."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "plan", help="predict the rollout stages of changing a LeaderWorkerSet or ModelServing from OLD to NEW",
        description="Predict the stages (controller replicas/partition and group states) of changing a "
                    "workload (LeaderWorkerSet, ModelServing) from OLD.yaml to NEW.yaml, starting with every "
                    "OLD group ready and assuming groups become ready in rollout order (LeaderWorkerSet "
                    "Ordinal; ModelServing ServingGroups and roles) or creation order (Hash).")
    parser.add_argument("old", metavar="OLD.yaml", help="the workload as deployed now (other kinds in the file are ignored)")
    parser.add_argument("new", metavar="NEW.yaml", help="the workload to roll out")
    parser.add_argument("--name", metavar="NAME", help="the workload to plan when a file holds several")
    parser.add_argument("--diff", action="store_true",
                        help="also print a unified per-object diff of the next pulumi up (the objects NEW registers "
                             "against those OLD's converged fleet declares)")
    parser.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")
    parser.add_argument("--update-order", choices=ORDERS, default=None,
                        help=f"LeaderWorkerSet: order for a template change combined with a scale-up (default: "
                             f"NEW's {UPDATE_ORDER_ANNOTATION} annotation, else ScaleFirst)")
    parser.add_argument("--mode", choices=MODES, default="operator-free",
                        help="operator-free (default: pulumi-lws rolls out) or controller (the upstream controller "
                             "rolls out; the same stages, with a note on where the model is upstream-exact)")
    parser.set_defaults(handler=run)


#: ``--mode`` values (pulumi_lws.components.controller.MODES)
MODES = ("operator-free", "controller")


def controller_mode_error(workload: Workload, args: argparse.Namespace) -> str | None:
    """Why ``--mode controller`` cannot plan these flags (pulumi-lws-only choices), or None."""
    if args.update_order == "RolloutFirst":
        return "--update-order RolloutFirst is a pulumi-lws (operator-free) order the upstream controller does not implement"
    if args.diff:
        return "--diff shows the native objects of operator-free mode; in controller mode the next up changes only the CR"
    return None


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
        replicas=new.replicas, max_unavailable=mu, max_surge=ms, user_partition=new.user_partition(),
        sts=LeaderSts(r0, min(old.user_partition(), r0), r0), template_changed=changed,
        states=("o" if changed else "U") * r0,
    )


def update_order(new: LeaderWorkerSet, flag: str | None) -> str:
    if flag:
        return flag
    value = new.metadata.annotations.get(UPDATE_ORDER_ANNOTATION)
    return value if value in ORDERS else "ScaleFirst"


def cells(states: str, replicas: int) -> tuple[GroupCell, ...]:
    return tuple(GroupCell(id=str(i), state=c, surge=i >= replicas) for i, c in enumerate(states))


def initial_row(inp: RolloutInputs, key: str) -> TraceRow:
    s = inp.sts.replicas if inp.sts else 0
    return TraceRow(time=0, replicas=s, partition=inp.sts.partition if inp.sts else None,
                    groups=cells(inp.states, inp.replicas), live=s, available=available(inp.states, s, inp.replicas),
                    revision=key, note="before: every OLD group ready")


def step_row(n: int, step: ModelStep, key: str, first: bool, template_changed: bool) -> TraceRow:
    d, r = step.decision, step.inputs.replicas
    what = describe_case("2" if first and template_changed else d.case)
    note = ("apply NEW" if first else step.note) + (f": {what}" if what else "")
    if is_complete(step.inputs, d):
        note += "; rollout complete"
    elif is_settled(step.inputs, d):
        note += "; settled: user partition keeps the surge"
    return TraceRow(time=n, replicas=d.replicas, partition=d.partition, groups=cells(step.states, r), live=d.replicas,
                    available=available(step.states, d.replicas, r), revision=key, note=note, case=d.case)


def build_trace(old: LeaderWorkerSet, new: LeaderWorkerSet, order: str) -> Trace:
    """The predicted rows for OLD -> NEW with ``order`` (ignored in Hash mode)."""
    check_pair(old, new)
    if new.spec.group_identity == "Hash":
        return build_hash_trace(old, new)
    inp = initial_inputs(old, new)
    key = revision_key(new)
    steps = predict(inp, order) if groups_to_roll(inp) <= MAX_MODEL_STEPS else []
    if not steps or not finished(steps):  # too many groups to walk one by one: waves (predict.prediction)
        steps = predict_waves(inp, order)
    rows = [initial_row(inp, key)] + [step_row(n, s, key, n == 1, inp.template_changed) for n, s in enumerate(steps, 1)]
    last = steps[-1] if steps else None
    done = last is not None and (is_complete(last.inputs, last.decision) or is_settled(last.inputs, last.decision))
    trace = Trace(rows=rows, converged=done)
    if not done:
        trace.blocked = "prediction cut short" if not finished(steps) else "no group left to become ready"
    return trace


def hash_start(old: LeaderWorkerSet, new: LeaderWorkerSet) -> HP.ModelState:
    """OLD's groups ``#1``..``#R0``, all admitted and ready, on NEW's revision only when the
    template did not change; the Deployment at rest; NEW's replicas, budgets and policy."""
    same = revision_key(old) == revision_key(new)
    groups = [HP.ModelGroup(id=f"#{n}", new=same, ready=True, gated=False) for n in range(1, old.replicas + 1)]
    cfg = new.spec.rollout_strategy.rolling_update_configuration
    return HP.initial_state(groups, new.replicas, cfg.max_surge, cfg.max_unavailable, new.spec.group_replacement_policy)


def hash_row(n: int, state: HP.ModelState, key: str, note: str) -> TraceRow:
    cells = tuple(GroupCell(id=g.id, state=g.char, detail=g.detail) for g in state.groups)
    return TraceRow(time=n, replicas=state.replicas, partition=None, groups=cells, live=len(state.live()),
                    available=min(state.replicas, state.available), revision=key, note=note)


def build_hash_trace(old: LeaderWorkerSet, new: LeaderWorkerSet) -> Trace:
    """Predicted rows for a Hash-mode OLD -> NEW: the before row, then one row per model stage."""
    start, key = hash_start(old, new), revision_key(new)
    steps = HP.predict(start, next_id=old.replicas + 1)
    changed = revision_key(old) != key
    rows = [replace(hash_row(0, start, key, "before: every OLD group ready"), replicas=old.replicas)]
    for n, state in enumerate(steps, 1):
        note = ("apply NEW" + (": template changed: groups replaced on the new revision" if changed else "")) if n == 1 else state.note
        rows.append(hash_row(n, state, key, note + ("; rollout complete" if HP.is_done(state) else "")))
    done = bool(steps) and HP.is_done(steps[-1])
    trace = Trace(rows=rows, converged=done)
    if not done:
        trace.blocked = "no group left to become ready" if HP.finished(steps) else "prediction cut short"
    return trace


def load(path: str, name: str | None = None) -> tuple[Mapping[str, Any], Workload, Any]:
    """The workload document of ``path`` (``name`` selects one of several), its API and its parsed
    spec; SpecError (exit 2) on bad YAML, no or several workloads, or an invalid spec."""
    doc = one_workload(path, name)
    assert doc.workload is not None
    return doc.data, doc.workload, doc.workload.parse(dict(doc.data))


def check_generic(workload: Workload, old: Any, new: Any) -> None:
    """Same workload, NEW a valid update of OLD (SpecError), budgets that resolve."""
    (_, old_name), (_, new_name) = workload.identity(old), workload.identity(new)
    if old_name != new_name:
        raise PlanInputError(f"OLD and NEW name different {workload.kind}s ({old_name!r} vs {new_name!r})")
    workload.validate_update(new, old)
    try:
        for spec in (old, new):
            workload.budgets(spec)
    except ValueError as exc:
        raise PlanInputError(f"invalid rollout budget: {exc}") from None


def _is_surge(gid: str, replicas: int) -> bool:
    return gid.isdigit() and int(gid) >= replicas


def stage_row(n: int, stage: Stage, replicas: int, note: str) -> TraceRow:
    """The first reconcile's stage as a row: declared groups on their state, groups the stage
    deletes terminating (absent from ``group_revisions``)."""
    cells = []
    for g in stage.groups:
        declared = g.id in stage.group_revisions
        ready = g.ready and declared
        state = ("U" if ready else "u") if g.updated else ("o" if ready else "x")
        cells.append(GroupCell(id=g.id, state=state, revision=g.revision, surge=_is_surge(g.id, replicas),
                               detail="" if declared else "terminating"))
    live, available = len(cells), min(replicas, sum(1 for c in cells if c.state in "Uo" and not c.detail))
    if stage.lanes:  # multi-role: the lanes count groups, the stage's views are per role
        live, available = lanes_live(stage.lanes), lanes_available(stage.lanes)
    return TraceRow(time=n, replicas=stage.replicas, partition=stage.partition or None, groups=tuple(cells),
                    live=live, available=available,
                    revision=stage.target_revision, note=note, case=stage.case,
                    blocker=str(stage.blocker) if stage.blocker else None,
                    blocker_code=stage.blocker.code if stage.blocker else None, lanes=stage.lanes)


def predicted_row(n: int, p: PredictedStage, replicas: int, revision: str) -> TraceRow:
    """A ``Stage.remaining`` entry as a row (one char per declared group, ordinal order)."""
    cells = tuple(GroupCell(id=gid, state=c, surge=_is_surge(gid, replicas)) for gid, c in zip(p.group_ids(), p.groups))
    live, available = len(cells), min(replicas, sum(1 for c in p.groups if c in "Uo"))
    if p.lanes:
        live, available = lanes_live(p.lanes), lanes_available(p.lanes)
    return TraceRow(time=n, replicas=p.replicas, partition=p.partition or None, groups=cells, live=live,
                    available=available, revision=revision, lanes=p.lanes)


def lanes_live(lanes) -> int:
    return sum(lane.old + lane.new for lane in lanes)


def lanes_available(lanes) -> int:
    return sum(lane.old_ready + lane.new_ready for lane in lanes)


def predicted_complete(p: PredictedStage, replicas: int) -> bool:
    """A predicted stage that ends the rollout: the planner's own flag when it sets one, else exactly
    ``replicas`` groups, all ready, every group at or above the partition updated."""
    if p.complete is not None:
        return p.complete
    part = p.partition or 0
    return (len(p.groups) == replicas and all(c in "Uo" for c in p.groups)
            and all(c == "U" for c in p.groups[part:]))


def generic_trace(workload: Workload, old_doc: Mapping[str, Any], new_doc: Mapping[str, Any], old: Any, new: Any,
                  choices: Mapping[str, Any] | None = None) -> Trace:
    """Rows for OLD -> NEW through the Workload contract only (module doc, "generic")."""
    from pulumi_lws.sim.change import converged_snapshot
    from pulumi_lws.sim.narrate import narrate

    snapshot = converged_snapshot(old_doc, new_doc)
    before = workload.trace_view(old, snapshot)
    replicas = workload.budgets(new)[""].replicas
    stage = workload.reconcile(new, snapshot, workload.options(**dict(choices or {}))).stage
    target = workload.target_revision(new)
    rows = [TraceRow(time=0, replicas=before.replicas, partition=before.partition, groups=before.cells,
                     live=before.live, available=before.available, revision=workload.target_revision(old),
                     lanes=workload.trace_view(new, snapshot).lanes)]  # lanes read old|new against NEW
    rows.append(stage_row(1, stage, replicas, "apply NEW"))
    rows += [predicted_row(n, p, replicas, target) for n, p in enumerate(stage.remaining, 2)]
    rows = narrate(rows_changed(rows), first_note="before: every OLD group ready")
    if stage.complete:
        trace = Trace(rows=rows, converged=True)
    elif stage.blocker is not None:
        trace = Trace(rows=rows, converged=False, blocked=f"{stage.blocker.code}: {stage.blocker.message}")
    else:
        done = bool(stage.remaining) and predicted_complete(stage.remaining[-1], replicas)
        trace = Trace(rows=rows, converged=done)
        if not done:
            trace.blocked = "the prediction ends before the rollout completes (a later stage waits or is blocked)"
    trace.warnings = list(stage.notes)  # type: ignore[attr-defined]  (e.g. RoleRollingUpdate: every group below ready)
    return trace


def lws_trace(workload: Workload, old_doc: Mapping[str, Any], new_doc: Mapping[str, Any], old: LeaderWorkerSet,
              new: LeaderWorkerSet, choices: Mapping[str, Any] | None = None) -> Trace:
    """LeaderWorkerSet's exact models (Ordinal predict, Hash model)."""
    check_pair(old, new)
    return build_trace(old, new, (choices or {}).get("update_order") or "ScaleFirst")


#: kind -> the row predictor ``plan`` uses; every other kind: :func:`generic_trace`. (The contract
#: has no ``predict`` capability: a LeaderWorkerSet keeps its exact, readiness-ordered models.)
PREDICTORS = {"LeaderWorkerSet": lws_trace}


def _update_order(workload: Workload, new: Any, flag: str | None) -> str | None:
    if flag:
        return flag
    annotations = getattr(getattr(new, "metadata", None), "annotations", None) or {}
    value = annotations.get(UPDATE_ORDER_ANNOTATION)
    return value if value in ORDERS else None


def control_note(workload: Workload, new: Any) -> dict[str, Any]:
    """NEW's rollout control (docs/rollout-control.md): paused, and the progress deadline that
    ``pulumi up`` / ``pulumi-lws status`` check against the cluster's timestamps (a plan has no
    cluster clock: it reports the setting, never a verdict)."""
    from pulumi_lws.core.control import annotations_of_spec, resolve

    settings = resolve(workload.kind, getattr(new, "name", None), annotations_of_spec(new))
    return {"paused": settings.paused, "progressDeadlineSeconds": settings.deadline}


def run(args: argparse.Namespace) -> int:
    old_doc, workload, old = load(args.old, args.name)
    new_doc, new_workload, new = load(args.new, args.name)
    from pulumi_lws.sim.timeline import WarmUpBlocked

    controller = getattr(args, "mode", "operator-free") == "controller"
    if controller and (why := controller_mode_error(workload, args)):
        print(f"error: {why}", file=sys.stderr)
        return X.BAD_INPUT
    order = None if controller else _update_order(workload, new, args.update_order)  # upstream: ScaleFirst
    choices: dict[str, Any] = {"update_order": order} if order else {}
    choices["paused"] = False  # predict the rollout as resumed; a paused NEW is reported below (control_note)
    predictor = PREDICTORS.get(workload.kind, generic_trace)
    try:
        if new_workload is not workload:
            raise PlanInputError(f"OLD and NEW are different kinds ({workload.kind} vs {new_workload.kind})")
        check_generic(workload, old, new)  # SpecError (update rules) exits 2 through cli.main
        if old_doc == new_doc:
            print(json.dumps({**Trace(rows=[], converged=True).to_json(), "changes": False}) if args.format == "json"
                  else "no changes")
            return X.OK
        trace = predictor(workload, old_doc, new_doc, old, new, choices)
    except PlanInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return X.BAD_INPUT
    except WarmUpBlocked as exc:
        print(f"plan: OLD never converges on the embedded cluster, nothing to plan from: {exc}", file=sys.stderr)
        return X.NOT_CONVERGED
    diffs = None
    if args.diff:
        from pulumi_lws.cli.diff import plan_diff

        try:
            diffs = plan_diff(old_doc, new_doc, {"update_order": order or "ScaleFirst"})
        except WarmUpBlocked as exc:
            print(f"plan --diff: OLD never converges on the embedded cluster, no steady state to diff against: {exc}",
                  file=sys.stderr)
            return X.NOT_CONVERGED
    warnings = [w for w in getattr(trace, "warnings", ()) if w != "paused"]
    control = control_note(workload, new)
    if control["paused"]:
        warnings.append(f"paused ({PAUSED_ANNOTATION}): pulumi up holds the current stage; the stages above run after resume")
    mode_note = {"mode": "controller", "model": workload.upstream.model} if controller else {}
    if args.format == "json":
        data = {**trace.to_json(), "changes": True, "control": control, **({"warnings": warnings} if warnings else {}),
                **mode_note}
        if diffs is not None:
            data["diff"] = [{"object": d.key, "change": d.change, "diff": d.text} for d in diffs]
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print(format_table(trace.rows, markdown=args.format == "markdown",
                           show_partition=any(r.partition is not None for r in trace.rows)))
        if trace.blocked:
            print(f"blocked: {trace.blocked}")
        for warning in warnings:
            print(f"warning: {warning}")
        if controller:
            print(f"mode: controller: the {workload.kind} controller takes these stages; model: {workload.upstream.model}")
        if diffs is not None:
            print_diffs(diffs, markdown=args.format == "markdown")
    return X.OK if trace.converged else X.NOT_CONVERGED


def print_diffs(diffs: list, markdown: bool = False) -> None:
    """The diff section after the stage table (a ```diff fence in markdown)."""
    print()
    if not diffs:
        print("no object changes in the next `pulumi up`")
        return
    body = "".join(d.text for d in diffs)
    sys.stdout.write(f"```diff\n{body}```\n" if markdown else body)
