"""The DisaggregatedSet prediction in waves (``rollout/predict.py``, module doc "Waves"): a walk
longer than the stages shown one by one is shown as waves of consecutive stages; every wave is a
stage of the exact walk, in order, within the budgets per role, and the last wave is the walk's
last stage (the completed rollout). A walk that fits is shown stage by stage, unchanged."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pulumi_lws.disaggregatedset.planner import RollingUpdateConfig
from pulumi_lws.disaggregatedset.rollout.observation import (
    ChildObservation,
    RevisionObservation,
    RoleTarget,
    SliceObservation,
)
from pulumi_lws.disaggregatedset.rollout.predict import (
    MAX_PREDICTED,
    PredictedDsStage,
    predict_remaining,
    prediction,
)
from pulumi_lws.disaggregatedset.rollout.stage_planner import plan

A, B = "aaaaaaaa", "bbbbbbbb"


def converged(replicas: dict[str, int]) -> tuple[SliceObservation, ...]:
    children = {r: ChildObservation(n, n) for r, n in replicas.items()}
    return (SliceObservation(0, (RevisionObservation(A, children),)),)


def targets(replicas: dict[str, int], surge: int, unavailable: int) -> list[RoleTarget]:
    return [RoleTarget(r, n, RollingUpdateConfig(surge, unavailable)) for r, n in replicas.items()]


def exact_and_waves(replicas: dict[str, int], surge: int, unavailable: int, shown: int, rows: int):
    obs, roles = converged(replicas), targets(replicas, surge, unavailable)
    first = plan(obs, 1, B, roles)
    exact = prediction(first, obs, 1, roles, shown=10**6)
    waved = prediction(first, obs, 1, roles, shown=shown, rows=rows)
    return exact, waved


def is_subsequence(part: tuple[PredictedDsStage, ...], whole: tuple[PredictedDsStage, ...]) -> bool:
    it = iter(whole)
    return all(any(p == w for w in it) for p in part)


def within_budgets(ps: PredictedDsStage, replicas: dict[str, int], surge: int, unavailable: int) -> bool:
    """Every replica of a predicted stage is ready: live = available = old + new per role."""
    return all(replicas[c.role] - unavailable <= c.old + c.new <= replicas[c.role] + surge for c in ps.cells)


def test_a_long_rollout_is_shown_in_waves_ending_where_the_exact_walk_ends() -> None:
    replicas = {"prefill": 300, "decode": 100}
    exact, waved = exact_and_waves(replicas, 1, 0, shown=50, rows=10)
    assert not exact.waves and exact.finished and len(exact.stages) > 50 and exact.stages[-1].complete
    assert waved.waves and waved.finished and waved.walked == len(exact.stages)
    assert len(waved.stages) <= 10
    assert waved.stages[-1] == exact.stages[-1]  # the completed rollout
    assert is_subsequence(waved.stages, exact.stages)
    assert all(within_budgets(ps, replicas, 1, 0) for ps in waved.stages)
    (note,) = waved.notes()
    assert note.startswith(f"prediction in waves: {len(exact.stages):,} stages exceed the 50 shown one by one")
    assert exact.notes() == ()


def test_a_rollout_that_fits_is_shown_stage_by_stage() -> None:
    replicas = {"prefill": 6, "decode": 2}
    exact, waved = exact_and_waves(replicas, 1, 0, shown=MAX_PREDICTED, rows=3)
    assert waved == exact and not waved.waves and waved.notes() == ()
    obs, roles = converged(replicas), targets(replicas, 1, 0)
    assert predict_remaining(plan(obs, 1, B, roles), obs, 1, roles) == exact.stages


def test_a_walk_cut_at_its_bound_says_so() -> None:
    replicas = {"prefill": 100}
    obs, roles = converged(replicas), targets(replicas, 1, 0)
    cut = prediction(plan(obs, 1, B, roles), obs, 1, roles, shown=5, limit=20, rows=4)
    assert cut.waves and not cut.finished and cut.walked == 20 and not cut.stages[-1].complete
    assert cut.notes()[-1].startswith("prediction stopped after 20 stages")


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 40), min_size=1, max_size=3),
    surge=st.integers(0, 3),
    unavailable=st.integers(0, 3),
    shown=st.integers(0, 10),
    rows=st.integers(1, 8),
)
def test_waves_are_stages_of_the_exact_walk_within_budgets(sizes, surge, unavailable, shown, rows) -> None:
    if surge == 0 and unavailable == 0:
        unavailable = 1
    replicas = {f"role{i}": n for i, n in enumerate(sizes)}
    exact, waved = exact_and_waves(replicas, surge, unavailable, shown, rows)
    assert exact.finished and waved.finished
    if len(exact.stages) <= shown:
        assert waved == exact
        return
    assert waved.waves and len(waved.stages) <= rows and waved.walked == len(exact.stages)
    assert waved.stages[-1] == exact.stages[-1] and waved.stages[-1].complete
    assert is_subsequence(waved.stages, exact.stages)
    # the budgets as the planner applies them (its own tests: lockstep rounding, a role of 1 with
    # maxUnavailable 2): a wave is within them wherever the exact walk is, it adds no stage of its own
    if all(within_budgets(ps, replicas, surge, unavailable) for ps in exact.stages):
        assert all(within_budgets(ps, replicas, surge, unavailable) for ps in waved.stages)
