"""``pulumi-lws plan --diff``: per-object unified diffs of the next ``pulumi up``; "no changes"."""

from __future__ import annotations

import json

import pytest
import yaml
from test_ordinal_cli import HASH, SEED, with_image, write

from pulumi_lws.cli import main
from pulumi_lws.cli.diff import NULL, object_diffs, plan_diff

NAME = SEED["metadata"]["name"]


def run(capsys, *argv):
    code = main(["plan", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_diff_shows_the_image_change_per_object_after_the_stage_table(tmp_path, capsys):
    old, new = (
        write(tmp_path, "o.yaml", SEED),
        write(tmp_path, "n.yaml", with_image(SEED, "nginxinc/nginx-unprivileged:1.28")),
    )
    code, out, _ = run(capsys, old, new, "--diff")
    assert code == 0
    table, _, diff = out.partition(f"--- a/StatefulSet/{NAME}\n")
    assert "Stage 1" in table and "rollout complete" in table  # the diff comes after the table
    assert diff.startswith(f"+++ b/StatefulSet/{NAME}\n@@ ")
    assert "-        image: nginxinc/nginx-unprivileged:1.27\n" in diff
    assert "+        image: nginxinc/nginx-unprivileged:1.28\n" in diff
    assert "+      partition: 2\n" in diff  # the first stage admits the top ordinals only
    # the new revision is created; only the admitted group's worker StatefulSets change
    assert f"--- {NULL}\n+++ b/ControllerRevision/{NAME}-" in out
    assert f"--- a/StatefulSet/{NAME}-3\n+++ b/StatefulSet/{NAME}-3\n" in out
    assert f"a/StatefulSet/{NAME}-0\n" not in out


def test_scale_down_deletes_objects_against_dev_null():
    old = json.loads(json.dumps(SEED))
    new = json.loads(json.dumps(SEED))
    new["spec"]["replicas"] = 2
    diffs = {d.key: d for d in plan_diff(old, new)}
    assert {k for k, d in diffs.items() if d.change == "deleted"} >= {f"StatefulSet/{NAME}-2", f"StatefulSet/{NAME}-3"}
    assert f"+++ {NULL}\n" in diffs[f"StatefulSet/{NAME}-3"].text
    assert (
        "-  replicas: 4\n" in diffs[f"StatefulSet/{NAME}"].text
        and "+  replicas: 2\n" in diffs[f"StatefulSet/{NAME}"].text
    )


def test_hash_mode_diff_names_the_deployment():
    diffs = plan_diff(HASH, with_image(HASH, "x:2"))
    deployment = next(d for d in diffs if d.key.startswith("Deployment/"))
    assert "+        image: x:2\n" in deployment.text or "+          image: x:2\n" in deployment.text


def test_object_diffs_ignore_key_order():
    a = {"kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"x": "1", "y": "2"}}
    b = {"metadata": {"name": "c"}, "data": {"y": "2", "x": "1"}, "kind": "ConfigMap"}
    assert object_diffs([a], [b]) == []


@pytest.mark.parametrize("extra", [[], ["--diff"], ["--format", "markdown"]])
def test_identical_files_print_no_changes(tmp_path, capsys, extra):
    path = write(tmp_path, "o.yaml", SEED)
    same = write(tmp_path, "n.yaml", "# another file, same LeaderWorkerSet\n" + yaml.safe_dump(SEED))
    code, out, _ = run(capsys, path, same, *extra)
    assert (code, out) == (0, "no changes\n")


def test_identical_json(tmp_path, capsys):
    path = write(tmp_path, "o.yaml", SEED)
    code, out, _ = run(capsys, path, path, "--format", "json", "--diff")
    data = json.loads(out)
    assert code == 0 and data["changes"] is False and data["converged"] and data["rows"] == []


def test_json_diff_lists_objects_and_keeps_case(tmp_path, capsys):
    old, new = write(tmp_path, "o.yaml", SEED), write(tmp_path, "n.yaml", with_image(SEED, "x:2"))
    code, out, _ = run(capsys, old, new, "--format", "json", "--diff")
    data = json.loads(out)
    assert code == 0 and data["changes"] is True
    assert {"object": f"StatefulSet/{NAME}", "change": "changed"}.items() <= data["diff"][1].items()
    assert any("+        image: x:2\n" in d["diff"] for d in data["diff"])
    assert data["rows"][1]["case"] is not None  # machine-readable case kept


def test_markdown_diff_is_fenced(tmp_path, capsys):
    old, new = write(tmp_path, "o.yaml", SEED), write(tmp_path, "n.yaml", with_image(SEED, "x:2"))
    code, out, _ = run(capsys, old, new, "--diff", "--format", "markdown")
    assert code == 0 and "\n```diff\n--- " in out and out.endswith("```\n")
