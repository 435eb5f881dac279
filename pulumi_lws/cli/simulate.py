"""``pulumi-lws simulate SCENARIO``: run a scenario in the embedded cluster and print the trace.

``pulumi-lws simulate --from OLD.yaml --to NEW.yaml``: no scenario file; start converged on OLD,
apply NEW at t=0 (pure engine, default readiness), optionally on a node pool
(``--nodes N --gpus-per-node G --zones Z``): see your change before you run it. OLD and NEW are
any workload the project models (every registered API) and may be multi-document
files: documents that are not a workload (Service, HPA, ...) are ignored; a file with several
workloads needs ``--name NAME``.

Prints a header line (what runs: program or manifest, engine, cluster), the stage table, then a
summary (and, when the rollout ended blocked, the blocker's code and remedies).

Exit status: 0 converged within the invariants; 1 an invariant was violated, the rollout ended
blocked, or it did not converge by ``stop.maxTime`` (``--max-time``); 2 bad input (scenario or manifest).
"""

from __future__ import annotations

import argparse
import pathlib
import sys

from pulumi_lws.cli import exit_codes as X
from pulumi_lws.cli.apis import kinds, kinds_taking
from pulumi_lws.cli.helptext import plain


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "simulate",
        help="run a scenario against the embedded cluster simulator",
        description=plain(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("scenario", nargs="?", help="scenario YAML file (docs/simulator.md); omit with --from/--to")
    change = p.add_argument_group("a change instead of a scenario file (pure engine, start converged on OLD)")
    change.add_argument("--from", dest="old", metavar="OLD.yaml", help=f"the workload ({kinds()}) as deployed now")
    change.add_argument("--to", dest="new", metavar="NEW.yaml", help="the workload after your edit (applied at t=0)")
    change.add_argument(
        "--nodes",
        type=int,
        metavar="N",
        help="a pool of N nodes (cpu 64, memory 512Gi each); default one unbounded node",
    )
    change.add_argument("--gpus-per-node", type=float, metavar="G", help="nvidia.com/gpu capacity of each pool node")
    change.add_argument(
        "--zones",
        type=int,
        metavar="Z",
        help="spread the pool round-robin over Z zones (label topology.kubernetes.io/zone); default 1",
    )
    change.add_argument("--ready-seconds", type=float, metavar="S", help="seconds from Running to Ready for every pod")
    change.add_argument(
        "--max-time",
        type=float,
        metavar="S",
        help="simulated seconds the rollout may take before it ends 'did not converge' (exit 1); "
        "default 600 (a scenario file's stop.maxTime)",
    )
    change.add_argument(
        "--fail-image",
        dest="fail_images",
        action="append",
        metavar="IMAGE",
        help="pods with a container on IMAGE crash-loop (Running, never Ready, restart every 10 s; "
        "kubelet.failImages); repeatable",
    )
    change.add_argument("--name", metavar="NAME", help="the workload to simulate when a file holds several")
    change.add_argument(
        "--update-order",
        choices=("ScaleFirst", "RolloutFirst"),
        help=f"{', '.join(kinds_taking('update_order'))} only: order for a template change combined "
        "with a scale-up (default ScaleFirst, upstream's order)",
    )
    p.add_argument(
        "--format", choices=("table", "markdown", "json"), default="table", help="output format (default: table)"
    )
    p.add_argument(
        "--ascii",
        action="store_true",
        help="draw group states with ASCII letters (U u o x g t) instead of emoji; automatic when stdout "
        "cannot encode them",
    )
    p.add_argument(
        "--check-capacity",
        action="store_true",
        help="hold a stage whose new pods do not fit the free capacity of matching nodes (blocker "
        "insufficient-capacity), as the component argument check_capacity (the scenario key "
        "reconcile.checkCapacity; pure engine; docs/capacity.md)",
    )
    p.add_argument("--plot", metavar="FILE.svg", help="also write an SVG timeline of group states and availability")
    p.add_argument(
        "--engine",
        choices=("pure", "pulumi"),
        default=None,
        help="pure: call reconcile() directly; pulumi: run the scenario's program under Pulumi mocks "
        "(default: pulumi when the scenario names a program, else pure)",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from pulumi_lws.cli.terminal import table_glyphs
    from pulumi_lws.core.contract.stagetable import Lanes
    from pulumi_lws.core.contract.trace import format_json, format_table
    from pulumi_lws.sim.driver.plot import svg_timeline
    from pulumi_lws.sim.driver.scenario import load_scenario

    problem = _usage_problem(args)
    if problem:
        print(f"simulate: {problem}", file=sys.stderr)
        return X.BAD_INPUT
    if args.old is not None:
        change = _change_scenario(args)
        if change is None:
            return X.BAD_INPUT
        scenario = change.scenario
        head = change_header(scenario, args.old, args.new, change.pool)
    else:
        scenario = load_scenario(pathlib.Path(args.scenario))
        if args.engine == "pulumi" and scenario.program is None:
            print(
                f"simulate: --engine pulumi needs a scenario with program: ({args.scenario} has none)", file=sys.stderr
            )
            return X.BAD_INPUT
        head = None
    if getattr(args, "check_capacity", False):
        if (args.engine or scenario.default_engine) != "pure":
            print(
                "simulate: --check-capacity is a pure-engine choice: a program sets the component argument "
                "check_capacity",
                file=sys.stderr,
            )
            return X.BAD_INPUT
        scenario.check_capacity = True
    from pulumi_lws.sim.driver.timeline import TimelineRunner, WarmUpBlocked

    runner = TimelineRunner(scenario, args.engine)
    try:
        result = runner.run()
    except WarmUpBlocked as exc:  # the starting state itself is out of reach: a blocked rollout
        what = f"--from {args.old}" if args.old is not None else "the initial spec"
        if args.format == "json":
            from pulumi_lws.core.contract.trace import Trace

            print(format_json(Trace(rows=[], converged=False, blocked=f"{what} never converges (warm-up): {exc}")))
        else:
            print(head or header(scenario, args.engine or scenario.default_engine))
            print(f"blocked: {what} never converges on this cluster (warm-up): {exc}")
        print(f"simulate: {what} never converges on this cluster: {exc}", file=sys.stderr)
        return X.NOT_CONVERGED
    if args.format == "json":
        data = format_json(result.trace)
        print(data)
    else:
        print(head or header(scenario, result.engine))
        print()
        rows = result.trace.rows
        spec = runner.spec.parsed()
        roles = runner.spec.workload.stage_lanes(spec).by_role if spec is not None else None
        print(
            format_table(
                rows,
                markdown=args.format == "markdown",
                details=False,
                glyphs=table_glyphs(args.ascii),
                roles=roles,
                show_partition=any(r.partition is not None for r in rows),
            )
        )
        print()
        print(_summary(result))
        demand = demand_line(result)
        if demand:
            print(demand)
        for line in _blocker_lines(result):
            print(line)
        spec = runner.spec.parsed()
        for line in admission_lines(runner.spec.workload, spec, result.cluster) if spec is not None else []:
            print(line)
    if args.plot:
        from pulumi_lws.sim.driver.plot import lane_budgets

        spec = runner.spec.parsed()
        # per-role floors only where a lane counts the role's groups (its budgets are per group otherwise)
        budgets = (
            lane_budgets(runner.spec.workload, spec)
            if spec is not None and runner.spec.workload.stage_lanes(spec) is Lanes.ROLES
            else None
        )
        pathlib.Path(args.plot).write_text(
            svg_timeline(
                result.raw_rows,
                result.end_time,
                scenario.name,
                timeline=runner.timeline,
                stages=result.trace.rows,
                lane_budgets=budgets,
            )
        )
    if result.reason:
        print(f"simulate: {result.reason}", file=sys.stderr)
    return result.exit_code


CHANGE_ONLY = ("nodes", "gpus_per_node", "zones", "ready_seconds", "max_time", "update_order", "name", "fail_images")


def _usage_problem(args: argparse.Namespace) -> str | None:
    """Which input mode was asked for, and whether the flags fit it (None: fine)."""
    if args.scenario is not None and (args.old is not None or args.new is not None):
        return "give either SCENARIO or --from OLD.yaml --to NEW.yaml, not both"
    if args.scenario is None and args.old is None and args.new is None:
        return "nothing to simulate: give SCENARIO or --from OLD.yaml --to NEW.yaml"
    if args.old is None and args.new is not None:
        return "--to needs --from OLD.yaml (the workload as deployed now)"
    if args.old is not None and args.new is None:
        return "--from needs --to NEW.yaml (the workload after your edit)"
    if args.old is not None and args.engine == "pulumi":
        return "--from/--to runs the pure engine (there is no program); drop --engine pulumi"
    if args.scenario is not None:
        given = [f"--{k.replace('_', '-')}" for k in CHANGE_ONLY if getattr(args, k) is not None]
        if given:
            return f"{', '.join(given)} only with --from/--to (a scenario file sets nodes:, kubelet: and reconcile:)"
    return None


def _change_scenario(args: argparse.Namespace):
    """The in-memory change for ``--from``/``--to`` (:class:`pulumi_lws.sim.driver.change.Change`), or None
    after printing why it is bad input."""
    from pulumi_lws.cli.documents import one_workload
    from pulumi_lws.core.contract.errors import SpecError
    from pulumi_lws.sim.driver.change import change_scenario
    from pulumi_lws.sim.driver.quick import OPTIONS

    docs = {}
    for flag, path in (("--from", args.old), ("--to", args.new)):
        try:  # each file on its own first, so the message names the file at fault
            doc = one_workload(path, args.name)
            docs[flag] = dict(doc.data)
            # the document's own API (registry), errors named by file
            workload = doc.workload
            assert workload is not None  # one_workload returns workload documents only
            workload.parse(docs[flag])
        except SpecError as exc:
            print(f"simulate: {flag} {path}: {exc}", file=sys.stderr)
            return None
    try:
        return change_scenario(
            docs["--from"],
            docs["--to"],
            nodes=args.nodes,
            gpus_per_node=args.gpus_per_node,
            zones=args.zones,
            ready_seconds=args.ready_seconds,
            max_time=args.max_time,
            update_order=args.update_order,
            fail_images=args.fail_images,
            description=f"{args.old} -> {args.new}",
        )
    except SpecError as exc:
        if exc.kind == OPTIONS:
            for e in exc.errors:
                print(f"simulate: {e.path}: {e.message}" + _got(e.value), file=sys.stderr)
        else:
            print(f"simulate: --from {args.old} --to {args.new}: {exc}", file=sys.stderr)
        return None


def _got(value) -> str:
    if value is None:
        return ""
    return f" (got {value:g})" if isinstance(value, (int, float)) else f" (got {value})"


def change_header(scenario, old: str, new: str, pool: str | None = None) -> str:
    """The header line of a ``--from``/``--to`` run: the change, engine, cluster (``pool``: how an
    assumed pool was chosen), update order."""
    order = f", update order {scenario.update_order}" if scenario.update_order else ""
    cluster = pool or f"{describe_cluster(scenario.nodes)}{_zones(scenario.nodes)}"
    return (
        f"{scenario.name}: change {old} -> {new} | engine {ENGINES['pure']} | cluster "
        f"{cluster}, start converged on {old}{order}"
    )


def _zones(nodes: list[dict]) -> str:
    from pulumi_lws.sim.driver.quick import ZONE_LABEL

    zones = {(n.get("labels") or {}).get(ZONE_LABEL) for n in nodes} - {None}
    return f" in {len(zones)} zones" if len(zones) > 1 else ""


ENGINES = {"pure": "pure (reconcile() per tick)", "pulumi": "pulumi (the program under Pulumi's mock engine)"}


def header(scenario, engine: str) -> str:
    """One line: scenario, what runs (program or inline manifest), engine, cluster."""
    what = f"program {_rel(scenario.program)}" if scenario.program else "inline manifest"
    if scenario.program and scenario.manifest_file:
        what += f" (reads {scenario.manifest_file}; runs in a scratch copy)"
    start = "converged" if scenario.start == "converged" else "empty"
    return (
        f"{scenario.name}: {what} | engine {ENGINES.get(engine, engine)} | cluster {describe_cluster(scenario.nodes)}, "
        f"start {start}"
    )


def describe_cluster(nodes: list[dict]) -> str:
    """``1 unbounded node`` or ``1 node (nvidia.com/gpu 8)``: node count and capacity totals."""
    if not nodes:
        return "1 unbounded node"
    totals: dict[str, float] = {}
    for node in nodes:
        for res, qty in (node.get("capacity") or {}).items():
            try:
                totals[res] = totals.get(res, 0) + float(qty)
            except (TypeError, ValueError):
                continue  # quantities with units (256Gi) are left out of the one-line summary
    caps = ", ".join(f"{r} {v:g}" for r, v in sorted(totals.items()))
    return f"{len(nodes)} node{'s' if len(nodes) > 1 else ''}" + (f" ({caps} in total)" if caps else "")


def _rel(path: pathlib.Path) -> str:
    try:
        return str(path.relative_to(pathlib.Path.cwd()))
    except ValueError:
        return str(path)


def _blocker_lines(result) -> list[str]:
    blocker = result.final_blocker
    if blocker is None:
        return []
    lines = [f"blocked: {blocker.code}: {blocker.message}"]
    if blocker.remedies:
        lines.append("remedies:")
        lines += [f"  {i}. {r}" for i, r in enumerate(blocker.remedies, 1)]
    return lines


def demand_line(result) -> str:
    """``peak demand per stage (pod requests x live pods): Stage 1: ...; Stage 2: ...`` (core.capacity);
    empty when no pod requests anything (the quickstart's nginx: ``make demo`` prints no line)."""
    from pulumi_lws.core.features.capacity import demand_text

    stages = result.stage_demand()
    if not any(d for _, d in stages):
        return ""
    return "peak demand per stage (pod requests x live pods): " + "; ".join(
        f"{label}: {demand_text(d)}" for label, d in stages
    )


def admission_lines(workload, spec, cluster, shown: int = 3) -> list[str]:
    """The per-pod-values mode in force (``Workload.mode_notes``) and what the simulated API
    server's MutatingAdmissionPolicy admission set on the pods it created (a few, by name)."""
    notes = list(workload.mode_notes(spec).values())
    admitted = cluster.store.admitted
    if not notes and not admitted:
        return []
    lines = notes + [f"admission: {len(admitted)} pods mutated at creation by the simulated MutatingAdmissionPolicy"]
    for pod in sorted(admitted)[:shown]:
        change = admitted[pod]
        values = [f"{k.rpartition('/')[2]}={v}" for k, v in {**change["labels"], **change["annotations"]}.items()]
        spec_fields = f"; spec.{', spec.'.join(change['spec'])}" if change["spec"] else ""
        lines.append(f"  {pod}: {', '.join(values)}{spec_fields}")
    return lines


def _summary(result) -> str:
    sc = result.scenario
    held = result.trace.held_at_partition
    roles = result.trace.held_at_role_partitions
    state = (
        "converged"
        if result.trace.converged
        else f"held at partition {held} as specified"
        if held is not None
        else "held at role partitions " + ", ".join(f"{r}={p}" for r, p in roles.items()) + " as specified"
        if roles is not None
        else "blocked"
        if result.trace.blocked
        else "not converged"
    )
    return (
        f"{sc.name}: {state} at t={result.end_time:g}s after {len(result.stages)} reconciles "
        f"({len(result.trace.rows)} stages, {len(result.trace.violations)} invariant violations)"
    )
