"""pulumi-lws's surge hold on top of upstream's surge reclamation (docs/rollout.md §2 "Surge hold").

Upstream's ``want(U)`` reclaims surge counting only the not-ready groups in ``[0, R)``; ready surge
groups carry availability too. :func:`hold_surge_for_availability` keeps the smallest replicas
>= upstream's value whose kept ordinals still hold ``min(max(0, R - MU), ready if nothing is
deleted)`` ready groups after the stage (worst case), never above the observed S or R + MS.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from support.fixtures_ordinal import catalog_for, make_lws, snapshot_from_chars

from pulumi_lws.lws.reconcile import ReconcileOptions
from pulumi_lws.lws.revision import revision_key
from pulumi_lws.lws.rollout.budget import (
    hold_surge_for_availability,
    ready_kept,
    rollout_first_parameters,
    rule_for,
    scale_first_parameters,
    surge_held,
)
from pulumi_lws.lws.rollout.ordinal.planner import (
    Decision,
    LeaderSts,
    RolloutInputs,
    fixed_point,
    plan_ordinal,
    rolling_update_parameters,
)
from pulumi_lws.lws.rollout.ordinal.predict import apply_decision, available, predict

# The bug (docs/reliability.md): R=5, MU=2, MS=4; surge groups 7, 8 and group 1 are ready.
BUG = RolloutInputs(5, 2, 4, 0, LeaderSts(9, 1, 5), False, "oUuuuuuUU")


def hold(d, states, r, mu, ms, s):
    return hold_surge_for_availability(d, states, r, mu, ms, s)


def test_upstream_deletes_the_ready_surge_groups_below_the_floor():
    d, _ = fixed_point(BUG)  # upstream-exact rule, kept for the conformance vectors
    assert (d.partition, d.replicas) == (1, 7)
    _, states = apply_decision(BUG, d)
    assert available(states, d.replicas, 5) == 2  # < floor 3


def test_scale_first_keeps_one_ready_surge_group_to_hold_the_floor():
    d, trace = fixed_point(BUG, rule_for("ScaleFirst"))
    assert (d.partition, d.replicas, d.case) == (1, 8, "5")
    assert all(t.replicas == 8 for t in trace)
    _, states = apply_decision(BUG, d)
    assert states == "oUuuuuuU" and available(states, d.replicas, 5) == 3
    assert surge_held(BUG, d) == 1


def test_rollout_first_applies_the_same_hold_outside_phase_a():
    assert rollout_first_parameters(BUG) == scale_first_parameters(BUG) == Decision(1, 8, "5")
    assert fixed_point(BUG, rule_for("RolloutFirst"))[0] == Decision(1, 8, "5")


def test_hold_is_a_no_op_unless_the_statefulset_shrinks():
    d = Decision(1, 9, "5")
    assert hold(d, "oUuuuuuUU", 5, 2, 4, 9) is d
    assert hold(d, "oUuuuuuUU", 5, 2, 4, 8) is d  # growing
    assert hold(Decision(0, 5, "1"), "", 5, 2, 4, None) == Decision(0, 5, "1")  # no StatefulSet yet


def test_not_ready_surge_groups_are_reclaimed_freely():
    # only 2 ready groups whatever happens: nothing ready is deleted, so upstream's value stands
    d = Decision(1, 7, "5")
    assert hold(d, "oUuuuuuuu", 5, 2, 4, 9) is d


def test_hold_keeps_only_as_many_groups_as_the_floor_needs():
    # ready groups 0, 1 are kept by upstream's value 5; group 5 makes 3 = floor; 6, 7, 8 may go
    assert ready_kept("oUuuuUUUU", 1, 5) == 2 and ready_kept("oUuuuUUUU", 1, 6) == 3
    assert hold(Decision(1, 5, "5"), "oUuuuUUUU", 5, 2, 4, 9) == Decision(1, 6, "5")


def test_admitted_old_groups_do_not_count_as_kept():
    # partition 3: groups 3, 4 are old and admitted, so they go down; only U counts at or above it
    states = "ooooouUU"
    assert ready_kept(states, 3, 8) == 5 and ready_kept(states, 3, 6) == 3
    assert hold(Decision(3, 6, "5"), states, 5, 1, 3, 8) == Decision(3, 7, "5")


def test_hold_never_exceeds_r_plus_ms_after_a_scale_down():
    # R went 6 -> 3 (MS 1): upstream's Case 4 shrinks to 4 although the ready groups are above it
    d = Decision(0, 4, "4")
    assert hold(d, "xxxxUU", 3, 1, 1, 6) is d


def test_hold_never_changes_the_partition_or_the_case():
    d = hold(Decision(1, 7, "4"), "oUuuuuuUU", 5, 2, 4, 9)
    assert (d.partition, d.case) == (1, "4") and d.replicas == 8


states_st = st.text(alphabet="Uoux-", max_size=12)


@given(
    states=states_st,
    r=st.integers(1, 8),
    mu=st.integers(0, 8),
    ms=st.integers(0, 8),
    s=st.integers(0, 12),
    p=st.integers(0, 12),
    want=st.integers(0, 12),
)
def test_hold_properties(states, r, mu, ms, s, p, want):
    """Bounds, minimality and the floor: the hold's contract on arbitrary inputs."""
    ms = min(ms, r)
    states = states[:s]
    d = Decision(p, want, "5")
    got = hold(d, states, r, mu, ms, s)
    assert (got.partition, got.case) == (d.partition, d.case)
    assert d.replicas <= got.replicas <= max(d.replicas, min(s, r + ms))
    if want >= s:
        assert got == d
        return
    need = min(max(0, r - mu), ready_kept(states, p, s))
    cap = max(want, min(s, r + ms))
    assert ready_kept(states, p, got.replicas) >= need or got.replicas == cap
    if got.replicas > want:  # minimal: one fewer would leave too few ready
        assert ready_kept(states, p, got.replicas - 1) < need


def test_prediction_model_uses_the_guarded_rule():
    steps = predict(BUG, "ScaleFirst")
    assert (steps[0].decision.partition, steps[0].decision.replicas) == (1, 8)
    for step in steps:
        if step.inputs.sts is not None:
            assert available(step.states, step.decision.replicas, 5) >= 3


def test_plan_ordinal_applies_the_hold_and_says_so():
    old = make_lws(replicas=5, image="v1", size=1, mu=2, ms=4)
    new = make_lws(replicas=5, image="v2", size=1, mu=2, ms=4)
    snap = snapshot_from_chars(
        "oUuuuuuUU", old=old, new=new, sts_key=revision_key(new), sts_replicas=9, partition=1, annotation=5, size=1
    )
    stage = plan_ordinal(new, snap, catalog_for(new, snap), ReconcileOptions())
    assert (stage.partition, stage.replicas) == (1, 8)
    assert any(n.startswith("surge hold: keeping replicas 8 (upstream would reclaim to 7)") for n in stage.notes), (
        stage.notes
    )
    assert rolling_update_parameters(BUG).replicas == 7  # the upstream function itself stays upstream-exact
