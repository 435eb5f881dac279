"""The SVG timeline of a multi-role trace (DisaggregatedSet, ``simulate --plot``): one panel per
role lane with its old/new ready areas, its live line and its own floor and ceiling from
``Workload.budgets(spec)[role]``; single-role traces keep their group lanes."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from conftest import REPO_ROOT

from pulumi_lws.core.contract.trace import Lane, TraceRow
from pulumi_lws.core.contract.workload import Budgets
from pulumi_lws.sim.driver.plot import lane_budgets, svg_timeline
from pulumi_lws.sim.driver.scenario import load_scenario
from pulumi_lws.sim.driver.timeline import TimelineRunner
from pulumi_lws.workloads import workload_for

NS = {"s": "http://www.w3.org/2000/svg"}
PD = REPO_ROOT / "examples" / "disaggregated-pd" / "scenario.yaml"


def by_class(root: ET.Element, cls: str) -> list[ET.Element]:
    return [e for e in root.iter() if e.get("class") == cls]


def points(e: ET.Element) -> list[tuple[float, float]]:
    return [tuple(map(float, p.split(","))) for p in e.get("points").split()]


@pytest.fixture(scope="module")
def pd():
    runner = TimelineRunner(load_scenario(PD), "pure")
    result = runner.run()
    budgets = lane_budgets(runner.spec.workload, runner.spec.parsed())
    svg = svg_timeline(
        result.raw_rows, result.end_time, "pd", timeline=runner.timeline, stages=result.trace.rows, lane_budgets=budgets
    )
    return result, budgets, ET.fromstring(svg)


def test_one_panel_per_role_with_its_budgets(pd):
    result, budgets, root = pd
    assert result.trace.converged
    assert budgets == {"prefill": Budgets(6, 1, 0), "decode": Budgets(2, 1, 0)}
    panels = by_class(root, "role-lane")
    assert [p.get("data-role") for p in panels] == ["prefill", "decode"]
    for panel, (floor, ceiling) in zip(panels, ((6, 7), (2, 3))):
        (f,) = [e for e in panel.iter() if e.get("class") == "lane-floor"]
        (c,) = [e for e in panel.iter() if e.get("class") == "lane-ceiling"]
        assert (int(f.get("data-value")), int(c.get("data-value"))) == (floor, ceiling)
        grid = {int(e.get("data-value")): float(e.get("y1")) for e in panel.iter() if e.get("class") == "lane-grid"}
        (v0, y0), (v1, y1) = min(grid.items()), max(grid.items())
        for line, value in ((f, floor), (c, ceiling)):
            assert float(line.get("y1")) == pytest.approx(y0 + (value - v0) / (v1 - v0) * (y1 - y0), abs=0.2)
        assert v1 == int(panel.get("data-ymax")) >= ceiling
        labels = {e.get("class"): e.text for e in panel.iter() if (e.get("class") or "").endswith("-label")}
        assert labels == {"lane-floor-label": f"floor {floor}", "lane-ceiling-label": f"ceiling {ceiling}"}
        kinds = {e.get("class") for e in panel.iter()}
        assert {"old-ready", "new-ready", "lane-live"} <= kinds
    assert not [e for e in root.iter() if e.tag.endswith("rect") and "R-" in "".join(e.itertext())]  # no group lanes


def test_the_areas_follow_each_roles_old_and_new_ready_counts(pd):
    result, _, root = pd
    rows = result.raw_rows
    for panel in by_class(root, "role-lane"):
        role = panel.get("data-role")
        grid = {int(e.get("data-value")): float(e.get("y1")) for e in panel.iter() if e.get("class") == "lane-grid"}
        y0, ymax = grid[0], int(panel.get("data-ymax"))
        scale = (y0 - grid[ymax]) / ymax
        old = next(e for e in panel.iter() if e.get("class") == "old-ready")
        live = next(e for e in panel.iter() if e.get("class") == "lane-live")
        lanes = [next(lane for lane in r.lanes if lane.name == role) for r in rows]
        top = points(old)[: 2 * len(rows)]  # the step edge, before the way back along 0
        assert [round((y0 - y) / scale) for _, y in top[::2]] == [lane.old_ready for lane in lanes]
        assert [round((y0 - y) / scale) for _, y in points(live)[::2]] == [lane.old + lane.new for lane in lanes]
        assert any(lane.old > 0 for lane in lanes) and lanes[-1].old == 0 and lanes[-1].new_ready > 0


def test_without_budgets_the_panels_have_no_floor_or_ceiling():
    rows = [
        TraceRow(
            time=t,
            replicas=3,
            partition=None,
            groups=(),
            live=3,
            available=3,
            lanes=(Lane("a", 2 - t, t, 2 - t, t), Lane("b", 1, 0, 1, 0)),
        )
        for t in (0, 1, 2)
    ]
    root = ET.fromstring(svg_timeline(rows, 3))
    assert [p.get("data-role") for p in by_class(root, "role-lane")] == ["a", "b"]
    assert not by_class(root, "lane-floor") and not by_class(root, "lane-ceiling")


def test_lane_budgets_per_slice_lanes():
    ds = workload_for("DisaggregatedSet")
    doc = {
        "apiVersion": ds.api_version,
        "kind": "DisaggregatedSet",
        "metadata": {"name": "pd"},
        "spec": {
            "slices": 2,
            "roles": [
                {
                    "name": n,
                    "spec": {
                        "replicas": r,
                        "leaderWorkerTemplate": {
                            "workerTemplate": {"spec": {"containers": [{"name": "s", "image": "x"}]}}
                        },
                    },
                }
                for n, r in (("p", 3), ("d", 1))
            ],
        },
    }
    assert lane_budgets(ds, ds.parse(doc)) == {
        "p": Budgets(3, 1, 0),
        "1/p": Budgets(3, 1, 0),
        "d": Budgets(1, 1, 0),
        "1/d": Budgets(1, 1, 0),
    }
