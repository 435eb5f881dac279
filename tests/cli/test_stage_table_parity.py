"""One stage-table renderer for every API (issue 23 item 6, issue 25 item 4): ``plan`` and
``simulate --from/--to`` print the same columns with the same meanings for the same change, the
component's preview table is ``plan``'s rows, and one glyph set (with its ASCII fallback and a
legend line) draws the same state with the same mark in every API."""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys

import pytest
import yaml
from conftest import TESTS_DIR

from pulumi_lws.cli import main
from pulumi_lws.core.contract.glyphs import ASCII, UNICODE
from pulumi_lws.core.contract.stagetable import Lanes
from pulumi_lws.workloads import workload_of

ROOT = TESTS_DIR.parent
EXAMPLES = {
    "LeaderWorkerSet": ROOT / "examples" / "quickstart" / "lws.yaml",
    "ModelServing": ROOT / "examples" / "modelserving-pd" / "ms.yaml",
    "DisaggregatedSet": ROOT / "examples" / "disaggregated-pd" / "ds.yaml",
}
OLD_IMAGE, NEW_IMAGE = "nginxinc/nginx-unprivileged:1.27", "nginxinc/nginx-unprivileged:1.28"


def change(tmp_path: pathlib.Path, kind: str) -> tuple[str, str]:
    text = EXAMPLES[kind].read_text()
    assert OLD_IMAGE in text
    old, new = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old.write_text(text)
    new.write_text(text.replace(OLD_IMAGE, NEW_IMAGE))
    return str(old), str(new)


def run(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def table(out: str) -> tuple[list[str], list[list[str]], str]:
    """(header cells, body rows without the Stage number and Description, legend line)."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Stage "))
    head, body = lines[start], []
    cols = _column_starts(head)
    for line in lines[start + 2 :]:
        if not line.startswith("Stage "):
            legend = line
            break
        cells = [line[a:b].strip() for a, b in zip(cols, cols[1:] + [len(line)])]
        body.append(cells[1:-1])  # drop "Stage N" and the Description
    return [h for h in head.split("  ") if h.strip()], body, legend


def _column_starts(head: str) -> list[int]:
    starts, prev = [], " "
    for i, ch in enumerate(head):
        if ch != " " and prev == " " and (i == 0 or head[i - 2 : i] == "  "):
            starts.append(i)
        prev = ch
    return starts


def is_subsequence(short: list, long: list) -> bool:
    it = iter(long)
    return all(any(x == y for y in it) for x in short)


def role_rolling(tmp_path: pathlib.Path) -> tuple[str, str]:
    """The ModelServing example under RoleRollingUpdate (prefill x2 per ServingGroup, maxUnavailable 1)."""
    doc = yaml.safe_load(EXAMPLES["ModelServing"].read_text())
    doc["spec"]["rolloutStrategy"] = {"type": "RoleRollingUpdate"}
    for role in doc["spec"]["template"]["roles"]:
        if role["name"] == "prefill":
            role["replicas"], role["maxUnavailable"] = 2, 1
    text = yaml.safe_dump(doc)
    old, new = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old.write_text(text)
    new.write_text(text.replace(OLD_IMAGE, NEW_IMAGE))
    return str(old), str(new)


@pytest.mark.parametrize("kind", [*sorted(EXAMPLES), "ModelServing/RoleRollingUpdate"])
def test_plan_and_simulate_print_the_same_columns_and_rows(kind, tmp_path, capsys):
    old, new = role_rolling(tmp_path) if kind.endswith("RoleRollingUpdate") else change(tmp_path, kind)
    code, planned = run(capsys, "plan", old, new, "--ascii")
    assert code == 0
    code, simulated = run(capsys, "simulate", "--from", old, "--to", new, "--ascii")
    assert code == 0
    p_head, p_rows, p_legend = table(planned)
    s_head, s_rows, s_legend = table(simulated)
    assert p_head == s_head  # same lanes, same column meanings
    assert p_rows[0] == s_rows[0], "the state before the change is drawn alike (against OLD's own revision)"
    assert p_rows[-1] == s_rows[-1], "the converged state is drawn alike"
    assert p_legend.startswith("legend: ") and s_legend.startswith("legend: ")
    if kind != "LeaderWorkerSet":  # generic prediction: every planned state is one simulate observes
        assert is_subsequence(p_rows, s_rows), (p_rows, s_rows)


def test_disaggregatedset_lanes_and_replicas_mean_the_same_in_plan_and_simulate(tmp_path, capsys):
    old, new = change(tmp_path, "DisaggregatedSet")
    assert run(capsys, "plan", old, new)[0] == 0
    _, planned = run(capsys, "plan", old, new, "--format", "json")
    _, simulated = run(capsys, "simulate", "--from", old, "--to", new, "--format", "json")
    p, s = json.loads(planned)["rows"], json.loads(simulated)["rows"]
    lanes = lambda row: [(lane["name"], lane["old"], lane["new"]) for lane in row["lanes"]]  # noqa: E731
    # stage 1: every group on the then-current revision, in both (was 6|0 in plan, 0|6 in simulate)
    assert lanes(p[0]) == lanes(s[0]) == [("prefill", 0, 6), ("decode", 0, 2)]
    # Replicas = what the role LeaderWorkerSets are asked to run (surge included), in both
    assert p[1]["replicas"] == s[1]["replicas"] == 10 and p[0]["replicas"] == s[0]["replicas"] == 8
    assert max(r["replicas"] for r in s) == max(r["replicas"] for r in p) == 10


@pytest.mark.parametrize("kind", ["LeaderWorkerSet", "ModelServing"])
def test_stage_one_draws_the_same_state_with_the_same_mark(kind, tmp_path, capsys):
    old, new = change(tmp_path, kind)
    _, planned = run(capsys, "plan", old, new)
    lines = planned.splitlines()
    first, legend = lines[2], lines[-1]
    ready = UNICODE.mark("updated-ready")
    assert (
        first.startswith("Stage 1")
        and [c for c in re.split(r"\s+", first) if c in UNICODE.marks.values()] == [ready] * 4
    )
    assert "❎" not in planned and "🔵 old revision, ready" in legend


def test_component_preview_table_is_plans_renderer_for_disaggregatedset(tmp_path, capsys):
    """The preview log's table of a DisaggregatedSet draws its role lanes with real counts (was
    the LeaderWorkerSet group code: ``groups=--``, Live 0 / Available 0, R-0..R-7 columns)."""
    from pulumi_lws.components.outputs import stage_table
    from pulumi_lws.sim.driver.change import converged_snapshot

    old, new = change(tmp_path, "DisaggregatedSet")
    old_doc, new_doc = (yaml.safe_load(pathlib.Path(p).read_text()) for p in (old, new))
    workload = workload_of(new_doc)
    spec = workload.parse(new_doc)
    stage = workload.reconcile(spec, converged_snapshot(old_doc, new_doc), workload.options()).stage
    preview = stage_table(stage, workload.stage_lanes(spec))
    assert stage_table(stage) == preview  # as the component logs it (the stage's lanes say what they count)
    head, rows, legend = table(preview)
    _, planned = run(capsys, "plan", old, new)
    p_head, p_rows, _ = table(planned)
    assert head == p_head and "R-0" not in preview
    assert rows == p_rows[1:]  # the first reconcile of NEW and the planner's remaining stages
    assert rows[0][-2:] == ["10", "8"]  # Live / Available of the current stage
    assert legend.startswith("legend: old|new")


def test_modelserving_role_rolling_update_draws_role_lanes(tmp_path, capsys):
    """ModelServing per ServingGroup, and under RoleRollingUpdate per role: its replicas in every
    group on an old template | on the role's; Live / Available still count ServingGroups."""
    old, new = role_rolling(tmp_path)
    _, planned = run(capsys, "plan", old, new, "--ascii")
    head, rows, _ = table(planned)
    assert head[:4] == ["Stage", "Replicas", "prefill old|new", "decode old|new"] and "R-0" not in planned
    assert rows[0] == ["4", "0|8", "0|4", "4", "4"]  # 4 groups of prefill x2 + decode x1, before the change
    assert rows[-1] == ["4", "0|8", "0|4", "4", "4"]
    assert rows[1][1] == "4|4 (4|0 ready)" and rows[1][-1] == "0"  # one prefill replica per group first
    _, data = run(capsys, "plan", old, new, "--format", "json")
    assert all(row["live"] <= 4 for row in json.loads(data)["rows"])  # ServingGroups, not role replicas


def test_every_api_names_its_lanes():
    from pulumi_lws.workloads import registered

    for kind, workload in registered().items():
        spec = workload.parse(yaml.safe_load(EXAMPLES[kind].read_text()))
        assert isinstance(workload.stage_lanes(spec), Lanes)
    assert (
        registered()["DisaggregatedSet"].stage_lanes(
            registered()["DisaggregatedSet"].parse(yaml.safe_load(EXAMPLES["DisaggregatedSet"].read_text()))
        )
        is Lanes.ROLES
    )
    ms = registered()["ModelServing"]
    doc = yaml.safe_load(EXAMPLES["ModelServing"].read_text())
    assert ms.stage_lanes(ms.parse(doc)) is Lanes.GROUPS
    doc["spec"]["rolloutStrategy"] = {"type": "RoleRollingUpdate"}
    assert ms.stage_lanes(ms.parse(doc)) is Lanes.ROLE_REPLICAS


def test_ascii_fallback_when_stdout_cannot_encode_the_marks(tmp_path):
    old, new = change(tmp_path, "LeaderWorkerSet")
    env = {**os.environ, "PYTHONIOENCODING": "ascii", "PYTHONPATH": str(ROOT)}
    for argv in (["plan", old, new], ["simulate", "--from", old, "--to", new]):
        done = subprocess.run(
            [sys.executable, "-m", "pulumi_lws.cli", *argv], capture_output=True, env=env, timeout=300
        )
        out = done.stdout.decode("ascii")  # nothing but ASCII
        assert done.returncode == 0, done.stderr.decode()
        assert "Traceback" not in done.stderr.decode()
        _, rows, legend = table(out)
        assert rows[0].count(ASCII.mark("updated-ready")) == 4
        assert legend.startswith("legend: U updated, ready")


def test_ascii_flag_and_markdown_legend(tmp_path, capsys):
    old, new = change(tmp_path, "ModelServing")
    _, out = run(capsys, "plan", old, new, "--ascii", "--format", "markdown")
    lines = out.splitlines()
    assert lines[0].startswith("| Stage |") and "| U | U | U | U |" in lines[2]
    assert lines[-2] == "" and lines[-1] == "legend: U updated, ready; u updated, not ready; o old revision, ready"
    assert not any(m in out for m in UNICODE.marks.values())
