"""Hash-mode prediction (lws/rollout/hash/predict.py): the Deployment + gate model, ``Stage.remaining``."""

from __future__ import annotations

import itertools

import pytest
from support.fixtures_hash import cr, leader, make_lws, rev, snap, worker_sts

from pulumi_lws.lws.reconcile import reconcile
from pulumi_lws.lws.rollout.hash.predict import (
    MAX_MODEL_STEPS,
    ModelGroup,
    deployment_budgets,
    finished,
    initial_state,
    is_done,
    predict,
)


def start(r0, replicas, ms, mu, policy="PostTermination", new=False):
    groups = [ModelGroup(id=f"#{n}", new=new, ready=True, gated=False) for n in range(1, r0 + 1)]
    return initial_state(groups, replicas, ms, mu, policy)


def shape(state):
    """One token per group: legend char plus 🔒 gated / 🗑 terminating (gone groups: '-')."""
    return " ".join(g.char + {"gated": "🔒", "terminating": "🗑"}.get(g.detail, "") for g in state.groups)


def run(r0, replicas, ms, mu, policy="PostTermination", new=False):
    return predict(start(r0, replicas, ms, mu, policy, new), next_id=r0 + 1)


def test_deployment_budgets_round_like_the_deployment_controller():
    assert deployment_budgets("25%", "25%", 10) == (3, 2)  # surge ceil, unavailable floor
    assert deployment_budgets(0, 0, 4) == (0, 1)  # ResolveFenceposts
    assert deployment_budgets("100%", 0, 3) == (3, 0)  # no min(MS, R) cap
    assert deployment_budgets(5, 1, 2) == (5, 1)


def test_seeds_trace_r2_mu1_ms1_post_termination():
    steps = run(2, 2, 1, 1)
    # documented stages 2..5 (stage 1 is the start: both old groups ready)
    assert [shape(s) for s in steps] == [
        "o x🗑 u u🔒",  # Deployment creates ccc, ddd, terminates bbb; G=2, T=1: ccc admitted, ddd waits
        "o - u u",  # bbb gone: ddd admitted
        "x🗑 - U u",  # ccc ready: the Deployment terminates aaa
        "- - U U",  # aaa gone, ddd ready: complete
    ]
    assert is_done(steps[-1]) and finished(steps)


def test_seeds_trace_immediate_ungates_ddd_in_stage_2():
    steps = run(2, 2, 1, 1, policy="Immediate")
    assert shape(steps[0]) == "o x🗑 u u"
    assert is_done(steps[-1])


def test_max_unavailable_0_surges_one_group_at_a_time():
    steps = run(2, 2, 1, 0)
    assert [shape(s) for s in steps] == ["o o u", "o x🗑 U u🔒", "o - U u", "x🗑 - U U", "- - U U"]
    assert all(s.available >= 2 for s in steps)  # R - MU


def test_ten_replicas_25_percent():
    steps = run(10, 10, "25%", "25%")
    first = steps[0]
    assert sum(1 for g in first.groups if g.terminating) == 2  # MU = 2 old groups at once
    new = [g for g in first.groups if g.new]
    assert len(new) == 5 and sum(1 for g in new if not g.gated) == 3  # G=5, T=2: 3 admitted
    for s in steps:
        assert len(s.live()) <= 13 and s.available >= 8  # R + MS (ceil 2.5), R - MU (floor 2.5)
    assert is_done(steps[-1]) and len([g for g in steps[-1].groups if g.new]) == 10


def test_combined_template_change_and_scale_up_disrupts_no_old_group_first():
    # newReplicas - oldReplicas (2) >= maxUnavailable (1): old groups keep running at first
    steps = run(2, 4, 1, 1)
    assert shape(steps[0]) == "o o u u u"
    assert is_done(steps[-1]) and all(s.available >= 2 for s in steps)


def test_combined_change_within_max_unavailable_replaces_old_groups_at_once():
    # 1 -> 2 with MU 2 (> delta): the Deployment terminates the old group immediately (seeds §717 remedy)
    steps = run(1, 2, 0, 2)
    assert shape(steps[0]) == "x🗑 u u🔒"
    assert is_done(steps[-1])


def test_717_shape_mu1_ms0():
    steps = run(1, 2, 0, 1)
    assert [shape(s) for s in steps] == ["o u", "x🗑 U u🔒", "- U u", "- U U"]


def test_scale_without_template_change():
    up = run(2, 3, 1, 1, new=True)
    assert [shape(s) for s in up] == ["U U u", "U U U"]
    down = run(3, 2, 1, 1, new=True)
    assert [shape(s) for s in down] == ["U U u🗑", "U U -"]  # newest deleted first


@pytest.mark.parametrize(
    "r0, replicas, ms, mu, policy",
    [
        (r0, r, ms, mu, pol)
        for r0, r, ms, mu, pol in itertools.product(
            (1, 3, 4), (1, 3, 5), (0, 1, "50%"), (0, 1, "25%"), ("PostTermination", "Immediate")
        )
    ],
)
def test_invariants(r0, replicas, ms, mu, policy):
    steps = run(r0, replicas, ms, mu, policy)
    surge, unavailable = deployment_budgets(ms, mu, replicas)
    for s in steps:
        assert len(s.live()) <= max(r0, replicas + surge)
        assert s.available >= max(0, min(r0, replicas) - unavailable)
        assert sum(1 for g in s.live(new=True) if not g.gated) <= replicas  # revision cap
        assert not any(not g.new and not g.gated and g.id.startswith("#") and int(g.id[1:]) > r0 for g in s.groups)
    assert is_done(steps[-1]) and finished(steps)


# ---- Stage.remaining from a hand-built snapshot ---------------------------------------------------

V1, V2 = make_lws(image="v1"), make_lws(image="v2")
R1, R2 = rev(V1), rev(V2)


def test_stage_remaining_at_seed_stage_2():
    aaa = leader("web-aaa", R1, created=0, gated=False, ready=True, group_ready="True")
    bbb = leader("web-bbb", R1, created=1, gated=False, deleting=True)
    ccc = leader("web-ccc", R2, created=5)
    ddd = leader("web-ddd", R2, created=6)
    stage = reconcile(V2, snap(cr(V1, 1), cr(V2, 2), aaa, worker_sts(aaa), bbb, ccc, ddd)).stage
    assert [p.groups for p in stage.remaining] == ["o-uu", "x-Uu", "--UU"]  # documented stages 3, 4, 5
    assert all(p.replicas == 2 and p.partition is None for p in stage.remaining)


def test_stage_remaining_right_after_a_template_change():
    a = leader("web-a", R1, created=0, gated=False, ready=True, group_ready="True")
    b = leader("web-b", R1, created=1, gated=False, ready=True, group_ready="True")
    objs = [cr(V1), a, b, worker_sts(a), worker_sts(b)]
    stage = reconcile(V2, snap(*objs)).stage  # template change: the Deployment has not acted yet
    assert [p.groups for p in stage.remaining] == ["oxuu", "o-uu", "x-Uu", "--UU"]  # stages 2..5


def test_stage_remaining_empty_when_complete():
    from support.fixtures_hash import deployment

    a = leader("web-a", R1, created=0, gated=False, ready=True, group_ready="True")
    b = leader("web-b", R1, created=1, gated=False, ready=True, group_ready="True")
    stage = reconcile(
        V1, snap(cr(V1), a, b, worker_sts(a), worker_sts(b), deployment(R1, replicas=2, ready=2, updated=2))
    ).stage
    assert stage.complete and stage.remaining == ()


def test_stuck_group_ends_the_prediction_without_claiming_it_was_cut():
    groups = [ModelGroup(id="#1", new=True, ready=False, gated=False, stuck=True)]
    steps = predict(initial_state(groups, 1, 1, 1), next_id=2)
    assert not is_done(steps[-1]) and finished(steps) and len(steps) == 1


def test_long_prediction_is_cut():
    cut = predict(start(600, 600, 1, 0), next_id=601)
    assert len(cut) == MAX_MODEL_STEPS and not is_done(cut[-1]) and not finished(cut)
