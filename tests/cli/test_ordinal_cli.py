"""``pulumi-lws plan OLD.yaml NEW.yaml``: the seeds' documented sequence, formats, RolloutFirst, errors."""

from __future__ import annotations

import json

import pytest
import yaml

from pulumi_lws.cli import main

SEED = {
    "apiVersion": "leaderworkerset.x-k8s.io/v1",
    "kind": "LeaderWorkerSet",
    "metadata": {"name": "leaderworkerset-sample"},
    "spec": {
        "rolloutStrategy": {
            "type": "RollingUpdate",
            "rollingUpdateConfiguration": {"maxUnavailable": 2, "maxSurge": 2},
        },
        "replicas": 4,
        "leaderWorkerTemplate": {
            "size": 4,
            "workerTemplate": {
                "spec": {"containers": [{"name": "nginx", "image": "nginxinc/nginx-unprivileged:1.27"}]}
            },
        },
    },
}


def write(tmp_path, name, doc):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc) if not isinstance(doc, str) else doc)
    return str(path)


def with_image(doc, image, replicas=None, gpus=None):
    out = json.loads(json.dumps(doc))
    c = out["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]
    c["image"] = image
    if gpus:
        c["resources"] = {"limits": {"nvidia.com/gpu": gpus}}
    if replicas is not None:
        out["spec"]["replicas"] = replicas
    return out


def plan_json(tmp_path, old, new, *extra):
    rc = main(["plan", write(tmp_path, "old.yaml", old), write(tmp_path, "new.yaml", new), "--format", "json", *extra])
    return rc


def test_seed_example_prints_documented_sequence(tmp_path, capsys):
    rc = plan_json(tmp_path, SEED, with_image(SEED, "nginxinc/nginx-unprivileged:1.28"))
    data = json.loads(capsys.readouterr().out)
    assert rc == 0 and data["converged"]
    shape = [(r["partition"], r["replicas"]) for r in data["rows"]]
    # documented: (4,6) transient [folded] -> (2,6) -> (2,6) R-4 ready -> (0,6) R-5 ready -> (0,4) surge reclaimed
    assert shape == [(0, 4), (2, 6), (2, 6), (0, 6), (0, 6), (0, 4), (0, 4), (0, 4)]
    states = ["".join(g["state"] for g in r["groups"]) for r in data["rows"]]
    assert states[1:4] == ["oouuuu", "oouuUu", "uuuuUU"]
    assert all(r["available"] >= 2 for r in data["rows"])  # R - MU


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_table_formats(tmp_path, capsys, fmt):
    rc = main(
        ["plan", write(tmp_path, "o.yaml", SEED), write(tmp_path, "n.yaml", with_image(SEED, "x:2")), "--format", fmt]
    )
    out = capsys.readouterr().out
    assert rc == 0 and "R-4 (Surge)" in out and "rollout complete" in out
    if fmt == "markdown":
        assert out.startswith("| Stage | Partition | Replicas |")


def test_rollout_first_717_example(tmp_path, capsys):
    old = with_image(SEED, "vllm:1", replicas=1, gpus=8)
    old["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"] = {"maxUnavailable": 1, "maxSurge": 0}
    new = with_image(old, "vllm:1", replicas=2, gpus=4)
    assert plan_json(tmp_path, old, new, "--update-order", "RolloutFirst") == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [(r["partition"], r["replicas"]) for r in rows] == [(0, 1), (0, 1), (0, 2), (0, 2)]
    assert max(r["live"] for r in rows) == 2  # never 12 GPUs of demand: old group replaced first
    assert plan_json(tmp_path, old, new) == 0  # ScaleFirst: creates the added ordinal first
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert (rows[1]["partition"], rows[1]["replicas"]) == (1, 2)


def test_invalid_input_exits_2(tmp_path, capsys):
    good = write(tmp_path, "good.yaml", SEED)
    assert main(["plan", good, write(tmp_path, "bad.yaml", "spec: [")]) == 2
    other = dict(SEED, metadata={"name": "other"})
    assert main(["plan", good, write(tmp_path, "other.yaml", other)]) == 2
    assert "different LeaderWorkerSets" in capsys.readouterr().err
    hashed = json.loads(json.dumps(SEED))
    hashed["spec"]["groupIdentity"] = "Hash"
    assert main(["plan", good, write(tmp_path, "hash.yaml", hashed)]) == 2
    assert "groupIdentity is immutable" in capsys.readouterr().err
    bad_budget = json.loads(json.dumps(SEED))
    bad_budget["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"]["maxSurge"] = "x%"
    assert main(["plan", good, write(tmp_path, "budget.yaml", bad_budget)]) == 2
    assert main(["plan", good, str(tmp_path / "missing.yaml")]) == 2


# ---- Hash mode ----------------------------------------------------------------------------------

HASH = json.loads(json.dumps(SEED))
HASH["spec"].update({"groupIdentity": "Hash", "replicas": 2})
HASH["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"] = {"maxUnavailable": 1, "maxSurge": 1}


def glyph_rows(data):
    mark = {"gated": "🔒", "terminating": "🗑"}
    return [" ".join(g["state"] + mark.get(g["detail"], "") for g in r["groups"]) for r in data["rows"]]


def test_hash_seed_trace(tmp_path, capsys):
    assert plan_json(tmp_path, HASH, with_image(HASH, "nginxinc/nginx-unprivileged:1.28")) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["converged"] and all(r["partition"] is None for r in data["rows"])
    # the seeds' 5 stages (R=2, MU 1, MS 1, PostTermination)
    # the first row against OLD's own revision (as simulate and the seeds' stage 1: every group ✅)
    assert glyph_rows(data) == ["U U", "o x🗑 u u🔒", "o - u u", "x🗑 - U u", "- - U U"]
    assert [g["id"] for g in data["rows"][-1]["groups"]] == ["#1", "#2", "#3", "#4"]  # creation order
    assert [r["live"] for r in data["rows"]] == [2, 3, 3, 2, 2]
    assert min(r["available"] for r in data["rows"]) == 1  # R - MU


def test_hash_table_and_combined_scale_up(tmp_path, capsys):
    new = with_image(HASH, "x:2", replicas=4)
    rc = main(["plan", write(tmp_path, "o.yaml", HASH), write(tmp_path, "n.yaml", new)])
    out = capsys.readouterr().out
    assert rc == 0 and "G-#1" in out and "G-#6" in out and "Partition" not in out and "rollout complete" in out
    assert plan_json(tmp_path, HASH, new) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert glyph_rows({"rows": rows[1:2]}) == ["o o u u u"]  # delta 2 >= MU 1: no old group disrupted first
    assert max(r["live"] for r in rows) <= 5  # R + MS


def test_hash_mu0_and_immediate(tmp_path, capsys):
    mu0 = json.loads(json.dumps(HASH))
    mu0["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"] = {"maxUnavailable": 0, "maxSurge": 1}
    assert plan_json(tmp_path, mu0, with_image(mu0, "x:2")) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert all(r["available"] == 2 for r in rows)
    imm = json.loads(json.dumps(HASH))
    imm["spec"]["groupReplacementPolicy"] = "Immediate"
    assert plan_json(tmp_path, imm, with_image(imm, "x:2")) == 0
    assert glyph_rows(json.loads(capsys.readouterr().out))[1] == "o x🗑 u u"
