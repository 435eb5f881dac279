"""A held stage describes what it registers, for every API (LeaderWorkerSet, ModelServing,
DisaggregatedSet): paused (``pulumi-lws.io/paused``) or held by the capacity check
(``insufficient-capacity``), its groups and lanes are the observed ones the hold keeps — never the
planned stage's (a ModelServing once showed ``ooou-`` while ``oooo`` was registered, a
DisaggregatedSet lanes ``3|1`` while ``3|0`` ran). ``replicas``/``partition`` and the predicted
stages stay the plan the hold keeps (docs/rollout-control.md)."""

from __future__ import annotations

import pytest
from support import ds_helpers as DS
from support import ms_helpers as MS
from support.capacity_helpers import CASES as CAPACITY_CASES
from support.capacity_helpers import scenario as capacity_scenario
from support.control_helpers import lws_harness, lws_manifest, paused

from pulumi_lws.components.outputs import stage_summary, stage_table
from pulumi_lws.core.features.control import PAUSED
from pulumi_lws.core.features.fit import INSUFFICIENT_CAPACITY
from pulumi_lws.sim.driver.runner import simulate
from pulumi_lws.sim.driver.scenario import load_scenario


def lws_case():
    old = lws_manifest(4, "img:1")
    return lws_harness(old), lws_manifest(4, "img:2")


def ms_case():
    old = MS.ms_manifest(replicas=4, roles=[MS.role("prefill", 1, workers=1)], mu=1, surge=1)
    return MS.Harness.create(old), MS.with_image(old, "img:2")


def ms_role_case():
    old = MS.ms_manifest(replicas=2, roles=[MS.role("prefill", 2, workers=1)], strategy="RoleRollingUpdate", mu=1)
    return MS.Harness.create(old), MS.with_image(old, "img:2")


def ds_case():
    old = DS.ds_manifest(
        DS.role("prefill", 3, size=2, surge=1, unavailable=0), DS.role("decode", 2, size=2, surge=1, unavailable=0)
    )
    return DS.Harness.create(old), DS.with_image(old, "img:2")


CASES = {"LeaderWorkerSet": lws_case, "ModelServing": ms_case, "DisaggregatedSet": ds_case}


def observed(h):
    """(group chars, lanes as (name, old, new)) of the cluster's independent reading."""
    view = h.WORKLOAD.trace_view(h.spec, h.snapshot())
    return "".join(c.state for c in view.cells), tuple((lane.name, lane.old, lane.new) for lane in view.lanes)


def shown(stage, lanes=True):
    return stage.group_chars, tuple((lane.name, lane.old, lane.new) for lane in stage.lanes) if lanes else ()


@pytest.mark.parametrize("rolled", [0, 3], ids=["paused-before-the-first-stage", "paused-mid-rollout"])
@pytest.mark.parametrize("api", [*sorted(CASES), "ModelServing-Role"])
def test_a_paused_stage_shows_the_observed_groups_and_lanes(api, rolled):
    h, new = (CASES | {"ModelServing-Role": ms_role_case})[api]()
    h.change_spec(new)
    for _ in range(rolled):
        h.up()
        h.advance(1.0)
    h.change_spec(paused(new))
    w = h.WORKLOAD
    planned = w.reconcile(w.parse(new), h.snapshot(), w.options()).stage  # what resuming applies
    groups, lanes = observed(h)
    result, _, _ = h.up()
    stage = result.stage
    assert stage.blocker is not None and stage.blocker.code == PAUSED
    if api == "DisaggregatedSet":  # one group view per role; the lanes are what the cluster shows
        assert tuple((lane.name, lane.old, lane.new) for lane in stage.lanes) == lanes
        assert [g.phase for g in stage.groups] == [f"{o}|{n}" for _, o, n in lanes]
    else:
        assert stage.group_chars == groups and stage_summary(stage)["groups"] == groups
        if stage.lanes or lanes:
            assert tuple((lane.name, lane.old, lane.new) for lane in stage.lanes) == lanes
    # the plan the pause holds is kept: controller fields and the predicted stages
    assert (stage.replicas, stage.partition, stage.remaining) == (
        planned.replicas,
        planned.partition,
        planned.remaining,
    )
    assert "[paused]" in stage_table(stage, w.stage_lanes(h.spec)).splitlines()[2]
    if rolled == 0:  # nothing of the new revision exists yet, and the held stage says so
        assert "u" not in stage.group_chars.replace("x", "")
        assert all(lane.new == 0 for lane in stage.lanes)


@pytest.mark.parametrize("api", sorted(CAPACITY_CASES))
def test_a_stage_held_for_capacity_shows_the_observed_groups_and_lanes(api):
    """The fleet fills its nodes: the update's first stage is held (nothing new created), and
    every held stage shows the old fleet as it runs — no group or lane of the new revision."""
    result = simulate(load_scenario(capacity_scenario(api)))
    held = [s for s in result.stages if s.blocker is not None and s.blocker.code == INSUFFICIENT_CAPACITY]
    assert held
    for stage in held:
        if stage.lanes:  # DisaggregatedSet: one view per role, its lanes count the groups
            assert all(lane.old and lane.new == 0 for lane in stage.lanes), stage.lanes
        else:  # every group old and ready, none planned (was ``oo-``: the planned surge slot)
            assert set(stage.group_chars) == {"o"}, stage.summary()
