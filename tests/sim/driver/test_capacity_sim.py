"""The opt-in capacity check end to end in the simulator, for every API (issue 24 item 5).

Each fleet fills its GPU nodes but one; the update needs a surge group that does not fit the one
free node. With ``reconcile.checkCapacity: true`` (or the manifest annotation the component
argument writes) the stage is held with the ``insufficient-capacity`` blocker naming the shortfall
and nothing new is created; an ``addNodes`` event then lets the rollout proceed and converge.
Without the opt-in the same run creates the surge group at once (it stays Pending) — behaviour as
before. The runner's budget invariants hold at every tick throughout.
"""

from __future__ import annotations

import pytest
from support.capacity_helpers import CASES, GPU, scenario

from pulumi_lws.core.features.fit import INSUFFICIENT_CAPACITY
from pulumi_lws.sim.driver.runner import simulate
from pulumi_lws.sim.driver.scenario import load_scenario


def blocked_stages(result) -> list:
    return [s for s in result.stages if s.blocker is not None and s.blocker.code == INSUFFICIENT_CAPACITY]


API = pytest.mark.parametrize("api", sorted(CASES))


@API
def test_a_surge_that_does_not_fit_is_held_with_the_shortfall_then_proceeds_once_nodes_are_added(api):
    result = simulate(load_scenario(scenario(api)))
    assert result.reason is None, result.reason
    assert result.cluster is not None and not result.trace.blocked
    held = blocked_stages(result)
    assert held, [s.summary() for s in result.stages]
    blocker = held[0].blocker
    assert blocker.message == CASES[api][3]
    assert CASES[api][2] in blocker.remedies[0]
    assert "add nodes" in blocker.remedies[-1]
    # the trace shows the blocker on the stage the update started, then progress after t=60
    rows = result.trace.rows
    blocked_rows = [r for r in rows if blocker.message in r.note]
    assert blocked_rows and all(r.time < 60 for r in blocked_rows)
    assert any(r.time >= 60 and "add 3 nodes" in r.note for r in rows)
    # while held nothing new ran: the live pods never exceeded the old fleet before the nodes came
    before = [d for t, d in result.demand if t < 60]
    assert before and all(d[GPU][0] <= 32 for d in before)
    assert max(d[GPU][0] for t, d in result.demand if t >= 60) > 32  # the surge group ran after
    # (the runner fails a run, reason "invariant violated: ...", on any budget violation: reason is None above)


@API
def test_the_manifest_annotation_opts_in_as_the_scenario_key_does(api):
    result = simulate(load_scenario(scenario(api, check=None, annotate=True)))
    assert result.reason is None, result.reason
    assert blocked_stages(result)


@API
def test_without_the_opt_in_the_surge_is_created_at_once_as_before(api):
    result = simulate(load_scenario(scenario(api, check=None)))
    assert not blocked_stages(result)
    early = [d for t, d in result.demand if 0 < t < 60]
    assert max(d[GPU][0] for d in early) > 32  # the surge pods were created (Pending) before the nodes came


def test_check_capacity_must_be_a_boolean_and_pure_engine_only():
    from pulumi_lws.core.contract.errors import SpecError

    bad = scenario("LeaderWorkerSet")
    bad["reconcile"]["checkCapacity"] = "yes"
    with pytest.raises(SpecError, match=r"reconcile.checkCapacity"):
        load_scenario(bad)


def test_leaderworkerset_hash_holds_the_admission_of_a_gated_surge_leader_whose_group_does_not_fit():
    """Hash identity declares a group's workers only once its (gated) leader exists: the check
    counts the gated leader with the workers it would admit, so the admission is held, not the
    leader left to take the last free node while its workers wait Pending."""
    sc = scenario("LeaderWorkerSet")
    for doc in (sc["manifest"], sc["updates"][0]["manifest"]):
        doc["spec"]["groupIdentity"] = "Hash"
    result = simulate(load_scenario(sc))
    assert result.reason is None, result.reason
    held = blocked_stages(result)
    assert held and held[0].blocker.message == CASES["LeaderWorkerSet"][3]
    assert not [s for s in result.stages if s.blocker is not None and "717" in s.blocker.code]  # no deadlock
    early = [c for r in result.trace.rows if r.time < 60 for c in r.groups]
    assert any(c.detail == "gated" for c in early)  # the surge leader waits gated, holding no node
    assert not any(c.detail == "unschedulable" for c in early)  # nothing was left Pending
