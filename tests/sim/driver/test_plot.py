"""The SVG timeline (``simulate --plot``): stage labels, reconcile ticks, floor/ceiling lines, blocked
band, time ticks. (Legibility on the rasterized picture: test_plot_render.py.)"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from itertools import pairwise

import pytest
from conftest import REPO_ROOT

from pulumi_lws.cli import main
from pulumi_lws.sim.driver.plot import nice_step, svg_timeline
from pulumi_lws.sim.driver.scenario import load_scenario
from pulumi_lws.sim.driver.timeline import TimelineRunner

NS = {"s": "http://www.w3.org/2000/svg"}
GPU = REPO_ROOT / "examples" / "gpu-717"


def parse(text: str) -> ET.Element:
    return ET.fromstring(text)


def by_class(root: ET.Element, cls: str) -> list[ET.Element]:
    return [e for e in root.iter() if e.get("class") == cls]


def y_of(value: float, root: ET.Element) -> float:
    """The chart's y for ``value``, interpolated from the labelled grid lines."""
    grid = {float(e.get("data-value")): float(e.get("y1")) for e in by_class(root, "grid")}
    (v0, y0), (v1, y1) = min(grid.items()), max(grid.items())
    return y0 + (value - v0) / (v1 - v0) * (y1 - y0)


@pytest.fixture(scope="module")
def scalefirst():
    runner = TimelineRunner(load_scenario(GPU / "scenario-scalefirst.yaml"))
    result = runner.run()
    svg = svg_timeline(result.raw_rows, result.end_time, "sf", timeline=runner.timeline, stages=result.trace.rows)
    return runner, result, parse(svg)


def test_floor_and_ceiling_at_the_right_height(scalefirst):
    runner, _, root = scalefirst
    (budget,) = runner.timeline.budgets
    assert (budget.replicas, budget.max_unavailable, budget.max_surge) == (2, 1, 0)
    # the scale-up 1 -> 2 is never fully available: the floor is never checked, so it is drawn grey
    # dotted (floor-unarmed), never as the red checked floor
    assert not by_class(root, "floor") and runner.timeline.armed_intervals(100) == []
    (floor,), (ceiling,) = by_class(root, "floor-unarmed"), by_class(root, "ceiling")
    assert float(floor.get("y1")) == pytest.approx(y_of(budget.floor, root), abs=0.2)
    assert float(ceiling.get("y1")) == pytest.approx(y_of(budget.ceiling, root), abs=0.2)
    assert floor.get("stroke-dasharray") and ceiling.get("stroke-dasharray")
    labels = {
        e.get("class"): e.text
        for e in root.iter()
        if (e.get("class") or "").endswith("-label") and e.get("class") not in ("axis-label", "lane-label")
    }
    assert labels == {
        "floor-label": "floor 1 = replicas 2 - maxUnavailable 1",
        "ceiling-label": "ceiling 2 = replicas 2 + maxSurge 0",
    }


def test_one_label_per_stage_and_one_tick_per_reconcile_that_changed_something(scalefirst):
    runner, result, root = scalefirst
    ticks = by_class(root, "reconcile-tick")
    assert [float(t.get("data-time")) for t in ticks] == runner.timeline.changes == [0.0]
    markers = by_class(root, "stage-marker")
    assert [m.get("data-stage") for m in markers] == [str(n) for n in range(1, len(result.trace.rows) + 1)]
    assert [float(m.get("data-time")) for m in markers] == [r.time for r in result.trace.rows]
    assert [m.find("s:text", NS).text for m in markers] == [f"S{n}" for n in range(1, len(result.trace.rows) + 1)]


def test_blocked_band_names_the_blocker(scalefirst):
    root = scalefirst[2]
    (band,) = by_class(root, "blocked")
    assert "resource-deadlock-717" in band.get("data-blocker")
    assert band.find("s:rect", NS).get("fill-opacity")
    texts = " ".join(e.text or "" for e in by_class(root, "blocked-text"))
    assert texts.startswith("blocked: resource-deadlock-717: group 1 on the new revision is unschedulable")


def test_time_ticks_span_the_run(scalefirst):
    _, result, root = scalefirst
    ticks = [float(t.get("data-time")) for t in by_class(root, "time-tick")]
    assert ticks[0] == 0 and ticks[-1] <= result.end_time + 1 and len(ticks) >= 5
    assert len({round(b - a, 6) for a, b in pairwise(ticks)}) == 1  # evenly spaced


def test_rollout_first_markers_and_no_band(tmp_path, capsys):
    out = tmp_path / "rf.svg"
    assert main(["simulate", str(GPU / "scenario-rolloutfirst.yaml"), "--plot", str(out)]) == 0
    capsys.readouterr()
    root = parse(out.read_text())
    stages = [int(m.get("data-stage")) for m in by_class(root, "stage-marker")]
    assert len(stages) >= 2 and stages == list(range(1, len(stages) + 1)) and not by_class(root, "blocked")
    assert not by_class(root, "blocked-text")


def test_cli_plot_of_the_deadlock(tmp_path, capsys):
    out = tmp_path / "sf.svg"
    assert main(["simulate", str(GPU / "scenario-scalefirst.yaml"), "--plot", str(out)]) == 1
    capsys.readouterr()
    root = parse(out.read_text())
    assert by_class(root, "floor-unarmed") and by_class(root, "stage-marker") and by_class(root, "blocked")


@pytest.mark.parametrize("span, step", [(40, 5), (11, 2), (0.5, 0.05), (600, 100), (1, 0.1)])
def test_nice_steps(span, step):
    assert nice_step(span) == pytest.approx(step)


def test_empty_and_markerless_traces_still_render():
    assert parse(svg_timeline([])).tag.endswith("svg")
    runner = TimelineRunner(load_scenario(GPU / "scenario-rolloutfirst.yaml"))
    result = runner.run()
    root = parse(svg_timeline(result.raw_rows, result.end_time))  # no timeline or stages: no markers or budget lines
    assert not by_class(root, "stage-marker") and not by_class(root, "floor") and not by_class(root, "reconcile-tick")
