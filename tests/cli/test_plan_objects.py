"""``pulumi-lws plan --objects``: the objects each ``pulumi up`` of the rollout changes, after the
stage table (table, markdown) or under ``objects`` (json), for all three APIs."""

from __future__ import annotations

import json

import pytest
import yaml
from conftest import REPO_ROOT

from pulumi_lws.cli import main
from pulumi_lws.sim.driver.stage_objects import rollout_objects

EXAMPLES = REPO_ROOT / "examples"
FILES = {
    "LeaderWorkerSet": EXAMPLES / "quickstart" / "lws.yaml",
    "ModelServing": EXAMPLES / "modelserving-pd" / "ms.yaml",
    "DisaggregatedSet": EXAMPLES / "disaggregated-pd" / "ds.yaml",
}


@pytest.fixture
def change(tmp_path):
    def make(kind: str) -> tuple[str, str]:
        text = FILES[kind].read_text()
        new = tmp_path / f"new-{kind}.yaml"
        new.write_text(text.replace("nginx-unprivileged:1.27", "nginx-unprivileged:1.28"))
        return str(FILES[kind]), str(new)

    return make


@pytest.mark.parametrize("kind", list(FILES))
def test_json_lists_every_up_with_its_counts_and_stage(kind, change, capsys):
    old, new = change(kind)
    assert main(["plan", old, new, "--format", "json", "--objects"]) == 0
    data = json.loads(capsys.readouterr().out)
    objects = data["objects"]
    assert objects["complete"] is True and objects["blocked"] is None
    ups = objects["ups"]
    assert ups[0]["up"] == 1 and ups[0]["stage"] == 2
    if kind != "LeaderWorkerSet":  # one up per stage of the table
        assert [u["stage"] for u in ups] == list(range(2, len(data["rows"]) + 1))
    docs = [next(d for d in yaml.safe_load_all(open(p)) if d and d.get("kind") == kind) for p in (old, new)]
    expected = rollout_objects(*docs).ups
    assert [{k: v for k, v in u.items() if k != "stage"} for u in ups] == [u.to_json() for u in expected]


def test_table_prints_one_line_per_up_after_the_table(change, capsys):
    old, new = change("ModelServing")
    assert main(["plan", old, new, "--objects", "--ascii"]) == 0
    out = capsys.readouterr().out
    section = out.split("objects changed by each pulumi up of the rollout:\n", 1)[1].splitlines()
    assert section[0] == "  pulumi up 1 (stage 2): 1 created, 4 updated, 0 deleted"
    assert all(line.startswith("  pulumi up ") for line in section)


def test_markdown_is_a_list(change, capsys):
    old, new = change("DisaggregatedSet")
    assert main(["plan", old, new, "--objects", "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "\nObjects changed by each `pulumi up` of the rollout:\n\n- `pulumi up` 1 (stage 2): " in out


def test_controller_mode_refuses_objects(change, capsys):
    old, new = change("LeaderWorkerSet")
    assert main(["plan", old, new, "--objects", "--mode", "controller"]) == 2
    assert "--objects shows the native objects of operator-free mode" in capsys.readouterr().err
