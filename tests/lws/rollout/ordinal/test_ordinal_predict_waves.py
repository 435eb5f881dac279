"""The Ordinal prediction at scale: in waves when the groups to roll exceed the group-by-group
walk, bounded work, and a plain note instead of "only the first 0 remaining stages"."""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path

from hypothesis import given, settings
from support.ordinal_rollouts import rollouts as ordinal_rollouts

from pulumi_lws.lws.reconcile import ReconcileOptions
from pulumi_lws.lws.revision import build_catalog
from pulumi_lws.lws.rollout.ordinal.algo import LeaderSts, RolloutInputs
from pulumi_lws.lws.rollout.ordinal.planner import plan_ordinal
from pulumi_lws.lws.rollout.ordinal.predict import (
    MAX_MODEL_STEPS,
    available,
    groups_to_roll,
    predict,
    predict_waves,
    prediction,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "bench"))
from bench_fixtures import fleet_lws, mid_rollout_snapshot


def _mid_rollout(groups: int):
    lws = fleet_lws(groups)
    snap = mid_rollout_snapshot(lws)
    return lws, snap, build_catalog(lws, snap.list("ControllerRevision"))


def test_a_large_mid_rollout_is_predicted_in_waves_to_the_end_within_budgets() -> None:
    lws, snap, catalog = _mid_rollout(2_000)  # 1,000 groups to roll > MAX_MODEL_STEPS
    stage = plan_ordinal(lws, snap, catalog, ReconcileOptions())
    r, mu, ms = 2_000, 200, 100  # maxUnavailable 10%, maxSurge 5%
    assert stage.remaining, stage.notes
    assert any(n.startswith("prediction in waves: 1,000 groups to roll") for n in stage.notes)
    assert not any("only the first" in n or "stopped" in n for n in stage.notes)
    last = stage.remaining[-1]
    assert (last.replicas, last.partition, last.groups) == (r, 0, "U" * r)
    partitions = [stage.partition] + [p.partition for p in stage.remaining]
    assert partitions == sorted(partitions, reverse=True)
    for p in stage.remaining:
        assert p.replicas <= r + ms
        assert available(p.groups, p.replicas, r) >= r - mu, p  # the floor holds in every stage
    assert len(stage.remaining) < 20  # a handful of waves, not one row per group


def test_the_prediction_of_ten_thousand_groups_is_bounded_by_work() -> None:
    lws, snap, catalog = _mid_rollout(10_000)
    observed = plan_ordinal(lws, snap, catalog, ReconcileOptions())
    assert observed.remaining[-1].groups == "U" * 10_000
    from pulumi_lws.lws.rollout.ordinal.groups import observe_ordinal_groups
    from pulumi_lws.lws.rollout.ordinal.planner import ordinal_inputs

    inp = ordinal_inputs(
        lws, snap.get("StatefulSet", "fleet"), observe_ordinal_groups(lws, snap, catalog.target.key), catalog.target.key
    )
    t0 = time.perf_counter()
    p = prediction(inp)
    assert time.perf_counter() - t0 < 0.5  # generous on a loaded CI box; bench/run.py has the real figure
    assert p.waves and p.finished and p.to_roll == 5_000


def test_small_rollouts_keep_the_exact_group_by_group_walk() -> None:
    inp = RolloutInputs(
        replicas=4, max_unavailable=1, max_surge=0, sts=LeaderSts(4, 0, 4), template_changed=True, states="oooo"
    )
    p = prediction(inp)
    assert not p.waves and p.finished and p.notes() == ()
    assert [(s.replicas, s.partition) for s in p.stages] == [(4, 2), (4, 1), (4, 0)]


def test_a_cut_walk_says_it_stopped_and_never_reports_zero_stages() -> None:
    inp = RolloutInputs(
        replicas=3_000,
        max_unavailable=1,
        max_surge=0,
        sts=LeaderSts(3_000, 0, 3_000),
        template_changed=True,
        states="o" * 3_000,
    )  # one group per stage: 3,000 waves
    p = prediction(inp)
    assert p.waves and not p.finished and len(p.stages) > 0
    assert any(n.startswith(f"prediction stopped after {len(p.stages)} stages") for n in p.notes())


def rollouts():
    return ordinal_rollouts(12, 4)


@given(rollouts())
@settings(max_examples=150, deadline=None)
def test_waves_end_where_the_exact_walk_ends_with_the_floor_held(case) -> None:
    """Both walks are fixed points of the same rule on reachable observations: they end in the same
    final stage, and waves never take more stages than groups."""
    inp, order = case
    exact, waves = predict(inp, order), predict_waves(inp, order)
    end = lambda steps: (steps[-1].decision.replicas, steps[-1].decision.partition, steps[-1].states)  # noqa: E731
    assert end(waves) == end(exact)
    assert len(waves) <= len(exact)
    floor = max(0, inp.replicas - inp.max_unavailable)
    for step in waves:
        assert step.decision.replicas <= inp.replicas + inp.max_surge
        assert available(step.states, step.decision.replicas, inp.replicas) >= floor


def test_groups_to_roll_counts_every_group_not_ready_and_updated() -> None:
    inp = RolloutInputs(replicas=5, max_unavailable=1, max_surge=1, sts=LeaderSts(6, 2, 5), states="UUoxuU")
    assert groups_to_roll(inp) == 3
    assert groups_to_roll(replace(inp, states="UUUUUU")) == 0
    assert MAX_MODEL_STEPS == 400


def test_plan_of_a_large_fleet_is_a_handful_of_wave_rows_to_the_end() -> None:
    from pulumi_lws.lws.rollout.plan_trace import build_trace

    old, new = fleet_lws(1_000, image="img:1"), fleet_lws(1_000, image="img:2")
    trace = build_trace(old, new, "ScaleFirst")
    assert trace.converged and not getattr(trace, "blocked", None)
    assert len(trace.rows) < 30
    assert trace.rows[-1].groups and all(c.state == "U" for c in trace.rows[-1].groups)
    assert any("groups ready" in r.note for r in trace.rows[2:])
