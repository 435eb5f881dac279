"""A ModelServing prediction longer than the stages shown one by one is walked to its end (within
its work bound) and shown in waves: a subsequence of the exact walk's stages ending at its final,
complete stage; a walk cut at its work bound says so; a walk that fits is shown whole."""

from __future__ import annotations

import pytest

from pulumi_lws.modelserving.groups import GroupState, RoleReplicaState
from pulumi_lws.modelserving.rollout import role_planner, servinggroup, waves
from pulumi_lws.modelserving.rollout.budgets import ServingGroupBudget, scale_role_budget
from pulumi_lws.modelserving.rollout.role import RoleSpec


def sg_plan(groups: int) -> servinggroup.ServingGroupPlan:
    obs = [GroupState(i, "old", "Running") for i in range(groups)]
    return servinggroup.plan_servinggroup_rollout(ServingGroupBudget(groups), "new", obs, current_revision="old")


SPECS = (
    RoleSpec("prefill", 2, "P2", scale_role_budget(2, 1, 0, 0)),
    RoleSpec("decode", 1, "D2", scale_role_budget(1, 1, 0, 0)),
)


def role_plan(groups: int) -> role_planner.RolePlan:
    obs = [
        GroupState(
            g,
            "old",
            "Running",
            0,
            (
                *(RoleReplicaState("prefill", r, "P1", "Running") for r in range(2)),
                RoleReplicaState("decode", 0, "D1", "Running"),
            ),
        )
        for g in range(groups)
    ]
    return role_planner.plan_role_rollout(SPECS, "new", obs, replicas=groups, max_groups_in_flight=1)


def exact_walk(plan: object) -> list[object]:
    walk = servinggroup.walk if isinstance(plan, servinggroup.ServingGroupPlan) else role_planner.walk
    kw = {"current_revision": "old"} if isinstance(plan, servinggroup.ServingGroupPlan) else {"max_groups_in_flight": 1}
    stages = []
    for stage, _, last in walk(plan, **kw):  # type: ignore[arg-type]
        stages.append(stage)
        if last:
            break
    return stages


def is_subsequence(part: tuple[object, ...], whole: list[object]) -> bool:
    it = iter(whole)
    return all(any(s == w for w in it) for s in part)


@pytest.fixture
def lowered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(waves, "MAX_PREDICTED", 10)
    monkeypatch.setattr(waves, "MAX_WAVES", 6)


@pytest.mark.parametrize("make", [lambda: sg_plan(40), lambda: role_plan(12)], ids=["servinggroup", "role"])
def test_waves_end_at_the_exact_walks_complete_stage(lowered: None, make) -> None:  # type: ignore[no-untyped-def]
    exact = exact_walk(make())
    assert len(exact) > 10 and exact[-1].complete  # type: ignore[attr-defined]
    plan = make()  # predicted with the lowered bounds
    assert len(plan.remaining) <= 6
    assert plan.remaining[-1] == exact[-1]
    assert is_subsequence(plan.remaining, exact)
    notes = plan.notes if isinstance(plan, servinggroup.ServingGroupPlan) else plan.warnings
    assert any(n.startswith(f"prediction in waves: {len(exact)} stages exceed the 10 shown") for n in notes)
    assert not any("prediction stopped" in n for n in notes)


def test_a_walk_that_fits_is_shown_stage_by_stage() -> None:
    plan = sg_plan(40)
    assert list(plan.remaining) == exact_walk(plan) and plan.notes == ()


def test_a_walk_cut_at_its_work_bound_says_so(lowered: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(waves, "MAX_WORK", 40 * 20)  # 20 stages of 40 groups, then stop
    exact = exact_walk(sg_plan(40))
    plan = sg_plan(40)
    assert not plan.remaining[-1].complete and is_subsequence(plan.remaining, exact)
    assert plan.remaining[-1] == exact[19]
    assert any(n.startswith("prediction stopped after 20 stages (800 planner-group visits)") for n in plan.notes)


def test_the_walk_never_stops_before_the_stages_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(waves, "MAX_WORK", 1)
    plan = sg_plan(40)
    assert list(plan.remaining) == exact_walk(plan)  # 40 stages < 200 shown: the work bound does not cut


def test_waves_groups_consecutive_stages_ending_at_the_last() -> None:
    stages = list(range(1, 101))
    assert waves.waves(stages, 7) == (15, 30, 45, 60, 75, 90, 100)  # type: ignore[arg-type]
    assert waves.waves(stages[:5], 7) == tuple(stages[:5])  # type: ignore[arg-type]
