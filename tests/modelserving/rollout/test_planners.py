"""The stage planners: the seed's tables, the surge example, blockers, and hypothesis properties."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pulumi_lws.modelserving.groups import GroupState, RoleReplicaState
from pulumi_lws.modelserving.rollout.budgets import (
    scale_role_budget,
    scale_servinggroup_budget,
)
from pulumi_lws.modelserving.rollout.role import RoleSpec
from pulumi_lws.modelserving.rollout.role_planner import (
    observe_after as role_observe_after,
)
from pulumi_lws.modelserving.rollout.role_planner import plan_role_rollout
from pulumi_lws.modelserving.rollout.servinggroup import (
    SURGE_NOT_READY,
    WAITING,
    observe_after,
    plan_servinggroup_rollout,
)
from pulumi_lws.modelserving.rollout.stage import role_stage, servinggroup_stage


def healthy(n, rev="old"):
    return [GroupState(i, rev, "Running") for i in range(n)]


def run_sg(budget, obs, limit=60):
    plans = []
    for _ in range(limit):
        p = plan_servinggroup_rollout(budget, "new", obs, known_revisions={"old"}, current_revision="old")
        plans.append(p)
        if p.complete or (p.blocker and not p.changed):
            break
        obs = observe_after(p, ready=[g.ordinal for g in p.groups], gone=True)
    return plans


def test_seed_six_stage_table():
    """4 replicas, maxUnavailable 1: R-3 first, then R-2, R-1, R-0 (⏳ = u, ✅ = U, ❎ = o)."""
    plans = run_sg(scale_servinggroup_budget(4, 1, 0, 0), healthy(4))
    assert [p.chars() for p in plans] == ["ooou", "oouU", "ouUU", "uUUU", "UUUU"]  # stages 2..6
    assert plans[-1].complete and plans[0].remaining[-1].groups == "UUUU"
    assert [r.groups for r in plans[0].remaining] == ["oouU", "ouUU", "uUUU", "UUUU"]
    stage = servinggroup_stage(plans[0])
    assert stage.policy == "modelserving/servinggroup" and stage.group_revisions == {
        "0": "old",
        "1": "old",
        "2": "old",
        "3": "new",
    }
    assert [g.phase for g in stage.groups] == ["", "", "", "replacing"]


def test_seed_surge_example_bounds_and_end_state():
    b = scale_servinggroup_budget(4, 0, 1, 0)
    plans = run_sg(b, healthy(4))
    for p in plans:
        assert p.live <= 5 and p.available >= 4
    assert plans[-1].complete and sorted(plans[-1].desired) == [1, 2, 3, 4]  # addenda §3.9


def test_surge_group_never_ready_waits_with_named_blocker():
    b = scale_servinggroup_budget(4, 0, 1, 0)
    first = plan_servinggroup_rollout(b, "new", healthy(4))
    assert first.desired == {0: "old", 1: "old", 2: "old", 3: "old", 4: "new"} and first.blocker is None
    again = plan_servinggroup_rollout(b, "new", observe_after(first))
    assert not again.changed and again.deleted == () and again.available == 4
    assert again.blocker.code == SURGE_NOT_READY
    assert again.blocker.message == "surge group ms-4 is not ready (unschedulable?)"


def test_blocker_words_name_an_in_place_replacement_apart_from_a_surge_group():
    """Issue 24: with a ready surge group, an outdated group replaced in place that is not ready
    yet is an "in-place replacement", never a "surge group"; both unready: both named."""
    b = scale_servinggroup_budget(4, 0, 1, 0)  # maxUnavailable 0, maxSurge 1
    obs = [
        GroupState(0, "old", "Running"),
        GroupState(1, "old", "Running"),
        GroupState(2, "old", "Running"),
        GroupState(3, "new", "Creating"),
        GroupState(4, "new", "Running"),
    ]
    plan = plan_servinggroup_rollout(b, "new", obs)
    assert not plan.changed and plan.blocker.code == WAITING
    assert plan.blocker.message == "waiting for in-place replacement ms-3 to become ready"
    assert plan.blocker.groups == ("3",)
    both = [*obs[:4], GroupState(4, "new", "Creating")]
    plan = plan_servinggroup_rollout(b, "new", both)
    assert plan.blocker.code == SURGE_NOT_READY
    assert plan.blocker.message == (
        "surge group ms-4 is not ready (unschedulable?); in-place replacement ms-3 is not ready"
    )
    assert plan.blocker.groups == ("4", "3")


def test_waiting_blocker_and_missing_revision():
    b = scale_servinggroup_budget(4, 1, 0, 0)
    p = plan_servinggroup_rollout(b, "new", observe_after(plan_servinggroup_rollout(b, "new", healthy(4))))
    assert p.blocker.code == WAITING and p.blocker.message == "waiting for groups [ms-3] to become ready"
    # protected ordinal 1 missing, its revision not stored -> upstream's error, nothing created
    b = scale_servinggroup_budget(4, 1, 0, 2)
    obs = [GroupState(0, "old", "Running"), GroupState(2, "old", "Running"), GroupState(3, "old", "Running")]
    p = plan_servinggroup_rollout(b, "new", obs, current_revision="old", known_revisions=())
    assert p.error == "ControllerRevision old for protected ordinal 1 was not found" and 1 not in p.desired


def test_non_fused_deletion_waits_for_the_group_to_go():
    """{1,2,3,4}, U=1: deleting 4 frees an ordinal sync would not reuse (it fills 0): 4 just goes."""
    b = scale_servinggroup_budget(4, 1, 0, 0)
    obs = [GroupState(o, "old", "Running") for o in (1, 2, 3, 4)]
    p = plan_servinggroup_rollout(b, "new", obs)
    assert p.deleted == (4,) and 0 not in p.desired
    p2 = plan_servinggroup_rollout(b, "new", observe_after(p, gone=True))
    assert p2.desired[0] == "new"


def test_role_stage_encoding_and_cap_warning():
    specs = [RoleSpec("prefill", 2, "P2", scale_role_budget(2, 1, 0, 0))]
    obs = [
        GroupState(g, "old", "Running", 0, tuple(RoleReplicaState("prefill", r, "P1", "Running") for r in range(2)))
        for g in range(2)
    ]
    p = plan_role_rollout(specs, "new", obs, replicas=2)
    assert p.warnings and "below ready" in p.warnings[0]
    s = role_stage(p)
    assert (
        s.policy == "modelserving/role" and s.group_revisions["0/prefill/1"] == "P2" and s.group_revisions["0"] == "old"
    )
    capped = plan_role_rollout(specs, "new", obs, replicas=2, max_groups_in_flight=1)
    assert not capped.warnings and capped.deferred == (0,)
    assert capped.desired["0/prefill/1"] == "P1" and capped.desired["1/prefill/1"] == "P2"


# ---- hypothesis ---------------------------------------------------------------------------------

sg_cases = st.tuples(st.integers(1, 6), st.integers(0, 3), st.integers(0, 2), st.integers(0, 3)).filter(
    lambda t: t[1] + t[2] > 0 and t[1] <= t[0]
)


@settings(max_examples=60)
@given(sg_cases, st.randoms(use_true_random=False))
def test_sg_bounds_partition_convergence_idempotence(case, rnd):
    replicas, mu, ms, part = case
    b = scale_servinggroup_budget(replicas, mu, ms, part)
    obs = healthy(replicas)
    for _step in range(4 * (replicas + ms) + 8):
        p = plan_servinggroup_rollout(b, "new", obs, known_revisions={"old"}, current_revision="old", predict=False)
        again = plan_servinggroup_rollout(b, "new", obs, known_revisions={"old"}, current_revision="old", predict=False)
        assert again == p  # deterministic
        assert p.live <= replicas + ms
        assert p.available >= replicas - mu
        assert all(p.desired[o] == "old" for o in p.desired if o < part)  # partition respected
        if p.changed:  # re-planning on the applied, unchanged-readiness observation changes nothing more
            re = plan_servinggroup_rollout(
                b, "new", observe_after(p), known_revisions={"old"}, current_revision="old", predict=False
            )
            assert re.desired == p.desired and not re.changed
        if p.complete:
            return
        if not p.changed:
            assert p.blocker is not None
        # some groups become ready, some deletions finish (in any order)
        ready = [g.ordinal for g in p.groups if rnd.random() < 0.7]
        gone = [g.ordinal for g in p.groups if rnd.random() < 0.7]
        obs = observe_after(p, ready=ready, gone=gone)
    raise AssertionError("did not converge")


role_cases = st.tuples(
    st.integers(1, 3), st.integers(1, 4), st.integers(0, 2), st.integers(0, 2), st.sampled_from([None, 1])
).filter(lambda t: t[2] + t[3] > 0 and t[2] <= t[1])


@settings(max_examples=40)
@given(role_cases, st.randoms(use_true_random=False))
def test_role_bounds_and_convergence(case, rnd):
    groups, rr, mu, ms, cap = case
    specs = [
        RoleSpec("prefill", rr, "P2", scale_role_budget(rr, mu, ms, 0)),
        RoleSpec("decode", 1, "D1", scale_role_budget(1, 1, 0, 0)),
    ]
    obs = [
        GroupState(
            g,
            "old",
            "Running",
            0,
            tuple(
                [RoleReplicaState("prefill", r, "P1", "Running") for r in range(rr)]
                + [RoleReplicaState("decode", 0, "D1", "Running")]
            ),
        )
        for g in range(groups)
    ]
    for _ in range(6 * groups * (rr + ms) + 10):
        p = plan_role_rollout(specs, "new", obs, replicas=groups, max_groups_in_flight=cap, predict=False)
        assert p == plan_role_rollout(specs, "new", obs, replicas=groups, max_groups_in_flight=cap, predict=False)
        in_flight = 0
        for g in p.group_revisions:
            mine = [r for r in p.roles if r.group == g and r.role == "prefill"]
            assert len(mine) <= rr + ms
            assert sum(1 for r in mine if r.declared and r.status == "Running") >= rr - mu
            in_flight += not p.group_ready(g)
        if cap is not None and mu > 0:
            assert in_flight <= max(cap, 1)
        if p.complete:
            return
        if not p.changed:
            assert p.blocker is not None
        ready = {r.key for r in p.roles if rnd.random() < 0.7}
        obs = role_observe_after(p, ready=ready, gone=rnd.random() < 0.8)
    raise AssertionError("role rollout did not converge")
