"""Smoke test of bench/bench_scale.py at tiny sizes: every figure function runs, measures a
positive floor and reports a ratio with its target (the full figures are `make bench`)."""

from __future__ import annotations

import gc
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import bench_scale as B

RATIO = re.compile(r"^(\d+\.\d)x ")


def _check(r: dict) -> None:
    assert set(r) == {"figure", "value", "target", "ok", "why"}
    assert isinstance(r["ok"], bool) and r["target"]
    assert r["ok"] or r["why"] or "registration" in r["figure"], r  # a miss says why


def test_lws_figures_are_ratios_against_same_run_floors() -> None:
    for r in (B.lws_observe_plan_predict(30), B.lws_plan_render(30)):
        _check(r)
        assert RATIO.match(r["value"]), r["value"]
        assert float(RATIO.match(r["value"]).group(1)) > 0
    assert "KiB per group" in B.memory_per_group(30)["value"]


def test_simulated_rollouts_converge_and_report_per_group_cost() -> None:
    rows = B.simulate_sizes((4, 8))
    assert [r["ok"] for r in rows[:2]] == [True, True], rows
    assert "ms CPU per group" in rows[0]["value"] and rows[-1]["value"].startswith("max/min ")


def test_modelserving_and_disaggregatedset_figures() -> None:
    for r in B.ms_reconcile(10) + B.ds_reconcile(2, 4):
        _check(r)
        assert "x unpickling them" in r["value"]


def test_the_bench_restores_the_collector() -> None:
    assert gc.isenabled()
    with B.gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
