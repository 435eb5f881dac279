"""Unit tests of the upstream-mirroring pure functions (reference §1.5/§1.6/§1.7)."""

from __future__ import annotations

import pytest

from pulumi_lws.lws.rollout.ordinal.planner import (
    LeaderSts,
    RolloutInputs,
    calculate_rolling_update_replicas,
    continuous_ready_replicas,
    fixed_point,
    lws_unready_replicas,
    rolling_update_parameters,
    rolling_update_partition,
    scale_budgets,
)


@pytest.mark.parametrize(
    "args,want",
    [
        ((1, 1, 0, 1), 2),
        ((4, 2, 1, 2), 5),
        ((2, 2, 1, 2), 3),
        ((1, 1, 0, 0), 1),
        ((1, 1, 1, 1), 1),
        ((3, 0, 0, 1), 3),
        ((4, 2, 2, 3), 6),
    ],
)
def test_calculate_rolling_update_replicas(args, want):
    assert calculate_rolling_update_replicas(*args) == want


def test_continuous_ready_counts_only_the_top_tail():
    assert continuous_ready_replicas("oouuUU", 6) == 2
    assert continuous_ready_replicas("oUoU", 4) == 1
    assert continuous_ready_replicas("UUUU", 4) == 4
    assert continuous_ready_replicas("UUUU", 6) == 0  # ordinals past the string are absent
    assert continuous_ready_replicas("", 0) == 0


def test_unready_ignores_surge_ordinals():
    assert lws_unready_replicas("uuUUUU", 4) == 2
    assert lws_unready_replicas("UUUUuu", 4) == 0
    assert lws_unready_replicas("UU", 4) == 2


def test_rolling_update_partition_pieces():
    # documentation table second row: step 4, no tail -> base 2, loop stops on the ready old group 2
    assert rolling_update_partition("oooouu", 6, 4, 4) == 2
    # pre-existing unready group below base eats the budget
    assert rolling_update_partition("oxoo", 4, 2, 4) == 3
    # stuck-rollout escape: not-ready groups are passed over
    assert rolling_update_partition("xx", 2, 1, 2) == 1
    assert rolling_update_partition("xU", 2, 1, 1) == 0
    # never rises above current
    assert rolling_update_partition("oUou", 4, 1, 2) == 2


def test_scale_budgets_rounding():
    assert scale_budgets(10, "25%", "25%") == (2, 3)
    assert scale_budgets(2, 1, 4) == (1, 2)  # MS capped at R
    assert scale_budgets(4, "100%", 0) == (4, 0)


def inputs(r=4, mu=1, ms=0, up=0, sts=(4, 0, 4), changed=False, states=""):
    return RolloutInputs(r, mu, ms, up, None if sts is None else LeaderSts(*sts), changed, states)


@pytest.mark.parametrize(
    "inp,want",
    [
        (inputs(sts=None), (0, 4, "1")),
        (inputs(sts=None, up=2), (2, 4, "1")),  # user partition floors Case 1 too
        (inputs(changed=True, states="oooo"), (4, 4, "2")),
        (inputs(r=6, changed=True, sts=(4, 0, 4)), (4, 6, "2")),
        (inputs(states="UUUU"), (0, 4, "3")),
        (inputs(r=6, sts=(4, 2, 4)), (2, 6, "3b")),
        (inputs(r=3, sts=(6, 5, 6), states="ooo"), (3, 3, "4")),
        (inputs(sts=(4, 4, 4), states="oooo"), (3, 4, "5")),
    ],
)
def test_rolling_update_parameters_cases(inp, want):
    d = rolling_update_parameters(inp)
    assert (d.partition, d.replicas, d.case) == want


def test_fixed_point_folds_the_transient_case_2_stage():
    d, trace = fixed_point(inputs(mu=2, ms=2, changed=True, states="oooo"))
    assert [(t.case, t.partition, t.replicas) for t in trace] == [("2", 4, 6), ("5", 2, 6), ("5", 2, 6)]
    assert (d.partition, d.replicas) == (2, 6)


def test_fixed_point_case_4_fires_once():
    d, trace = fixed_point(inputs(r=3, sts=(6, 5, 6), states="ooo---"))
    assert [t.case for t in trace] == ["4", "5", "5"]
    assert (d.partition, d.replicas) == (2, 3)
