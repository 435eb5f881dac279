"""``pulumi-lws simulate SCENARIO``: run a scenario in the embedded cluster and print the trace.

Prints a header line (what runs: program or manifest, engine, cluster), the stage table, then a
summary (and, when the rollout ended blocked, the blocker's code and remedies).

Exit status: 0 converged within the invariants; 1 an invariant was violated, the rollout ended
blocked, or it did not converge by ``stop.maxTime``; 2 bad input (scenario or manifest).
"""
from __future__ import annotations

import argparse
import pathlib
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("simulate", help="run a scenario against the embedded cluster simulator",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scenario", help="scenario YAML file (docs/simulator.md)")
    p.add_argument("--format", choices=("table", "markdown", "json"), default="table")
    p.add_argument("--plot", metavar="FILE.svg", help="also write an SVG timeline of group states and availability")
    p.add_argument("--engine", choices=("pure", "pulumi"), default=None,
                   help="pure: call reconcile() directly; pulumi: run the scenario's program under Pulumi mocks "
                        "(default: pulumi when the scenario names a program, else pure)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from pulumi_lws.sim.plot import svg_timeline
    from pulumi_lws.sim.runner import simulate
    from pulumi_lws.sim.scenario import load_scenario
    from pulumi_lws.trace import format_json, format_table

    scenario = load_scenario(pathlib.Path(args.scenario))
    if args.engine == "pulumi" and scenario.program is None:
        print(f"simulate: --engine pulumi needs a scenario with program: ({args.scenario} has none)", file=sys.stderr)
        return 2
    result = simulate(scenario, args.engine)
    if args.format == "json":
        data = format_json(result.trace)
        print(data)
    else:
        print(header(scenario, result.engine))
        print()
        rows = result.trace.rows
        print(format_table(rows, markdown=args.format == "markdown", details=False,
                           show_partition=any(r.partition is not None for r in rows)))
        print()
        print(_summary(result))
        for line in _blocker_lines(result):
            print(line)
    if args.plot:
        pathlib.Path(args.plot).write_text(svg_timeline(result.raw_rows, result.end_time, f"{scenario.name}"))
    if result.reason:
        print(f"simulate: {result.reason}", file=sys.stderr)
    return result.exit_code


ENGINES = {"pure": "pure (reconcile() per tick)", "pulumi": "pulumi (the program under Pulumi's mock engine)"}


def header(scenario, engine: str) -> str:
    """One line: scenario, what runs (program or inline manifest), engine, cluster."""
    what = f"program {_rel(scenario.program)}" if scenario.program else "inline manifest"
    if scenario.program and scenario.manifest_file:
        what += f" (reads {scenario.manifest_file}; runs in a scratch copy)"
    start = "converged" if scenario.start == "converged" else "empty"
    return (f"{scenario.name}: {what} | engine {ENGINES.get(engine, engine)} | cluster {describe_cluster(scenario.nodes)}, "
            f"start {start}")


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


def _summary(result) -> str:
    sc = result.scenario
    state = "converged" if result.trace.converged else ("blocked" if result.trace.blocked else "not converged")
    return (f"{sc.name}: {state} at t={result.end_time:g}s after {len(result.stages)} reconciles "
            f"({len(result.trace.rows)} stages, {len(result.trace.violations)} invariant violations)")
