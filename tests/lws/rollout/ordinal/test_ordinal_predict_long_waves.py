"""A wave walk longer than MAX_MODEL_STEPS (maxUnavailable 1 / maxSurge 0: one group per wave) is
walked to its end within MAX_WORK and shown in at most MAX_WAVES entries, each a stage the walk
reaches; a walk cut at MAX_WORK is shown as before the bound (its first MAX_MODEL_STEPS stages)."""

from __future__ import annotations

import time
from contextlib import contextmanager

from hypothesis import given, settings
from hypothesis import strategies as st
from support.ordinal_rollouts import rollouts as ordinal_rollouts

from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.rollout.ordinal import predict as P
from pulumi_lws.lws.rollout.ordinal.algo import LeaderSts, RolloutInputs
from pulumi_lws.lws.rollout.ordinal.predict import (
    _stage_changes,
    available,
    predict,
    predict_waves,
    prediction,
    wave_ends,
)
from pulumi_lws.lws.rollout.plan_trace import build_trace


def rollout(r: int, mu: int = 1, ms: int = 0) -> RolloutInputs:
    return RolloutInputs(
        replicas=r, max_unavailable=mu, max_surge=ms, sts=LeaderSts(r, 0, r), template_changed=True, states="o" * r
    )


def key(s) -> tuple:
    return (s.replicas, s.partition, s.groups)


def check_budgets(stages, inp: RolloutInputs) -> None:
    floor = max(0, inp.replicas - inp.max_unavailable)
    for s in stages:
        assert s.replicas <= inp.replicas + inp.max_surge, s.replicas
        assert available(s.groups, s.replicas, inp.replicas) >= floor


@contextmanager
def bounds(**values: int):
    saved = {k: getattr(P, k) for k in values}
    try:
        for k, v in values.items():
            setattr(P, k, v)
        yield
    finally:
        for k, v in saved.items():
            setattr(P, k, v)


def test_wave_ends_group_consecutive_items_and_end_at_the_last() -> None:
    assert wave_ends(3, 5) == [0, 1, 2]
    assert wave_ends(1000, 50) == list(range(19, 1000, 20))
    ends = wave_ends(101, 50)
    assert len(ends) <= 50 and ends[-1] == 100 and ends == sorted(set(ends))


def test_one_group_per_wave_over_a_thousand_groups_is_predicted_to_the_end_in_waves() -> None:
    inp = rollout(1_000)
    t0 = time.process_time()
    p = prediction(inp)
    assert time.process_time() - t0 < 5  # ~0.1 s alone; generous on a loaded box
    assert p.finished and p.waves and p.walked == 999 and len(p.stages) <= P.MAX_WAVES
    full = _stage_changes(predict_waves(inp, max_steps=10**6))
    assert key(p.stages[-1]) == key(full[-1]) == (1_000, 0, "u" + "U" * 999)  # the last stage: partition 0
    walked = {key(s) for s in full}
    assert all(key(s) in walked for s in p.stages)  # every entry is a stage the walk reaches
    partitions = [s.partition for s in p.stages]
    assert partitions == sorted(partitions, reverse=True)
    check_budgets(p.stages, inp)
    notes = p.notes()
    assert notes[0].startswith("prediction in waves: 1,000 groups to roll")
    assert notes[1].startswith("999 predicted stages exceed the 400 shown one by one")
    assert not any("stopped" in n for n in notes)


def test_the_waves_end_at_the_exact_walks_final_state() -> None:
    inp = rollout(600)
    exact = predict(inp, max_steps=10**6)  # group by group, unbounded
    assert exact[-1].states == "U" * 600
    p = prediction(inp)
    assert p.walked and key(p.stages[-1]) == key(_stage_changes(exact)[-1])


def test_surge_only_budgets_stay_within_replicas_plus_max_surge() -> None:
    inp = rollout(1_000, mu=0, ms=1)
    p = prediction(inp)
    assert p.finished and len(p.stages) <= P.MAX_WAVES
    assert (p.stages[-1].replicas, p.stages[-1].partition) == (1_000, 0)
    check_budgets(p.stages, inp)


def test_a_walk_cut_at_the_work_bound_is_shown_as_before_the_bound() -> None:
    inp = rollout(1_000)
    with bounds(MAX_WORK=500_000):  # ~500 waves of 1,000 groups
        p = prediction(inp)
    before = _stage_changes(predict_waves(inp))  # the walk without MAX_WORK: MAX_MODEL_STEPS stages
    assert not p.finished and not p.walked and p.stages == before
    assert any(n.startswith(f"prediction stopped after {len(before)} stages") for n in p.notes())


def lws(image: str) -> LeaderWorkerSet:
    return LeaderWorkerSet.parse(
        {
            "metadata": {"name": "fleet", "namespace": "bench"},
            "spec": {
                "replicas": 1_000,
                "rolloutStrategy": {"rollingUpdateConfiguration": {"maxUnavailable": 1, "maxSurge": 0}},
                "leaderWorkerTemplate": {
                    "size": 2,
                    "workerTemplate": {"spec": {"containers": [{"name": "c", "image": image}]}},
                },
            },
        }
    )


def test_plan_rows_of_a_long_walk_are_bounded_waves_ending_at_the_completed_rollout() -> None:
    old, new = lws("img:1"), lws("img:2")
    trace = build_trace(old, new, "ScaleFirst")
    assert trace.converged and trace.blocked is None
    assert len(trace.rows) <= P.MAX_WAVES + 2  # OLD, the planned stage, the waves
    assert all(c.state == "U" for c in trace.rows[-1].groups) and trace.rows[-1].note.endswith("rollout complete")
    assert trace.rows[2].note.startswith("20 stages: 20 groups ready")
    assert [r.time for r in trace.rows[:4]] == [0, 1, 21, 41]  # each wave under its last stage's number
    assert all(r.live <= 1_000 and r.available >= 999 for r in trace.rows)
    assert trace.warnings[1].startswith("1,000 predicted stages exceed")


def rollouts():
    return ordinal_rollouts(30, 3)


@given(rollouts(), st.integers(1, 6), st.integers(1, 4))
@settings(max_examples=150, deadline=None)
def test_long_walks_in_waves_end_where_the_full_walk_ends_within_budgets(case, steps, rows) -> None:
    """With the bounds lowered, a long walk's entries are stages of the unbounded wave walk, in
    order, at most ``rows`` of them, the last one its end; the budgets hold in each."""
    inp, order = case
    full = _stage_changes(predict_waves(inp, order, max_steps=10**6))
    with bounds(MAX_MODEL_STEPS=steps, MAX_WAVES=rows):
        p = prediction(inp, order)
    if not p.walked:
        return
    assert p.finished and len(p.stages) <= rows and p.walked == len(full)
    assert key(p.stages[-1]) == key(full[-1])
    keys = [key(s) for s in full]
    at = [keys.index(key(s)) for s in p.stages]
    assert at == sorted(at)
    check_budgets(p.stages, inp)
