"""``make bench``: speed and size figures with their targets, as a table.

Figures are medians of repeated runs (or ratios measured in the same process), so they are
comparable across machines. Targets (issue "Reliability and performance harness"):
plan next stage for 10,000 groups <= 10 ms; render 10,000 groups <= 1 s; component registration
under the mock engine <= 1.15x registering the same objects bare; simulate a 100-group rollout in
seconds; API calls per reconcile <= 8.
"""
from __future__ import annotations

import json
import pathlib
import statistics
import sys
import time
from typing import Callable

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


def bench_plan(groups: int = 10_000) -> dict:
    from pulumi_lws.revision import build_catalog
    from pulumi_lws.reconcile import ReconcileOptions
    from pulumi_lws.rollout.ordinal import plan_ordinal

    lws = fleet_lws(groups)
    snap = mid_rollout_snapshot(lws)
    catalog = build_catalog(lws, snap.list("ControllerRevision"))
    t = median_seconds(lambda: plan_ordinal(lws, snap, catalog, ReconcileOptions()))
    return {"figure": f"plan next stage, {groups:,} groups", "value": f"{t * 1000:.1f} ms", "target": "<= 10 ms", "ok": t <= 0.010}


def bench_render(groups: int = 10_000) -> dict:
    from pulumi_lws.reconcile import reconcile
    from pulumi_lws.observe import EMPTY

    lws = fleet_lws(groups)
    t = median_seconds(lambda: reconcile(lws, EMPTY), repeat=3)
    return {"figure": f"plan + render, {groups:,} groups", "value": f"{t:.2f} s", "target": "<= 1 s", "ok": t <= 1.0}


def bench_registration(groups: int = 100) -> dict:
    from bench_registration import ratio

    r, comp, bare = ratio(groups)
    return {"figure": f"component vs bare registration, {groups} groups", "value": f"{r:.2f}x ({comp:.2f} s vs {bare:.2f} s)", "target": "<= 1.15x", "ok": r <= 1.15}


def bench_simulation(groups: int = 100) -> dict:
    from bench_sim import run

    figures = run(groups)
    t = figures["seconds"]
    return {"figure": f"simulate a {groups}-group rollout (pure engine)", "value": f"{t:.2f} s ({figures.get('reconciles', '?')} reconciles)", "target": "seconds (<= 10 s)", "ok": t <= 10}


def bench_api_calls(groups: int = 50) -> dict:
    from bench_api_calls import count_calls

    n = count_calls(groups)
    return {"figure": f"API calls per reconcile, {groups} groups", "value": str(n), "target": "<= 8", "ok": n <= 8}


BENCHES = [bench_plan, bench_render, bench_registration, bench_simulation, bench_api_calls]


def main(argv: list[str]) -> int:
    rows = []
    for bench in BENCHES:
        try:
            rows.append(bench())
        except Exception as exc:  # a missing piece is reported, not hidden
            rows.append({"figure": bench.__name__, "value": f"error: {exc}", "target": "", "ok": False})
        print(f"  {rows[-1]['figure']}: {rows[-1]['value']}", file=sys.stderr)
    print("| figure | value | target | met |")
    print("|---|---|---|---|")
    for r in rows:
        print(f"| {r['figure']} | {r['value']} | {r['target']} | {'yes' if r['ok'] else 'NO'} |")
    if "--json" in argv:
        print(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
