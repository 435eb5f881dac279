"""End-to-end: the quickstart scenarios (pure engine and the example program under the pulumi
engine) and the CLI."""

from __future__ import annotations

import json

from conftest import REPO_ROOT

from pulumi_lws.cli import main
from pulumi_lws.sim.driver.runner import simulate
from pulumi_lws.sim.driver.scenario import load_scenario

ROOT = REPO_ROOT
PROGRAM_SCENARIO = ROOT / "examples" / "quickstart" / "scenario.yaml"  # `make demo`: __main__.py, engine pulumi
QUICKSTART = ROOT / "examples" / "quickstart" / "scenario-pure.yaml"  # the same rollout, pure engine, inline LWS

# The documentation's table (R=4, MU=2, MS=2): stage 1 is the converged set before the update;
# its transient stage 2 (partition 4) folds into stage 3: the planner goes straight to the fixed
# point of what it observes.
EXPECTED = [
    (4, 0, "UUUU"),
    (6, 2, "oouuuu"),
    (6, 2, "oouuUu"),
    (6, 0, "uuuuUU"),
    (6, 0, "uuUUUU"),
    (4, 0, "uuUU"),
    (4, 0, "uUUU"),
    (4, 0, "UUUU"),
]
# The documentation's Description column, derived from the change between rows.
NOTES = [
    "before the rolling update",
    "rolling update starts: 2 surge groups created; partition 4→2 in one stage (fixed point); R-2, R-3 updating",
    "R-4 becomes ready; partition waits for R-5",
    "R-5 becomes ready; partition 2→0; R-0, R-1 updating",
    "R-2, R-3 become ready",
    "surge replicas reclaimed",
    "R-1 becomes ready",
    "R-0 becomes ready; rolling update complete",
]


def _rows(result):
    return [(r.replicas, r.partition, "".join(g.state for g in r.groups)) for r in result.trace.rows]


def test_quickstart_reproduces_documented_stages():
    result = simulate(load_scenario(QUICKSTART))
    assert result.reason is None, result.reason
    assert _rows(result) == EXPECTED
    assert result.trace.converged and not result.trace.violations
    assert [r.note.removeprefix("spec patched; ") for r in result.trace.rows] == NOTES
    first, second = result.trace.rows[:2]
    assert first.revision != second.revision  # row 1 is judged against the revision current before the update


def test_program_scenario_runs_the_example_program_and_matches_the_pure_variant():
    """`make demo`: the real quickstart program under Pulumi's mock engine, lws.yaml edited in a
    scratch copy at t=0; same rows as the pure-engine variant, and the example is never written."""
    lws_yaml = ROOT / "examples" / "quickstart" / "lws.yaml"
    before = lws_yaml.read_bytes()
    sc = load_scenario(PROGRAM_SCENARIO)
    assert sc.default_engine == "pulumi" and sc.manifest_file == "lws.yaml" and sc.updates[0].file == "lws.yaml"
    result = simulate(sc)
    assert result.reason is None, result.reason
    assert result.engine == "pulumi" and _rows(result) == EXPECTED
    assert [r.note.removeprefix("lws.yaml patched; ") for r in result.trace.rows] == NOTES
    pure = simulate(load_scenario(QUICKSTART))
    assert [r.to_json() | {"note": ""} for r in result.trace.rows] == [
        r.to_json() | {"note": ""} for r in pure.trace.rows
    ]
    assert lws_yaml.read_bytes() == before
    images = {c["image"] for p in result.cluster.list("Pod") for c in p["spec"]["containers"]}
    assert images == {"nginxinc/nginx-unprivileged:1.28"}


def test_program_scenario_under_the_pure_engine_reads_the_workspace_file():
    result = simulate(load_scenario(PROGRAM_SCENARIO), engine="pure")
    assert result.engine == "pure" and result.reason is None and _rows(result) == EXPECTED


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


def test_cli_table_has_header_table_summary(capsys):
    assert main(["simulate", str(QUICKSTART)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("quickstart-pure: inline manifest | engine pure") and "cluster 1 unbounded node" in out[0]
    assert out[2].startswith("Stage") and "R-4 (Surge)" in out[2]
    assert "before the rolling update" in out[4] and "blocked:" not in "\n".join(out)
    assert out[-1].startswith("quickstart-pure: converged at t=65s")


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
