"""A role panel's floor and ceiling follow the role's budget in force at each moment
(pulumi_lws/sim/driver/lane_bounds.py, drawn by ``simulate --plot``): pieces from the timeline,
a draining role scale-down holding the ceiling at the live groups."""

from __future__ import annotations

import copy
import xml.etree.ElementTree as ET

import yaml
from conftest import REPO_ROOT
from hypothesis import given
from hypothesis import strategies as st

from pulumi_lws.core.contract.workload import Budgets
from pulumi_lws.sim.driver.lane_bounds import Run, lane_bounds
from pulumi_lws.sim.driver.plot import lane_budgets, svg_timeline
from pulumi_lws.sim.driver.scenario import load_scenario
from pulumi_lws.sim.driver.timeline import TimelineRunner

DS = REPO_ROOT / "examples" / "disaggregated-pd" / "ds.yaml"


def test_one_piece_is_one_line_each():
    floors, ceilings = lane_bounds([0, 5, 10], [2, 3, 2], [(0, Budgets(2, 1, 0))], 20)
    assert floors == [Run(0, 20, 2)] and ceilings == [Run(0, 20, 3)]


def test_a_scale_up_moves_both_lines_at_the_update():
    floors, ceilings = lane_bounds([0, 5, 10, 15], [2, 2, 3, 4], [(0, Budgets(2, 1, 0)), (10, Budgets(4, 1, 1))], 20)
    assert floors == [Run(0, 10, 2), Run(10, 20, 3)]
    assert ceilings == [Run(0, 10, 3), Run(10, 20, 5)]


def test_a_draining_scale_down_holds_the_ceiling_at_the_live_groups_until_they_are_gone():
    times, live = [0, 10, 11, 12, 13], [6, 6, 4, 2, 2]
    floors, ceilings = lane_bounds(times, live, [(0, Budgets(6, 1, 0)), (10, Budgets(2, 1, 0))], 20)
    assert ceilings == [Run(0, 10, 7), Run(10, 11, 6), Run(11, 12, 4), Run(12, 20, 3)]
    assert floors == [Run(0, 10, 6), Run(10, 20, 2)]


@given(
    live=st.lists(st.integers(0, 12), min_size=2, max_size=12),
    before=st.integers(1, 8),
    after=st.integers(0, 8),
    surge=st.integers(0, 2),
)
def test_the_ceiling_is_never_under_a_live_line_that_only_drains(live, before, after, surge):
    """After a scale-down, with live groups only going (never added), live <= the drawn ceiling."""
    live = [max(before + surge, live[0])] + sorted(live[1:], reverse=True)
    live = [min(v, live[0]) for v in live]
    times = list(range(len(live)))
    pieces = [(0, Budgets(before, 1, surge)), (1, Budgets(min(after, before - 1) if before > 0 else 0, 1, surge))]
    _, ceilings = lane_bounds(times, live, pieces, len(live))
    for t, v in zip(times[1:], live[1:]):
        (run,) = [r for r in ceilings if r.start <= t < r.end]
        assert v <= run.value


def test_the_ds_panels_follow_a_role_scale_change_in_the_middle_of_the_run():
    ds = next(d for d in yaml.safe_load_all(DS.read_text()) if d)
    later = copy.deepcopy(ds)
    later["spec"]["roles"][0]["spec"]["replicas"] = 3  # prefill 6 -> 3 at t=20
    scenario = load_scenario(
        {
            "name": "pd-scale",
            "engine": "pure",
            "manifest": ds,
            "start": "converged",
            "updates": [{"at": 20, "manifest": later}],
            "stop": {"maxTime": 60},
        }
    )
    runner = TimelineRunner(scenario, "pure")
    result = runner.run()
    pieces = runner.timeline.lane_budgets
    assert [(t, b["prefill"].replicas) for t, b in pieces] == [(0, 6), (20, 3)]
    svg = svg_timeline(
        result.raw_rows,
        result.end_time,
        "pd",
        timeline=runner.timeline,
        stages=result.trace.rows,
        lane_budgets=lane_budgets(runner.spec.workload, runner.spec.parsed()),
    )
    root = ET.fromstring(svg)
    prefill = next(e for e in root.iter() if e.get("class") == "role-lane" and e.get("data-role") == "prefill")
    floors = [int(e.get("data-value")) for e in prefill.iter() if e.get("class") == "lane-floor"]
    ceilings = [int(e.get("data-value")) for e in prefill.iter() if e.get("class") == "lane-ceiling"]
    assert floors[0] == 6 and floors[-1] == 3  # replicas - maxUnavailable 0, before and after
    assert ceilings[0] == 7 and ceilings[-1] == 4  # replicas + maxSurge 1
    decode = next(e for e in root.iter() if e.get("class") == "role-lane" and e.get("data-role") == "decode")
    assert [int(e.get("data-value")) for e in decode.iter() if e.get("class") == "lane-ceiling"] == [3]  # unchanged
