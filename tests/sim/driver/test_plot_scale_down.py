"""The SVG timeline's floor and ceiling follow the budget in force at each moment (issue 25 item 5):
while a scale-down drains, the ceiling the runner checks is the live count when it began, lowered
as groups go (pulumi_lws/sim/driver/runner.py ``_Budget``), and the plot draws that, never
``replicas + maxSurge`` of the new spec under a live line still above it."""

from __future__ import annotations

import copy
import xml.etree.ElementTree as ET

import pytest
import yaml
from conftest import REPO_ROOT

from pulumi_lws.core.contract.trace import TraceRow
from pulumi_lws.sim.driver.change import change_scenario
from pulumi_lws.sim.driver.plot import svg_timeline
from pulumi_lws.sim.driver.timeline import Budget, Timeline, TimelineRunner

MS = REPO_ROOT / "examples" / "modelserving-pd" / "ms.yaml"


def _run(old: dict, new: dict):
    runner = TimelineRunner(change_scenario(old, new).scenario, "pure")
    result = runner.run()
    svg = svg_timeline(result.raw_rows, result.end_time, "t", timeline=runner.timeline, stages=result.trace.rows)
    return runner, result, ET.fromstring(svg)


def _in_force(budgets: list[Budget], t: float) -> Budget:
    return [b for b in budgets if b.start <= t][-1]


@pytest.fixture(scope="module")
def scale_down():
    old = next(d for d in yaml.safe_load_all(MS.read_text()) if d)
    new = copy.deepcopy(old)
    new["spec"]["replicas"] = 1
    return _run(old, new)


def test_the_ceiling_holds_the_live_groups_while_the_scale_down_drains(scale_down):
    runner, result, _ = scale_down
    budgets = runner.timeline.budgets
    assert result.reason is None and not result.trace.violations
    drained = [r for r in result.raw_rows if r.replicas == 1 and r.live > 1]
    assert drained, "the scale-down 4 -> 1 drains over at least one row"
    assert budgets[0].held == 4 and budgets[0].ceiling == 4  # the live count when it began
    assert budgets[-1].held is None and budgets[-1].ceiling == 1  # replicas 1 + maxSurge 0 once drained
    for row in result.raw_rows[1:]:  # the first row is OLD before the update
        assert row.live <= _in_force(budgets, row.time).ceiling, f"t={row.time}: live above the drawn ceiling"


def test_the_drawn_ceiling_lines_are_the_segments_in_force(scale_down):
    runner, _, root = scale_down
    lines = [e for e in root.iter() if e.get("class") == "ceiling"]
    assert [int(e.get("data-value")) for e in lines] == [b.ceiling for b in runner.timeline.budgets] == [4, 1]
    (first, second) = lines
    assert float(first.get("x2")) == pytest.approx(float(second.get("x1")))  # one follows the other
    assert float(first.get("y1")) < float(second.get("y1"))  # the held ceiling is drawn higher
    label = next(e.text for e in root.iter() if e.get("class") == "ceiling-label")
    assert label == "ceiling 1 = replicas 1 + maxSurge 0"
    floors = [e for e in root.iter() if e.get("class") in ("floor", "floor-unarmed")]
    assert {int(e.get("data-value")) for e in floors} == {0}  # replicas 1 - maxUnavailable 1 throughout


def test_a_held_ceiling_is_labelled_as_the_draining_scale_down():
    timeline = Timeline(budgets=[Budget(0, 1, 1, 0, held=3)])
    rows = [TraceRow(time=0, replicas=1, partition=None, groups=(), live=3, available=1)]
    root = ET.fromstring(svg_timeline(rows, 5, "t", timeline=timeline))
    label = next(e.text for e in root.iter() if e.get("class") == "ceiling-label")
    assert label == "ceiling 3 = live groups as the scale-down to 1 drains"


def test_segments_at_one_instant_keep_only_the_last_and_equal_ones_merge():
    timeline = Timeline()
    timeline.record_budget(Budget(0, 1, 1, 0, held=4))
    timeline.record_budget(Budget(0, 1, 1, 0, held=3))  # lowered at the same instant: replaces
    timeline.record_budget(Budget(2, 1, 1, 0, held=3))  # unchanged: no new segment
    timeline.record_budget(Budget(5, 1, 1, 0))
    assert [(b.start, b.ceiling) for b in timeline.budgets] == [(0, 3), (5, 1)]
