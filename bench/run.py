"""``make bench``: speed and size figures with their targets, as a table.

Figures are medians of repeated runs (or ratios measured in the same process), so they are
comparable across machines. Targets (issue "Reliability and performance harness"):
plan next stage for 10,000 groups <= 10 ms; plan + render 10,000 groups <= 1 s; component registration
under the mock engine <= 1.15x registering the same objects bare; simulate a 100-group rollout in
seconds; API calls per reconcile <= 8. Plus memory (tracemalloc peak, peak RSS) of plan + render.
ModelServing (issue 12): plan + render for 1,000 ServingGroups x 2 roles on a mid-rollout snapshot,
as a ratio against the floor of the same run (LeaderWorkerSet plan + render of 1,000 groups on its
mid-rollout snapshot), the first stage on an empty cluster, and LIST calls per reconcile at 50
and 1,000 ServingGroups (fixed: one per observed kind).
DisaggregatedSet (issue 13): plan + render for 10 roles x 100 groups on a mid-rollout snapshot (every
role half rolled: 20 child LeaderWorkerSets), as a ratio against the same-run floor (LeaderWorkerSet
plan + render of 1,000 groups of the same shape on its mid-rollout snapshot), and LIST calls per
reconcile at 2 roles x 3 groups and 10 roles x 100 groups (fixed: one per LWS kind).
Latest figures and what each one measures: docs/reliability.md.

Issue 16 (fleets of 10,000 groups, :mod:`bench_scale`) comes first: every figure a ratio against a
floor measured in the same run, with its target and, when missed, why; then the CLI commands end
to end (issue 27, :mod:`bench_cli`), then the earlier figures. ``--help`` lists the options:
``--quick`` (every row at small sizes), ``--only NAME`` (one row or section; ``--list``), ``--json
PATH`` (a report) and ``--compare PREVIOUS.json`` (exit 1 when a target met before is missed now).
"""

from __future__ import annotations

import json
import pathlib
import statistics
import sys
import time
from collections.abc import Callable

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_fixtures import fleet_lws, mid_rollout_snapshot  # noqa: E402


def median_seconds(fn: Callable[[], object], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _plan_inputs(groups: int):
    from pulumi_lws.lws.revision import build_catalog

    lws = fleet_lws(groups)
    snap = mid_rollout_snapshot(lws)
    return lws, snap, build_catalog(lws, snap.list("ControllerRevision"))


def bench_plan(groups: int = 10_000) -> dict:
    """The next stage's decision: upstream's rule to its fixed point over the observed groups' states."""
    from pulumi_lws.lws.rollout.budget import rule_for
    from pulumi_lws.lws.rollout.ordinal.groups import observe_ordinal_groups
    from pulumi_lws.lws.rollout.ordinal.planner import fixed_point, ordinal_inputs

    lws, snap, catalog = _plan_inputs(groups)
    observed = observe_ordinal_groups(lws, snap, catalog.target.key)
    inp = ordinal_inputs(lws, snap.get("StatefulSet", lws.name), observed, catalog.target.key)
    t = median_seconds(lambda: fixed_point(inp, rule_for("ScaleFirst")), repeat=21)
    return {
        "figure": f"plan next stage (decision), {groups:,} groups",
        "value": f"{t * 1000:.2f} ms",
        "target": "<= 10 ms",
        "ok": t <= 0.010,
    }


def bench_plan_full(groups: int = 10_000) -> dict:
    """plan_ordinal end to end: observe every group from the Snapshot, decide, group revisions, predictions."""
    from pulumi_lws.lws.reconcile import ReconcileOptions
    from pulumi_lws.lws.rollout.ordinal.planner import plan_ordinal

    lws, snap, catalog = _plan_inputs(groups)
    t = median_seconds(lambda: plan_ordinal(lws, snap, catalog, ReconcileOptions()))
    return {
        "figure": f"observe + plan + predict (plan_ordinal), {groups:,} groups",
        "value": f"{t * 1000:.0f} ms",
        "target": "<= 10 ms (see note)",
        "ok": t <= 0.010,
    }


def bench_render(groups: int = 10_000) -> dict:
    from pulumi_lws.core.contract.snapshot import EMPTY
    from pulumi_lws.lws.reconcile import reconcile

    lws = fleet_lws(groups)
    t = median_seconds(lambda: reconcile(lws, EMPTY), repeat=3)
    return {"figure": f"plan + render, {groups:,} groups", "value": f"{t:.2f} s", "target": "<= 1 s", "ok": t <= 1.0}


def bench_registration(groups: int = 100) -> dict:
    from bench_registration import ratio

    r, comp, bare = ratio(groups, repeat=7)
    return {
        "figure": f"component vs bare registration, {groups} groups",
        "value": f"{r:.2f}x ({comp:.2f} s vs {bare:.2f} s)",
        "target": "<= 1.15x",
        "ok": r <= 1.15,
    }


def bench_simulation(groups: int = 100) -> dict:
    from bench_sim import run

    figures = run(groups)
    t = figures["wall_seconds"]
    ok = t <= 10 and figures["converged"] and figures["violations"] == 0
    return {
        "figure": f"simulate a {groups}-group rollout (pure engine)",
        "value": f"{t:.2f} s ({figures['reconciles']} reconciles, {figures['ms_per_reconcile']} ms each)",
        "target": "seconds (<= 10 s)",
        "ok": ok,
    }


def bench_memory(groups: int = 10_000) -> dict:
    """tracemalloc peak of plan + render in this process; peak RSS of a fresh process doing only that."""
    import subprocess
    import tracemalloc

    from pulumi_lws.core.contract.snapshot import EMPTY
    from pulumi_lws.lws.reconcile import reconcile

    lws = fleet_lws(groups)
    tracemalloc.start()
    reconcile(lws, EMPTY)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # VmHWM (peak RSS of this mm) of a fresh process: ru_maxrss would inherit the parent's high-water mark.
    code = (
        "import re, sys; sys.path[:0] = [sys.argv[1], sys.argv[1] + '/bench']\n"
        "hwm = lambda: int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1))\n"
        "from bench_fixtures import fleet_lws\nfrom pulumi_lws.core.contract.snapshot import EMPTY\n"
        "from pulumi_lws.lws.reconcile import reconcile\nlws = fleet_lws(int(sys.argv[2]))\n"
        "base = hwm()\nreconcile(lws, EMPTY)\nprint(base, hwm())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(ROOT), str(groups)], capture_output=True, text=True, check=True
    )
    base_kb, peak_kb = (int(x) for x in out.stdout.split())
    return {
        "figure": f"memory, plan + render {groups:,} groups",
        "value": f"tracemalloc peak {peak / 2**20:.0f} MiB; peak RSS {peak_kb / 1024:.0f} MiB "
        f"(+{(peak_kb - base_kb) / 1024:.0f} MiB over imports)",
        "target": "reported",
        "ok": True,
    }


def bench_api_calls(groups: int = 50) -> dict:
    from bench_api_calls import count_calls

    n = count_calls(groups)
    return {"figure": f"API calls per reconcile, {groups} groups", "value": str(n), "target": "<= 8", "ok": n <= 8}


def bench_ms_plan_render(groups: int = 1_000) -> dict:
    """ModelServing reconcile (observe, plan, predict, render) on a mid-rollout snapshot, against
    the same-run floor: LeaderWorkerSet reconcile of as many groups on its mid-rollout snapshot."""
    from bench_ms import MS, fleet_ms
    from bench_ms import mid_rollout_snapshot as ms_snapshot

    from pulumi_lws.lws.reconcile import reconcile

    spec, snap = fleet_ms(groups), ms_snapshot(groups)
    t = median_seconds(lambda: MS.reconcile(spec, snap), repeat=3)
    lws = fleet_lws(groups)
    lws_snap = mid_rollout_snapshot(lws)
    floor = median_seconds(lambda: reconcile(lws, lws_snap), repeat=3)
    return {
        "figure": f"ModelServing plan + render, {groups:,} ServingGroups x 2 roles (mid-rollout)",
        "value": f"{t:.2f} s ({t / floor:.1f}x the floor: LWS plan + render of {groups:,} groups, {floor:.2f} s)",
        "target": "<= 1 s",
        "ok": t <= 1.0,
    }


def bench_ms_render(groups: int = 1_000) -> dict:
    """ModelServing first stage on an empty cluster (every object of every ServingGroup)."""
    from bench_ms import MS, fleet_ms

    from pulumi_lws.core.contract.snapshot import EMPTY
    from pulumi_lws.lws.reconcile import reconcile

    spec = fleet_ms(groups)
    t = median_seconds(lambda: MS.reconcile(spec, EMPTY), repeat=3)
    lws = fleet_lws(groups)
    floor = median_seconds(lambda: reconcile(lws, EMPTY), repeat=3)
    n = len(MS.reconcile(spec, EMPTY).manifests)
    return {
        "figure": f"ModelServing render (first stage), {groups:,} ServingGroups x 2 roles ({n:,} objects)",
        "value": f"{t:.2f} s ({t / floor:.1f}x the floor: LWS first stage of {groups:,} groups, {floor:.2f} s)",
        "target": "<= 1 s",
        "ok": t <= 1.0,
    }


def bench_ms_api_calls(groups: int = 50, large: int = 1_000) -> dict:
    from bench_ms import count_calls

    n, m = count_calls(groups), count_calls(large)
    return {
        "figure": f"ModelServing LIST calls per reconcile, {groups} / {large:,} ServingGroups",
        "value": f"{n} / {m}",
        "target": "<= 8, independent of the group count",
        "ok": n == m <= 8,
    }


def bench_ds_plan_render(roles: int = 10, groups: int = 100) -> dict:
    """DisaggregatedSet reconcile (observe children, barrier, proportional step, predict, render every
    child of both revisions through the LWS pipeline, Services) on a mid-rollout snapshot, against the
    same-run floor: LeaderWorkerSet reconcile of roles x groups groups (size 2) mid-rollout."""
    from bench_ds import DS, fleet_ds
    from bench_ds import mid_rollout_snapshot as ds_snapshot

    from pulumi_lws.lws.reconcile import reconcile

    spec, snap = fleet_ds(roles, groups), ds_snapshot(roles, groups)
    result = DS.reconcile(spec, snap)
    assert result.stage.blocker is None and result.stage.case not in (None, "steady", "barrier"), result.stage.case
    t = median_seconds(lambda: DS.reconcile(spec, snap), repeat=5)
    lws = fleet_lws(roles * groups, size=2)
    lws_snap = mid_rollout_snapshot(lws)
    floor = median_seconds(lambda: reconcile(lws, lws_snap), repeat=5)
    return {
        "figure": f"DisaggregatedSet plan + render, {roles} roles x {groups} groups (mid-rollout, "
        f"{len(result.manifests):,} objects)",
        "value": f"{t:.2f} s ({t / floor:.1f}x the floor: LWS plan + render of {roles * groups:,} groups, {floor:.2f} s)",
        "target": "<= 1 s",
        "ok": t <= 1.0,
    }


def bench_ds_api_calls() -> dict:
    from bench_ds import count_calls

    n, m = count_calls(2, 3), count_calls(10, 100)
    return {
        "figure": "DisaggregatedSet LIST calls per reconcile, 2 roles x 3 groups / 10 roles x 100 groups (mid-rollout)",
        "value": f"{n} / {m}",
        "target": "<= 8, independent of roles, groups and revisions",
        "ok": n == m <= 8,
    }


BENCHES = [
    bench_plan,
    bench_plan_full,
    bench_render,
    bench_registration,
    bench_simulation,
    bench_api_calls,
    bench_memory,
    bench_ms_plan_render,
    bench_ms_render,
    bench_ms_api_calls,
    bench_ds_plan_render,
    bench_ds_api_calls,
]


def bench_rollout_control() -> dict:
    """Issue 17: the rollout driver's overhead per stage and govern's per reconcile (bench_rollout.py)."""
    from bench_rollout import bench_rollout_control as row

    return row()


BENCHES.append(bench_rollout_control)


def print_table(rows: list[dict]) -> None:
    print("| figure | value | target | met |")
    print("|---|---|---|---|")
    for r in rows:
        met = "yes" if r["ok"] else "NO" + (f" ({r['why']})" if r.get("why") else "")
        print(f"| {r['figure']} | {r['value']} | {r['target']} | {met} |")


# ---- the rows, by name --------------------------------------------------------------------------

Row = Callable[[bool], list[dict]]


def _scale_rows() -> dict[str, Row]:
    import bench_scale as S

    return {
        "lws-observe-plan-predict": lambda q: [S.lws_observe_plan_predict(50 if q else 10_000)],
        "lws-plan-render": lambda q: [S.lws_plan_render(50 if q else 10_000)],
        "lws-reconcile": lambda q: [S.lws_reconcile(50 if q else 10_000)],
        "lws-memory": lambda q: [S.memory_per_group(50 if q else 10_000)],
        "ms-ds-memory": lambda q: S.memory_per_api(20 if q else 10_000),
        "simulate-lws": lambda q: S.simulate_sizes((5, 10, 20) if q else (100, 1_000, 10_000)),
        "component-vs-bare": lambda q: [S.registration(5 if q else 1_000, repeat=1 if q else 5)],
        "ms-reconcile": lambda q: S.ms_reconcile(10 if q else 10_000),
        "simulate-ms": lambda q: S.simulate_sizes((10, 20) if q else (100, 1_000, 10_000), kind="ModelServing"),
        "ds-reconcile": lambda q: S.ds_reconcile(2 if q else 10, 5 if q else 1_000),
        "simulate-ds": lambda q: S.simulate_sizes((5, 10) if q else (100, 1_000, 10_000), kind="DisaggregatedSet"),
    }


def _cli_rows() -> dict[str, Row]:
    import bench_cli as C
    import bench_cli_stack as S

    def rows(kind: str) -> Row:
        return lambda q: [
            r
            for n in ((20,) if q else (1_000, 10_000))
            for r in C.command_rows(kind, n, repeat=1 if q or n >= 10_000 else 3)
        ]

    def more(kind: str, make: Callable[[str, int, int], list[dict]]) -> Row:
        # one run each: a simulation or a registration of 10,000 groups takes tens of seconds
        return lambda q: [r for n in ((20,) if q else (1_000, 10_000)) for r in make(kind, n, 1)]

    short = {"LeaderWorkerSet": "lws", "ModelServing": "ms", "DisaggregatedSet": "ds"}
    out: dict[str, Row] = {f"cli-{s}": rows(kind) for kind, s in short.items()}
    out |= {f"cli-simulate-{s}": more(kind, S.simulate_rows) for kind, s in short.items()}
    out |= {f"cli-stack-{s}": more(kind, S.stack_rows) for kind, s in short.items()}
    return out


#: the small arguments ``--quick`` gives the earlier benches (each takes its sizes as keywords)
QUICK_ARGS = {"groups": 20, "large": 20, "roles": 2}


def _earlier_rows() -> dict[str, Row]:
    import inspect

    def call(bench: Callable[..., dict]) -> Row:
        params = inspect.signature(bench).parameters
        return lambda q: [bench(**{k: v for k, v in QUICK_ARGS.items() if k in params} if q else {})]

    return {bench.__name__.removeprefix("bench_").replace("_", "-"): call(bench) for bench in BENCHES}


#: (section key, title, rows by name), in the order they print
def sections() -> list[tuple[str, str, dict[str, Row]]]:
    return [
        ("scale", "Fleets of 10,000 groups (issue 16): ratios against same-run floors", _scale_rows()),
        ("cli", "CLI commands end to end (issue 27): ratios against the same run's I/O floor", _cli_rows()),
        ("earlier", "Earlier figures", _earlier_rows()),
    ]


def _run_row(name: str, fn: Row, quick: bool) -> list[dict]:
    try:
        out = fn(quick)
    except Exception as exc:
        out = [{"figure": name, "value": f"error: {type(exc).__name__}: {exc}", "target": "", "ok": False}]
    for r in out:
        r["row"] = name
        print(f"  {name}: {r['figure']}: {r['value']}", file=sys.stderr)
    return out


def compare(current: list[dict], previous_path: str) -> int:
    """Rows met before and missed now (by figure text); exit status 1 when there is one."""
    try:
        previous = json.loads(pathlib.Path(previous_path).read_text(encoding="utf-8"))["rows"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"error: --compare {previous_path}: not a bench report ({exc})", file=sys.stderr)
        return 2
    before = {r["figure"]: r for r in previous}
    regressions = [r for r in current if r["figure"] in before and before[r["figure"]]["ok"] and not r["ok"]]
    print(f"\n## Against {previous_path}\n")
    for r in current:
        old = before.get(r["figure"])
        if old is not None and old["value"] != r["value"]:
            mark = "REGRESSION" if r in regressions else ("fixed" if r["ok"] and not old["ok"] else "changed")
            print(f"- {mark}: {r['figure']}: {old['value']} -> {r['value']}")
    if not regressions:
        print("no target that was met is missed now")
    return 1 if regressions else 0


def parse_args(argv: list[str]):
    import argparse

    parser = argparse.ArgumentParser(
        prog="bench/run.py",
        description="pulumi-lws speed and size figures: every row a ratio against a floor "
        "measured in the same run (or a count), with its target. Prints Markdown tables; progress on stderr.",
        epilog="floors of the CLI rows (issue 27; docs/performance.md): render and plan --format json — reading "
        "the input with libyaml (CSafeLoader) and writing the same output with libyaml (CSafeDumper) or the JSON "
        "encoder; plan (table) — reading the inputs and writing the same table text (the same cells in the same "
        "columns); simulate --from/--to — reading both files, the same change run by the library's simulator, "
        "writing the same text; preview / up --reset DIR — reading the manifest, registering the same objects bare "
        "under the same mock engine, writing the same text (and, for up, the same state files as JSON).",
    )
    parser.add_argument("--quick", action="store_true", help="every row at small sizes (a smoke test, under a minute)")
    parser.add_argument(
        "--only",
        action="append",
        metavar="NAME",
        default=[],
        help="run only the row NAME, or every row of section NAME (repeatable; see --list)",
    )
    parser.add_argument("--issue16", action="store_true", help="only the fleet-scale section (as --only scale)")
    parser.add_argument("--list", action="store_true", help="list the sections and rows, run nothing")
    parser.add_argument("--json", metavar="PATH", help="also write the rows as a JSON report to PATH ('-': stdout)")
    parser.add_argument(
        "--compare",
        metavar="PREVIOUS.json",
        help="compare with an earlier --json report: exit 1 if a target met there is missed now",
    )
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    chosen = set(args.only) | ({"scale"} if args.issue16 else set())
    secs = sections()
    known = {key for key, _, rows in secs} | {name for _, _, rows in secs for name in rows}
    unknown = sorted(chosen - known)
    if unknown:
        print(f"error: unknown row or section: {', '.join(unknown)} (see --list)", file=sys.stderr)
        return 2
    if args.list:
        for key, title, rows in secs:
            print(f"{key}: {title}")
            for name in rows:
                print(f"  {name}")
        return 0
    report: list[dict] = []
    for key, title, rows in secs:
        picked = {n: fn for n, fn in rows.items() if not chosen or key in chosen or n in chosen}
        if not picked:
            continue
        print(f"\n## {title}\n", file=sys.stderr)
        out = [r for name, fn in picked.items() for r in _run_row(name, fn, args.quick)]
        print(f"\n## {title}\n")
        print_table(out)
        report += out
    if args.json:
        text = json.dumps({"format": 1, "quick": args.quick, "rows": report}, indent=2)
        if args.json == "-":
            print(text)
        else:
            pathlib.Path(args.json).write_text(text + "\n", encoding="utf-8")
    return compare(report, args.compare) if args.compare else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
