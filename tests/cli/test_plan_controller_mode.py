"""``pulumi-lws plan --mode controller``: the same stage sequence as operator-free mode (the
planners model the upstream controllers), plus where that model is upstream-exact and where it
approximates; pulumi-lws-only choices are refused (exit 2)."""

from __future__ import annotations

import copy
import json
import pathlib

import pytest
import yaml

from pulumi_lws.cli import main
from pulumi_lws.cli.exit_codes import BAD_INPUT
from pulumi_lws.workloads import workload_for

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAMPLES = {
    "lws-ordinal": ROOT / "examples" / "quickstart" / "lws.yaml",
    "lws-hash": ROOT / "examples" / "hash" / "lws.yaml",
    "modelserving": ROOT / "examples" / "modelserving-pd" / "ms.yaml",
    "disaggregatedset": ROOT / "examples" / "disaggregated-pd" / "ds.yaml",
}


def new_image(doc, image="nginxinc/nginx-unprivileged:1.29"):
    out = copy.deepcopy(doc)

    def walk(node):
        if isinstance(node, dict):
            for k, v in node.items():
                if k == "containers":
                    for c in v:
                        c["image"] = image
                else:
                    walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(out["spec"])
    return out


def files(tmp_path, sample):
    doc = yaml.safe_load(SAMPLES[sample].read_text())
    old, new = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old.write_text(yaml.safe_dump(doc))
    new.write_text(yaml.safe_dump(new_image(doc)))
    return str(old), str(new), doc["kind"]


def plan_json(capsys, *argv):
    code = main(["plan", *argv, "--format", "json"])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip() else None, err


@pytest.mark.parametrize("sample", sorted(SAMPLES))
def test_controller_mode_predicts_the_operator_free_stage_sequence(tmp_path, capsys, sample):
    old, new, kind = files(tmp_path, sample)
    code_free, free, _ = plan_json(capsys, old, new)
    code_ctl, ctl, err = plan_json(capsys, old, new, "--mode", "controller")
    assert code_ctl == code_free, err
    assert ctl["rows"] == free["rows"] and len(ctl["rows"]) > 1
    assert ctl["mode"] == "controller" and ctl["model"] == workload_for(kind).upstream.model
    assert "mode" not in free


def test_the_table_says_where_the_model_is_exact(tmp_path, capsys):
    old, new, _ = files(tmp_path, "lws-ordinal")
    main(["plan", old, new, "--mode", "controller"])
    out = capsys.readouterr().out
    assert "mode: controller: the LeaderWorkerSet controller takes these stages" in out and "Ordinal: exact" in out


@pytest.mark.parametrize("flags,named", [(["--update-order", "RolloutFirst"], "RolloutFirst"), (["--diff"], "--diff")])
def test_operator_free_choices_are_refused(tmp_path, capsys, flags, named):
    old, new, _ = files(tmp_path, "lws-ordinal")
    assert main(["plan", old, new, "--mode", "controller", *flags]) == BAD_INPUT
    err = capsys.readouterr().err
    assert err.startswith("error: ") and named in err and "Traceback" not in err
