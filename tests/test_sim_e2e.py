"""End-to-end: scenarios through the pure engine (reconcile) and the CLI."""
from __future__ import annotations

import json
import pathlib

import pytest

pytest.importorskip("pulumi_lws.rollout.ordinal")
pytest.importorskip("pulumi_lws.render.lws")

from pulumi_lws.cli import main  # noqa: E402
from pulumi_lws.sim.runner import simulate  # noqa: E402
from pulumi_lws.sim.scenario import load_scenario  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
QUICKSTART = ROOT / "examples" / "quickstart" / "scenario.yaml"

# The documentation's table (R=4, MU=2, MS=2) with its stages 2 and 3 merged: the planner goes
# straight to the fixed point of what it observes.
EXPECTED = [
    (4, 0, "oooo"), (6, 2, "oouuuu"), (6, 2, "oouuUu"), (6, 0, "uuuuUU"),
    (6, 0, "uuUUUU"), (4, 0, "uuUU"), (4, 0, "uUUU"), (4, 0, "UUUU"),
]


def _rows(result):
    return [(r.replicas, r.partition, "".join(g.state for g in r.groups)) for r in result.trace.rows]


def test_quickstart_reproduces_documented_stages():
    result = simulate(load_scenario(QUICKSTART))
    assert result.reason is None, result.reason
    assert _rows(result) == EXPECTED
    assert result.trace.converged and not result.trace.violations


def test_quickstart_with_internal_statefulset_history():
    sc = load_scenario(QUICKSTART)
    sc.statefulset_history = "internal"
    result = simulate(sc)
    assert result.reason is None and _rows(result) == EXPECTED


def test_same_seed_same_trace():
    def run():
        sc = load_scenario(QUICKSTART)
        sc.statefulset_history, sc.apply_keep = "internal", 0.7  # crash mid-apply draws from the seeded RNG
        return simulate(sc)
    a, b = run(), run()
    assert a.trace.to_json() == b.trace.to_json() and [r.time for r in a.raw_rows] == [r.time for r in b.raw_rows]


def test_scale_up_and_fault_scenario_keeps_invariants(tmp_path):
    text = QUICKSTART.read_text().replace("start: converged", "start: empty")
    sc_path = tmp_path / "s.yaml"
    sc_path.write_text(text + "cluster: {statefulSetRevisions: internal}\n")
    sc = load_scenario(sc_path)
    result = simulate(sc)
    assert not result.trace.violations and result.trace.converged


def test_cli_json_and_plot(tmp_path, capsys):
    sc_path = tmp_path / "q.yaml"
    sc_path.write_text(QUICKSTART.read_text() + "cluster: {statefulSetRevisions: internal}\n")
    svg = tmp_path / "t.svg"
    rc = main(["simulate", str(sc_path), "--format", "json", "--plot", str(svg)])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["converged"] is True and len(out["rows"]) == len(EXPECTED)
    assert svg.read_text().startswith("<svg") and "R-5" in svg.read_text()


def test_cli_fails_when_not_converged(tmp_path, capsys):
    sc_path = tmp_path / "q.yaml"
    text = QUICKSTART.read_text().replace("maxTime: 300", "maxTime: 20")
    sc_path.write_text(text + "cluster: {statefulSetRevisions: internal}\n")
    assert main(["simulate", str(sc_path)]) == 1
    assert "simulate:" in capsys.readouterr().err
