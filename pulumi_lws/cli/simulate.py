"""``pulumi-lws simulate SCENARIO``: run a scenario in the embedded cluster and print the trace.

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
    result = simulate(scenario, args.engine)
    if args.format == "json":
        data = format_json(result.trace)
        print(data)
    else:
        print(format_table(result.trace.rows, markdown=args.format == "markdown"))
        print()
        print(_summary(result))
    if args.plot:
        pathlib.Path(args.plot).write_text(svg_timeline(result.raw_rows, result.end_time, f"{scenario.name}"))
    if result.reason:
        print(f"simulate: {result.reason}", file=sys.stderr)
    return result.exit_code


def _summary(result) -> str:
    sc = result.scenario
    state = "converged" if result.trace.converged else ("blocked" if result.trace.blocked else "not converged")
    return (f"{sc.name}: {state} at t={result.end_time:g}s after {len(result.stages)} reconciles "
            f"({len(result.trace.rows)} stages, {len(result.trace.violations)} invariant violations)")
