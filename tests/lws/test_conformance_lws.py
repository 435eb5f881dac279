"""Conformance: every vector of ``lws-ordinal-rollout.json`` through the project's own API.

Adapter: vector fields -> :class:`RolloutInputs` (budgets scaled with :func:`scale_budgets`, the
upstream rounding). ``single_call`` -> :func:`rolling_update_parameters`; ``fixed_point`` ->
:func:`fixed_point` (result, case and full trace); ``calculateRollingUpdateReplicas`` ->
:func:`calculate_rolling_update_replicas`. ``assertedStatus`` is checked with the status counts of
:mod:`pulumi_lws.lws.status.ordinal`. Vector data is never edited.

The same vectors also run through the rule pulumi-lws applies (``rule_for("ScaleFirst")``:
upstream plus the surge hold, docs/rollout.md §2): every ``single_call`` and ``fixed_point``
vector must give the upstream result there too (the hold never fires on them), and the surge
hold must not change a single vector's result or trace.
"""

from __future__ import annotations

import pytest
from conftest import load_conformance

from pulumi_lws.lws.rollout.budget import hold_surge_for_availability, rule_for
from pulumi_lws.lws.rollout.ordinal.planner import (
    LeaderSts,
    RolloutInputs,
    calculate_rolling_update_replicas,
    fixed_point,
    rolling_update_parameters,
    scale_budgets,
)
from pulumi_lws.lws.status.ordinal import group_counts

DATA = load_conformance("lws-ordinal-rollout.json")
VECTORS = DATA["vectors"]
DERIVED = DATA["derived_vectors_not_from_tests"]


def to_inputs(v: dict) -> RolloutInputs:
    lws = v["lws"]
    mu, ms = scale_budgets(lws["replicas"], lws["maxUnavailable"], lws["maxSurge"])
    sts = v["leaderSts"]
    return RolloutInputs(
        replicas=lws["replicas"],
        max_unavailable=mu,
        max_surge=ms,
        user_partition=lws.get("partition", 0),
        sts=None if sts is None else LeaderSts(sts["replicas"], sts["partition"], sts.get("replicasAnnotation")),
        template_changed=bool(v["templateChangedSinceLastReconcile"]),
        states=v["groups"] or "",
    )


def check(v: dict) -> None:
    mode = v["mode"]
    if mode == "calculateRollingUpdateReplicas":
        i = v["input"]
        got = calculate_rolling_update_replicas(
            i["lwsReplicas"], i["maxSurge"], i["maxUnavailable"], i["unreadyReplicas"]
        )
        assert got == v["expected"]["replicas"]
        return
    inp = to_inputs(v)
    expected = (v["expected"]["leaderStsPartition"], v["expected"]["leaderStsReplicas"])
    if mode == "single_call":
        d = rolling_update_parameters(inp)
        assert (d.partition, d.replicas) == expected
        assert d.case == v["case"]
        return
    assert mode == "fixed_point", mode
    d, trace = fixed_point(inp)
    assert (d.partition, d.replicas) == expected
    assert [t.as_trace() for t in trace] == v["trace"]
    if "assertedStatus" in v:
        ready, updated = group_counts(v["groups"])
        assert {"readyReplicas": ready, "updatedReplicas": updated} == v["assertedStatus"]


def check_guarded(v: dict) -> None:
    """The vector through pulumi-lws's applied rule (upstream + surge hold): identical results."""
    inp = to_inputs(v)
    expected = (v["expected"]["leaderStsPartition"], v["expected"]["leaderStsReplicas"])
    rule = rule_for("ScaleFirst")
    if v["mode"] == "single_call":
        d = rule(inp)
        assert (d.partition, d.replicas, d.case) == (*expected, v["case"])
        return
    d, trace = fixed_point(inp, rule)
    assert (d.partition, d.replicas) == expected
    assert [t.as_trace() for t in trace] == v["trace"]


GUARDED = [v for v in VECTORS + DERIVED if v["mode"] in ("single_call", "fixed_point")]


@pytest.mark.parametrize("vector", GUARDED, ids=lambda v: v["id"])
def test_lws_ordinal_vectors_through_the_surge_hold(vector):
    check_guarded(vector)


def test_surge_hold_is_a_no_op_on_every_vector_decision():
    """Every upstream decision along every vector's trace is returned unchanged by the hold."""
    for v in GUARDED:
        inp = to_inputs(v)
        d = rolling_update_parameters(inp)
        s = inp.sts.replicas if inp.sts else None
        assert hold_surge_for_availability(d, inp.states, inp.replicas, inp.max_unavailable, inp.max_surge, s) == d, v[
            "id"
        ]


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v["id"])
def test_lws_ordinal_vectors(vector):
    check(vector)


@pytest.mark.parametrize("vector", DERIVED, ids=lambda v: v["id"])
def test_lws_ordinal_derived_vectors(vector):
    check(vector)


def test_vector_counts():
    modes = [v["mode"] for v in VECTORS]
    assert (len(VECTORS), len(DERIVED)) == (105, 8)
    assert (modes.count("single_call"), modes.count("fixed_point"), modes.count("calculateRollingUpdateReplicas")) == (
        9,
        90,
        6,
    )
