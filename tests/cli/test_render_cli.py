"""``pulumi-lws render`` (default ``--stage first``): creation-stage YAML through reconcile(lws, EMPTY), multi-document input,
namespaces, and clean failures on invalid input."""

from __future__ import annotations

import pytest
import yaml
from conftest import TESTS_DIR, validate_manifest

from pulumi_lws.cli import main
from pulumi_lws.lws import labels as L

GOLDEN = TESTS_DIR / "golden" / "ordinal"
INPUTS = GOLDEN / "inputs"
#: goldens rendered with extra renderer arguments differ from the plain creation stage
# exclusive-topology and leader-ready hold worker StatefulSets back at creation (placement), so
# the CLI's creation stage differs from the renderer-level goldens; see the tests below.
PLAIN_CASES = sorted(p.stem for p in INPUTS.glob("*.yaml") if p.stem not in ("exclusive-topology", "leader-ready"))


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["render", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def docs(text: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(text) if d is not None]


@pytest.mark.parametrize("case", PLAIN_CASES)
def test_render_matches_golden_creation_stage(capsys, case):
    code, out, err = run(capsys, str(INPUTS / f"{case}.yaml"))
    assert code == 0, err
    assert out.startswith("# LeaderWorkerSet ") and "first `pulumi up` on an empty cluster" in out.splitlines()[0]
    assert docs(out) == docs((GOLDEN / f"{case}.yaml").read_text())


def test_multi_document_file_and_namespace(capsys, tmp_path):
    first = yaml.safe_load((INPUTS / "rollout-strategy.yaml").read_text())
    second = yaml.safe_load((INPUTS / "unique-per-replica.yaml").read_text())  # sets namespace: inference
    path = tmp_path / "two.yaml"
    path.write_text(yaml.safe_dump_all([first, None, second]))
    code, out, err = run(capsys, str(path), "--namespace", "team-a")
    assert code == 0, err
    objs = docs(out)
    assert [line for line in out.splitlines() if line.startswith("# ")] == [
        line for line in out.splitlines() if line.startswith("# LeaderWorkerSet ")
    ]
    assert out.count("# LeaderWorkerSet ") == 2
    by_lws = {}
    for obj in objs:
        by_lws.setdefault(obj["metadata"]["labels"][L.NAME], set()).add(obj["metadata"]["namespace"])
        validate_manifest(obj)
    assert by_lws == {"leaderworkerset-sample": {"team-a"}, "leaderworkerset-multi-template": {"inference"}}


def test_stdin(capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO((INPUTS / "dual-template.yaml").read_text()))
    code, out, _ = run(capsys, "-")
    assert code == 0
    assert ("StatefulSet", "leaderworkerset-sample-2") in {(o["kind"], o["metadata"]["name"]) for o in docs(out)}


@pytest.mark.parametrize(
    "text,needle",
    [
        (
            "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: Bad_Name}\n",
            "metadata.name",
        ),
        (
            "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: ok}\nspec: {replicas: many}\n",
            "spec.replicas",
        ),
        ("kind: [unclosed\n", "invalid YAML"),
        ("- just\n- a list\n", "expected a mapping"),
        ("", "no YAML document"),
    ],
)
def test_invalid_input_exits_2_with_message(capsys, tmp_path, text, needle):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    code, out, err = run(capsys, str(path))
    assert code == 2
    assert out == ""
    assert err.startswith("error: ") and needle in err


def test_one_invalid_document_prints_nothing(capsys, tmp_path):
    good = (INPUTS / "rollout-strategy.yaml").read_text()
    path = tmp_path / "mixed.yaml"
    path.write_text(
        good + "\n---\napiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: X}\n"
    )
    code, out, err = run(capsys, str(path))
    assert code == 2 and out == "" and "metadata.name" in err


def test_missing_file_exits_2(capsys, tmp_path):
    code, out, err = run(capsys, str(tmp_path / "nope.yaml"))
    assert code == 2 and out == "" and "nope.yaml" in err


def test_leader_ready_creation_stage_has_no_workers_yet(capsys):
    """LeaderReady: worker StatefulSets appear only once a leader is observed Ready."""
    code, out, err = run(capsys, str(INPUTS / "leader-ready.yaml"))
    assert code == 0, err
    objs = docs(out)
    golden = docs((GOLDEN / "leader-ready.yaml").read_text())
    sts = [o["metadata"]["name"] for o in objs if o["kind"] == "StatefulSet"]
    assert sts == [o["metadata"]["name"] for o in golden if o["kind"] == "StatefulSet"][:1]
    assert [o for o in objs if o["kind"] != "StatefulSet"] == [o for o in golden if o["kind"] != "StatefulSet"]


@pytest.mark.parametrize(
    "patch, words",
    [
        ({}, "3 groups of 4 pods on revision {rev}: leader StatefulSet and 3 worker StatefulSets"),
        (
            {"startupPolicy": "LeaderReady"},
            (
                "leader StatefulSet only; worker StatefulSets follow once leader pods are Ready "
                "(startupPolicy LeaderReady); --stage steady shows them"
            ),
        ),
        (
            {"groupIdentity": "Hash"},
            (
                "leader Deployment only; worker StatefulSets follow once leader pods exist "
                "(each group's name comes from its leader pod); --stage steady shows them"
            ),
        ),
        ({"leaderWorkerTemplate": {"size": 1}}, "leader StatefulSet only (size 1: no workers)"),
        ({"replicas": 0}, "no groups yet (replicas 0)"),
    ],
)
def test_first_stage_header_says_in_words_what_is_printed(capsys, tmp_path, patch, words):
    doc = yaml.safe_load((TESTS_DIR / "manifests_upstream" / "docs_examples_sample_lws.yaml").read_text())
    for key, value in patch.items():
        if isinstance(value, dict):
            doc["spec"][key].update(value)
        else:
            doc["spec"][key] = value
    path = tmp_path / "lws.yaml"
    path.write_text(yaml.safe_dump(doc))
    code, out, err = run(capsys, str(path))
    assert code == 0, err
    head = out.splitlines()[0]
    rev = next(o for o in docs(out) if o["kind"] == "ControllerRevision")["metadata"]["labels"][
        L.TEMPLATE_REVISION_HASH
    ]
    assert head.startswith("# LeaderWorkerSet default/leaderworkerset-sample: first `pulumi up` on an empty cluster, ")
    assert head.endswith(words.format(rev=rev))
    assert "groups=" not in head and "[in progress]" not in head


def test_help_documents_stages_and_pass_through(capsys):
    assert main(["render", "--help"]) == 0
    out = capsys.readouterr().out
    assert "passed through unchanged" in out and "steady" in out and "--gang-provider" in out and "--nodes" in out
