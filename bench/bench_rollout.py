"""Rollout control benchmark: the ``pulumi-lws rollout`` driver's own overhead per stage and the cost
of :func:`pulumi_lws.core.features.control.govern` per reconcile, against the plan + render time of the same
1,000-group LeaderWorkerSet on its mid-rollout snapshot (``bench_fixtures``).

The driver's overhead is what :func:`pulumi_lws.cli.rollout.drive` spends per stage outside
``pulumi up`` and the wait: reading the outputs, the progress line (``RolloutResult.overhead``).
``bench/run.py`` imports :func:`figures`; ``python bench/bench_rollout.py`` prints them.
"""

from __future__ import annotations

import io
import statistics
import sys
import time
from typing import Any


def _inputs(groups: int):
    from bench_fixtures import fleet_lws, mid_rollout_snapshot

    lws = fleet_lws(groups)
    return lws, mid_rollout_snapshot(lws)


def figures(groups: int = 1_000, stages: int = 50) -> dict[str, Any]:
    from pulumi_lws.cli.progress import Display
    from pulumi_lws.cli.rollout import drive
    from pulumi_lws.components.outputs import stage_summary
    from pulumi_lws.core.features.control import govern, resolve
    from pulumi_lws.lws.reconcile import ReconcileOptions, reconcile
    from pulumi_lws.lws.workload import WORKLOAD

    lws, snap = _inputs(groups)
    plan_times, govern_times = [], []
    for _ in range(5):
        t0 = time.perf_counter()
        raw = reconcile(lws, snap, ReconcileOptions())
        t1 = time.perf_counter()
        result = govern(raw, snap, resolve("LeaderWorkerSet", lws.name, lws.metadata.annotations), total=groups)
        t2 = time.perf_counter()
        plan_times.append(t1 - t0)
        govern_times.append(t2 - t1)
    plan, gov = statistics.median(plan_times), statistics.median(govern_times)
    outputs = {
        "web": {
            "stage": stage_summary(result.stage),
            "blocker": None,
            "status": WORKLOAD.status(lws, snap, result.stage),
        }
    }

    class Stack:
        def up(self) -> dict:
            return outputs

    res = drive(
        Stack(),
        max_stages=stages,
        interval=0,
        patience=10**6,
        sleep=lambda s: None,
        display=Display(io.StringIO(), tty=False),
    )
    driver = statistics.median(res.overhead)
    return {"groups": groups, "plan_render_seconds": plan, "govern_seconds": gov, "driver_seconds_per_stage": driver}


def bench_rollout_control(groups: int = 1_000) -> dict[str, Any]:
    """The ``make bench`` row (``bench/run.py``): the driver's overhead per stage and govern's cost
    per reconcile, both against plan + render of the same workload."""
    f = figures(groups)
    plan, gov, drv = f["plan_render_seconds"], f["govern_seconds"], f["driver_seconds_per_stage"]
    return {
        "figure": f"rollout control, {groups:,} groups mid-rollout: pulumi-lws rollout driver overhead per stage / "
        "govern (pause + deadline) per reconcile",
        "value": f"{drv * 1e3:.3f} ms / {gov * 1e3:.1f} ms ({drv / plan:.2%} / {gov / plan:.1%} of plan + render, "
        f"{plan * 1e3:.0f} ms)",
        "target": "<= 1% / <= 15% of plan + render",
        "ok": drv <= 0.01 * plan and gov <= 0.15 * plan,
    }


def main() -> int:
    f = figures()
    print(
        f"plan + render {f['groups']} groups: {f['plan_render_seconds'] * 1e3:.1f} ms; govern: "
        f"{f['govern_seconds'] * 1e3:.2f} ms; driver per stage: {f['driver_seconds_per_stage'] * 1e3:.3f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent))
    sys.exit(main())
