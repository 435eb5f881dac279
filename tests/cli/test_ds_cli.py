"""The CLI on DisaggregatedSet manifests: ``plan OLD NEW`` for the disaggregated-pd example (the lanes
table, each role's old|new per stage, in text, markdown and json; ``--diff`` shows the child
objects changing; update-rule violations exit 2), ``render`` at both stages and
``simulate --from/--to``, with their exit codes."""

from __future__ import annotations

import copy
import json
import pathlib
import re

import pytest
import yaml
from conftest import TESTS_DIR, load_conformance, validate_manifest

from pulumi_lws.cli import main
from pulumi_lws.cli.exit_codes import BAD_INPUT
from pulumi_lws.disaggregatedset.api import DisaggregatedSet
from pulumi_lws.disaggregatedset.revision import compute_revision

ROOT = TESTS_DIR.parent
DS = ROOT / "examples" / "disaggregated-pd" / "ds.yaml"
OLD_IMAGE, NEW_IMAGE = "nginxinc/nginx-unprivileged:1.27", "nginxinc/nginx-unprivileged:1.28"
STEPS = next(v for v in load_conformance("disaggregatedset-planner.json") if v["name"] == "medium_6_2_surge1")[
    "expectedSteps"
]
#: each stage after the first: ((prefill old, new), (decode old, new)) — upstream's steps 1..12
LANES = [((s["old"][0], s["new"][0]), (s["old"][1], s["new"][1])) for s in STEPS[1:]]


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def example() -> dict:
    return yaml.safe_load(DS.read_text())


def with_image(doc: dict, image: str) -> dict:
    out = copy.deepcopy(doc)
    for r in out["spec"]["roles"]:
        for c in r["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"]:
            c["image"] = image
    return out


def write(tmp_path: pathlib.Path, name: str, *docs: dict) -> pathlib.Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(list(docs), sort_keys=False))
    return path


@pytest.fixture
def change(tmp_path) -> tuple[pathlib.Path, pathlib.Path]:
    return DS, write(tmp_path, "new.yaml", with_image(example(), NEW_IMAGE))


# ---- plan -----------------------------------------------------------------------------------------
def _cells(line: str, sep: str) -> list[str]:
    return [
        c.strip() for c in (line.strip().strip("|").split(" | ") if sep == "md" else re.split(r"\s{2,}", line.strip()))
    ]


def test_plan_table_shows_each_roles_old_new_lanes_per_stage(capsys, change) -> None:
    code, out, _ = run(capsys, "plan", *change)
    assert code == 0
    lines = out.splitlines()
    assert "prefill old|new" in lines[0] and "decode old|new" in lines[0]
    rows = [ln for ln in lines if re.match(r"Stage \d+ ", ln)]
    assert len(rows) == 13 and "rolling update complete" in rows[-1]
    for row, ((po, pn), (do, dn)) in zip(rows[1:], LANES):
        cells = _cells(row, "text")
        assert cells[2].split(" ")[0] == f"{po}|{pn}" and cells[3].split(" ")[0] == f"{do}|{dn}", row


def test_plan_markdown_shows_the_lanes_with_escaped_bars(capsys, change) -> None:
    code, out, _ = run(capsys, "plan", *change, "--format", "markdown")
    assert code == 0
    lines = [ln for ln in out.splitlines() if ln.startswith("|")]
    assert "prefill old" in lines[0] and "decode old" in lines[0] and set(lines[1]) <= {"|", "-"}
    rows = [ln for ln in lines if re.match(r"\| Stage \d+ ", ln)]
    assert len(rows) == 13
    for row, ((po, pn), (do, dn)) in zip(rows[1:], LANES):
        cells = _cells(row, "md")
        assert cells[2].split(" ")[0] == f"{po}\\|{pn}" and cells[3].split(" ")[0] == f"{do}\\|{dn}", row


def test_plan_markdown_header_escapes_the_lane_bars(capsys, change) -> None:
    _code, out, _ = run(capsys, "plan", *change, "--format", "markdown")
    header = next(ln for ln in out.splitlines() if ln.startswith("|"))
    assert "prefill old\\|new" in header and "decode old\\|new" in header


def test_plan_json_carries_the_lanes_per_row(capsys, change) -> None:
    code, out, _ = run(capsys, "plan", *change, "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["converged"] is True and doc["violations"] == []
    lanes = [tuple((lane["old"], lane["new"]) for lane in row["lanes"]) for row in doc["rows"][1:]]
    assert lanes == LANES
    assert all([lane["name"] for lane in row["lanes"]] == ["prefill", "decode"] for row in doc["rows"][1:])
    target = compute_revision(DisaggregatedSet.from_manifest(with_image(example(), NEW_IMAGE)))
    assert doc["rows"][-1]["revision"] == target
    assert len(doc["rows"][-1]["groups"]) == 8 and {g["state"] for g in doc["rows"][-1]["groups"]} == {"U"}


def test_plan_diff_shows_the_child_objects_changing(capsys, change) -> None:
    code, out, _ = run(capsys, "plan", *change, "--diff")
    assert code == 0
    table, _, diff = out.partition("\n--- ")
    assert "Stage 13" in table and diff
    old_rev = compute_revision(DisaggregatedSet.from_manifest(example()))
    new_rev = compute_revision(DisaggregatedSet.from_manifest(with_image(example(), NEW_IMAGE)))
    # the new revision's children are created: their LWS objects appear with the new image
    for role in ("prefill", "decode"):
        assert f"+++ b/StatefulSet/pd-0-{new_rev}-{role}\n" in diff
        assert f"+++ b/ControllerRevision/pd-0-{new_rev}-{role}-" in diff
    assert f"+            image: {NEW_IMAGE}" in diff
    # the old children are stamped with initial-replicas (updated, not replaced)
    assert f"StatefulSet/pd-0-{old_rev}-prefill\n" in diff
    assert "+    disaggregatedset.x-k8s.io/initial-replicas: '6'" in diff


def test_plan_of_an_unchanged_set_has_no_changes(capsys) -> None:
    code, out, _ = run(capsys, "plan", DS, DS, "--diff")
    assert code == 0 and "no changes" in out


@pytest.mark.parametrize(
    "edit,message",
    [
        (lambda d: d["metadata"].update(name="other"), "name different DisaggregatedSets"),
        (lambda d: d["metadata"].update(namespace="elsewhere"), "namespace"),
        (
            lambda d: d["spec"]["roles"][0]["spec"].update(
                rolloutStrategy={"rollingUpdateConfiguration": {"partition": 1}}
            ),
            "partition",
        ),
    ],
)
def test_plan_update_rule_violations_exit_2(capsys, tmp_path, edit, message) -> None:
    new = with_image(example(), NEW_IMAGE)
    edit(new)
    code, out, err = run(capsys, "plan", DS, write(tmp_path, "new.yaml", new))
    assert code == BAD_INPUT and "Traceback" not in out + err
    assert message in err, err


def test_plan_of_another_kind_exits_2(capsys) -> None:
    code, _, err = run(capsys, "plan", DS, ROOT / "examples" / "modelserving-pd" / "ms.yaml")
    assert code == BAD_INPUT and "different kinds" in err


# ---- render and simulate --------------------------------------------------------------------------
@pytest.mark.parametrize("stage", ["first", "steady"])
def test_render_the_example_prints_valid_child_objects(capsys, stage) -> None:
    code, out, err = run(capsys, "render", DS, "--stage", stage)
    assert code == 0, err
    docs = [d for d in yaml.safe_load_all(out) if d]
    assert out.startswith("#") and "DisaggregatedSet" in out.splitlines()[0]
    for d in docs:
        validate_manifest(d)
    rev = compute_revision(DisaggregatedSet.from_manifest(example()))
    names = {(d["kind"], d["metadata"]["name"]) for d in docs}
    assert {("StatefulSet", f"pd-0-{rev}-prefill"), ("StatefulSet", f"pd-0-{rev}-decode")} <= names
    workers = {n for k, n in names if k == "StatefulSet" and re.fullmatch(rf"pd-0-{rev}-(prefill|decode)-\d+", n)}
    if stage == "steady":
        assert len(workers) == 8  # 6 prefill + 2 decode groups of size 2
        assert {("Service", f"pd-0-{rev}-prefill-prv"), ("Service", f"pd-0-{rev}-decode-prv")} <= names


def test_simulate_from_to_on_the_example_converges(capsys, change) -> None:
    code, out, err = run(capsys, "simulate", "--from", change[0], "--to", change[1], "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["converged"] is True and doc["violations"] == []
    lanes = [tuple((lane["old"], lane["new"]) for lane in row["lanes"]) for row in doc["rows"][1:]]
    assert [r for i, r in enumerate(lanes) if i == 0 or lanes[i - 1] != r] == LANES
