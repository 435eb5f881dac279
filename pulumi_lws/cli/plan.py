"""``pulumi-lws plan OLD.yaml NEW.yaml [--name NAME] [--diff] [--format table|markdown|json] [--update-order ORDER]``.

Predicts the stages of changing a workload (LeaderWorkerSet, ModelServing, any kind the registry
models) from OLD to NEW, starting from every OLD group ready. OLD and NEW may be multi-document
files (:mod:`pulumi_lws.cli.documents`): documents that are not a workload (Service, HPA, ...)
are ignored; a file with several workloads needs ``--name``. NEW must be a valid update of OLD
(``workload.validate_update(new, old)``: immutable fields such as subGroupSize,
podTerminationPolicy, groupIdentity, scheduling), as for ``simulate`` and the component. When the
two workload documents are equal the plan is "no changes" (exit 0).

How the rows are predicted (the workload's optional ``predict_trace`` capability, else generic):

* **generic** (every API, ModelServing included: :func:`generic_trace`): OLD is converged on the
  embedded cluster (the warm-up of ``simulate --from OLD --to NEW``); the first row is that
  state as the workload's ``trace_view`` shows it, the second the first reconcile of NEW on it
  (``Stage.groups``), then one row per ``Stage.remaining`` entry (the planner's own prediction:
  the groups each stage waits for become ready together; repeated states dropped). Descriptions
  are derived from the change between rows (:mod:`pulumi_lws.sim.driver.narrate`), as in ``simulate``.
  A ``PredictedStage`` carries one char per declared group and no group ids, so predicted rows
  number the groups by position: exact while the ordinals stay dense (an image change at a fixed
  replica count, the seed's tables); after a surge is reclaimed the positions are the remaining
  groups in ordinal order.
* **LeaderWorkerSet** keeps its exact models (below; ``LeaderWorkerSetWorkload.predict_trace``,
  :mod:`pulumi_lws.lws.rollout.plan_trace`).
Row descriptions are plain words (:mod:`pulumi_lws.lws.rollout.ordinal.cases`); the JSON keeps
the planner's ``case`` id. ``--diff`` then prints the per-object diff of the next ``pulumi up``
(:mod:`pulumi_lws.cli.diff`).

* Ordinal: groups become ready in rollout order (freshly created groups first, then replaced
  groups from the highest ordinal down; :mod:`pulumi_lws.lws.rollout.ordinal.predict`). One row per readiness
  change (more groups to roll than its 400 steps: one per wave; more than 400 waves: at most 50
  rows, each the state the last of its consecutive waves leaves, with a warning); each row shows the stage the planner applies for it (the fixed point, so upstream's
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
from typing import Any

from pulumi_lws.cli import exit_codes as X
from pulumi_lws.cli.apis import kinds, kinds_taking
from pulumi_lws.cli.documents import one_workload
from pulumi_lws.cli.terminal import table_glyphs
from pulumi_lws.core.contract.stage import PredictedStage
from pulumi_lws.core.contract.stagetable import (  # noqa: F401  (stage_row, predicted_row: importable here as before)
    Lanes,
    lanes_available,
    lanes_live,
    predicted_row,
    stage_row,
)
from pulumi_lws.core.contract.trace import PlanInputError, Trace, TraceRow, format_table, rows_changed
from pulumi_lws.core.features.capacity import demand_text, ordered
from pulumi_lws.core.features.control import PAUSED_ANNOTATION
from pulumi_lws.workloads import Workload, option_refused

FORMATS = ("table", "markdown", "json")
ORDERS = ("ScaleFirst", "RolloutFirst")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "plan",
        help=f"predict the rollout stages of changing a {kinds()} from OLD to NEW",
        description="Predict the stages (controller replicas/partition and group states) of changing a "
        f"workload ({kinds('or')}) from OLD.yaml to NEW.yaml, starting with every "
        "OLD group ready and assuming groups become ready in rollout order (or, for an API "
        "whose groups have no order, such as LeaderWorkerSet Hash identity, creation order).",
    )
    parser.add_argument(
        "old", metavar="OLD.yaml", help="the workload as deployed now (other kinds in the file are ignored)"
    )
    parser.add_argument("new", metavar="NEW.yaml", help="the workload to roll out")
    parser.add_argument("--name", metavar="NAME", help="the workload to plan when a file holds several")
    parser.add_argument(
        "--diff",
        action="store_true",
        help="also print a unified per-object diff of the next pulumi up (the objects NEW registers "
        "against those OLD's converged fleet declares)",
    )
    parser.add_argument(
        "--objects",
        action="store_true",
        help="also list the objects each pulumi up of the rollout creates, updates and deletes (the "
        "groups each stage waits for ready together; up 1 is the next pulumi up, --diff's changes)",
    )
    parser.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")
    parser.add_argument(
        "--ascii",
        action="store_true",
        help="draw group states with ASCII letters (U u o x g t) instead of emoji; automatic when "
        "stdout cannot encode them",
    )
    parser.add_argument(
        "--update-order",
        choices=ORDERS,
        default=None,
        help=f"{', '.join(kinds_taking('update_order'))} only: order for a template change combined "
        "with a scale-up (default: NEW's own update-order annotation, else ScaleFirst)",
    )
    parser.add_argument(
        "--mode",
        choices=MODES,
        default="operator-free",
        help="operator-free (default: pulumi-lws rolls out) or controller (the upstream controller "
        "rolls out; the same stages, with a note on where the model is upstream-exact)",
    )
    parser.set_defaults(handler=run, collector_off=True)  # no cycles: cli/collector.py


#: ``--mode`` values (pulumi_lws.components.controller.MODES)
MODES = ("operator-free", "controller")


def controller_mode_error(workload: Workload, args: argparse.Namespace) -> str | None:
    """Why ``--mode controller`` cannot plan these flags (pulumi-lws-only choices), or None."""
    if args.update_order == "RolloutFirst":
        return "--update-order RolloutFirst is a pulumi-lws (operator-free) order the upstream controller does not implement"
    if args.diff or getattr(args, "objects", False):
        flag = "--diff" if args.diff else "--objects"
        return (
            f"{flag} shows the native objects of operator-free mode; in controller mode the next up changes only the CR"
        )
    return None


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


def predicted_complete(p: PredictedStage, replicas: int) -> bool:
    """A predicted stage that ends the rollout: the planner's own flag when it sets one, else exactly
    ``replicas`` groups, all ready, every group at or above the partition updated."""
    if p.complete is not None:
        return p.complete
    part = p.partition or 0
    return len(p.groups) == replicas and all(c in "Uo" for c in p.groups) and all(c == "U" for c in p.groups[part:])


_CONVERGED: dict[str, Any] = {}


def _converged(old_doc: Mapping[str, Any], new_doc: Mapping[str, Any]) -> Any:
    """``sim.change.converged_snapshot`` once per (OLD, NEW) of this process: the generic trace
    and the stage demand read the same warm-up."""
    from pulumi_lws.sim.driver.change import converged_snapshot

    key = json.dumps([old_doc, new_doc], sort_keys=True, default=str)
    if key not in _CONVERGED:
        _CONVERGED.clear()  # one plan at a time: keep only the latest
        _CONVERGED[key] = converged_snapshot(old_doc, new_doc)
    return _CONVERGED[key]


_RECONCILED: list[tuple[str, Any, Any]] = []  # (key, snapshot, result): the latest reconcile only


def _reconciled(workload: Workload, spec_doc: Mapping[str, Any], spec: Any, snapshot: Any, choices: Mapping[str, Any]):
    """``workload.reconcile(spec, snapshot, workload.options(**choices))``, once per (spec, the
    same snapshot object, choices) in this process: the reconcile is a pure function of spec and
    observed state, and the generic trace and the stage demand both reconcile NEW on OLD's
    converged snapshot (its result is only read)."""
    key = json.dumps([workload.kind, spec_doc, dict(choices)], sort_keys=True, default=str)
    for k, snap, result in _RECONCILED:
        if k == key and snap is snapshot:
            return result
    result = workload.reconcile(spec, snapshot, workload.options(**dict(choices)))
    _RECONCILED[:] = [(key, snapshot, result)]
    return result


def generic_trace(
    workload: Workload,
    old_doc: Mapping[str, Any],
    new_doc: Mapping[str, Any],
    old: Any,
    new: Any,
    choices: Mapping[str, Any] | None = None,
) -> Trace:
    """Rows for OLD -> NEW through the Workload contract only (module doc, "generic")."""
    from pulumi_lws.sim.driver.narrate import narrate

    snapshot = _converged(old_doc, new_doc)
    before = workload.trace_view(old, snapshot)
    replicas = workload.budgets(new)[""].replicas
    stage = _reconciled(workload, new_doc, new, snapshot, choices or {}).stage
    target = workload.target_revision(new)
    rows = [
        TraceRow(
            time=0,
            replicas=before.replicas,
            partition=before.partition,
            groups=before.cells,
            live=before.live,
            available=before.available,
            revision=workload.target_revision(old),
            lanes=before.lanes,
        )
    ]  # drawn against OLD's revision, as simulate's first row
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
    trace.warnings = list(stage.notes)  # e.g. RoleRollingUpdate: every group below ready
    return trace


def stage_demand(
    workload: Workload,
    old_doc: Mapping[str, Any],
    new_doc: Mapping[str, Any],
    old: Any,
    new: Any,
    choices: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """What OLD's converged objects and the next ``pulumi up``'s declared objects request
    (:mod:`pulumi_lws.core.features.capacity`, from the rendered manifests of every API)."""
    from pulumi_lws.core.features.capacity import manifest_demand

    snapshot = _converged(old_doc, new_doc)
    before = manifest_demand(workload.reconcile(old, snapshot, workload.options()).manifests)
    after = manifest_demand(_reconciled(workload, new_doc, new, snapshot, choices or {}).manifests)
    return {"before": before, "next": after}


def control_note(workload: Workload, new: Any) -> dict[str, Any]:
    """NEW's rollout control (docs/rollout-control.md): paused, and the progress deadline that
    ``pulumi up`` / ``pulumi-lws status`` check against the cluster's timestamps (a plan has no
    cluster clock: it reports the setting, never a verdict)."""
    from pulumi_lws.core.features.control import annotations_of_spec, resolve

    settings = resolve(workload.kind, getattr(new, "name", None), annotations_of_spec(new))
    return {"paused": settings.paused, "progressDeadlineSeconds": settings.deadline}


def run(args: argparse.Namespace) -> int:
    old_doc, workload, old = load(args.old, args.name)
    new_doc, new_workload, new = load(args.new, args.name)
    from pulumi_lws.sim.driver.timeline import WarmUpBlocked

    controller = getattr(args, "mode", "operator-free") == "controller"
    refused = option_refused(workload, "update_order", "--update-order") if args.update_order else None
    if refused:
        print(f"error: {refused}", file=sys.stderr)
        return X.BAD_INPUT
    if controller and (why := controller_mode_error(workload, args)):
        print(f"error: {why}", file=sys.stderr)
        return X.BAD_INPUT
    # the flag wins over the workload's own setting (an API reads its annotation itself); the
    # upstream controller has one order, ScaleFirst
    order = "ScaleFirst" if controller else args.update_order
    choices: dict[str, Any] = {"update_order": order} if order else {}
    choices["paused"] = False  # predict the rollout as resumed; a paused NEW is reported below (control_note)
    exact = workload.predict_trace  # an API's own model (LeaderWorkerSet), else None: generic
    try:
        if new_workload is not workload:
            raise PlanInputError(f"OLD and NEW are different kinds ({workload.kind} vs {new_workload.kind})")
        check_generic(workload, old, new)  # SpecError (update rules) exits 2 through cli.main
        if old_doc == new_doc:
            print(
                json.dumps({**Trace(rows=[], converged=True).to_json(), "changes": False})
                if args.format == "json"
                else "no changes"
            )
            return X.OK
        trace = (
            exact(old, new, choices)
            if exact is not None
            else generic_trace(workload, old_doc, new_doc, old, new, choices)
        )
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
            diffs = plan_diff(old_doc, new_doc, {"update_order": order} if order else {})
        except WarmUpBlocked as exc:
            print(
                f"plan --diff: OLD never converges on the embedded cluster, no steady state to diff against: {exc}",
                file=sys.stderr,
            )
            return X.NOT_CONVERGED
    objects = None
    if getattr(args, "objects", False):
        from pulumi_lws.sim.driver.stage_objects import rollout_objects

        try:
            objects = rollout_objects(old_doc, new_doc, {"update_order": order} if order else {})
        except WarmUpBlocked as exc:
            print(f"plan --objects: OLD never converges on the embedded cluster: {exc}", file=sys.stderr)
            return X.NOT_CONVERGED
    try:
        demand = stage_demand(workload, old_doc, new_doc, old, new, choices)
    except WarmUpBlocked:  # OLD never converges: there is no "before" to measure (the trace said so)
        demand = {"before": {}, "next": {}}
    warnings = [w for w in trace.warnings if w != "paused"]
    control = control_note(workload, new)
    if control["paused"]:
        warnings.append(
            f"paused ({PAUSED_ANNOTATION}): pulumi up holds the current stage; the stages above run after resume"
        )
    mode_note = {"mode": "controller", "model": workload.upstream.model} if controller else {}
    mode_note |= dict(workload.mode_notes(new))  # e.g. perPodValues: which mode renders the per-pod values
    if args.format == "json":
        data = {
            **trace.to_json(),
            "changes": True,
            "control": control,
            **({"warnings": warnings} if warnings else {}),
            **mode_note,
            "demand": {k: dict(ordered(v)) for k, v in demand.items()},
        }
        if diffs is not None:
            data["diff"] = [{"object": d.key, "change": d.change, "diff": d.text} for d in diffs]
        if objects is not None:
            data["objects"] = {
                "ups": [{**u.to_json(), "stage": stage} for u, stage in zip(objects.ups, up_stages(objects, trace))],
                "complete": objects.complete,
                "blocked": objects.blocked,
            }
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print(
            format_table(
                trace.rows,
                markdown=args.format == "markdown",
                glyphs=table_glyphs(args.ascii),
                roles=workload.stage_lanes(new).by_role,
                show_partition=any(r.partition is not None for r in trace.rows),
            )
        )
        if any(demand.values()):
            print(
                f"demand (pod requests x pods declared): before {demand_text(demand['before'])}; "
                f"the next pulumi up declares {demand_text(demand['next'])}"
            )
        if trace.blocked:
            print(f"blocked: {trace.blocked}")
        for warning in warnings:
            print(f"warning: {warning}")
        if controller:
            print(
                f"mode: controller: the {workload.kind} controller takes these stages; model: {workload.upstream.model}"
            )
        for note in workload.mode_notes(new).values():
            print(note)
        if diffs is not None:
            print_diffs(diffs, markdown=args.format == "markdown")
        if objects is not None:
            print_objects(objects, up_stages(objects, trace), markdown=args.format == "markdown")
    return X.OK if trace.converged else X.NOT_CONVERGED


def print_diffs(diffs: list, markdown: bool = False) -> None:
    """The diff section after the stage table (a ```diff fence in markdown)."""
    print()
    if not diffs:
        print("no object changes in the next `pulumi up`")
        return
    body = "".join(d.text for d in diffs)
    sys.stdout.write(f"```diff\n{body}```\n" if markdown else body)


def up_stages(objects: Any, trace: Trace) -> list[int | None]:
    """The stage-table number of each listed ``pulumi up``: the next up is stage 2 (stage 1 is
    the state now); the others have a number when the ups and the table's stages correspond one
    to one (each stage one up: ModelServing, DisaggregatedSet), else None (a LeaderWorkerSet's
    table has a row per group becoming ready while its StatefulSets roll pods between ups)."""
    aligned = len(objects.ups) == len(trace.rows) - 1
    return [u.up + 1 if aligned or u.up == 1 else None for u in objects.ups]


def print_objects(objects: Any, stages: list[int | None], markdown: bool = False) -> None:
    """The ``--objects`` section: one line per ``pulumi up`` that changes objects."""
    print()
    print(
        "Objects changed by each `pulumi up` of the rollout:"
        if markdown
        else "objects changed by each pulumi up of the rollout:"
    )
    if markdown:
        print()
    for up, stage in zip(objects.ups, stages):
        label = f"`pulumi up` {up.up}" if markdown else f"pulumi up {up.up}"
        where = f" (stage {stage})" if stage is not None else ""
        print(f"{'-' if markdown else ' '} {label}{where}: {up.text()}")
    if not objects.ups:
        print(f"{'-' if markdown else ' '} none: no object changes")
    if objects.blocked:
        print(f"{'-' if markdown else ' '} then blocked: {objects.blocked}")
    if any(stage is None for stage in stages):
        print()
        print(
            "The table has a row per group becoming ready; the workload's own controllers (its "
            "StatefulSets) move pods between these ups, so fewer ups change objects than the table has stages."
        )
