"""``pulumi-lws plan``: the update rules (immutable fields), multi-document files and ``--name``,
plain-word descriptions, and help texts without markup (plan, simulate, rollout)."""

from __future__ import annotations

import json

import pytest
import yaml
from test_ordinal_cli import SEED, with_image, write

from pulumi_lws.cli import main
from pulumi_lws.lws.rollout.ordinal.cases import CASE_WORDS, describe_case


def edited(doc, path, value):
    out = json.loads(json.dumps(doc))
    node = out
    *head, last = path
    for key in head:
        node = node.setdefault(key, {})
    if value is None:
        node.pop(last, None)
    else:
        node[last] = value
    return out


SGS = {"subGroupSize": 2}
SGS_PATH = "spec.leaderWorkerTemplate.SubGroupPolicy.subGroupSize"  # upstream's path, capital S


@pytest.mark.parametrize(
    "old_edit, new_edit, path",
    [
        (
            (("spec", "leaderWorkerTemplate", "subGroupPolicy"), SGS),
            (("spec", "leaderWorkerTemplate", "subGroupPolicy"), {"subGroupSize": 4}),
            SGS_PATH,
        ),
        (None, (("spec", "leaderWorkerTemplate", "subGroupPolicy"), SGS), SGS_PATH),
        (None, (("spec", "podTerminationPolicy"), "Parallel"), "spec.podTerminationPolicy"),
        (None, (("spec", "groupIdentity"), "Hash"), "spec.groupIdentity"),
    ],
)
def test_immutable_field_changes_exit_2_naming_the_field(tmp_path, capsys, old_edit, new_edit, path):
    old = edited(SEED, *old_edit) if old_edit else SEED
    new = edited(with_image(old, "x:2"), *new_edit)
    for extra in ([], ["--diff"], ["--format", "json"]):
        assert main(["plan", write(tmp_path, "o.yaml", old), write(tmp_path, "n.yaml", new), *extra]) == 2
        out, err = capsys.readouterr()
        assert out == "" and path in err and "Traceback" not in err


MULTI = [
    {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "front"}, "spec": {"ports": [{"port": 80}]}},
    SEED,
    {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "hpa"},
        "spec": {"scaleTargetRef": {"kind": "LeaderWorkerSet", "name": SEED["metadata"]["name"]}},
    },
]


def multi(tmp_path, name, docs):
    return write(tmp_path, name, yaml.safe_dump_all(docs))


def test_other_kinds_in_the_file_are_ignored(tmp_path, capsys):
    old = multi(tmp_path, "o.yaml", MULTI)
    new = multi(tmp_path, "n.yaml", [MULTI[0], with_image(SEED, "x:2"), MULTI[2]])
    assert main(["plan", old, new]) == 0
    assert "rollout complete" in capsys.readouterr().out


def test_several_leaderworkersets_need_name(tmp_path, capsys):
    other = edited(SEED, ("metadata", "name"), "second")
    old = multi(tmp_path, "o.yaml", [*MULTI, other])
    new = multi(tmp_path, "n.yaml", [MULTI[0], SEED, with_image(other, "x:2")])
    assert main(["plan", old, new]) == 2
    err = capsys.readouterr().err
    assert "--name" in err and "LeaderWorkerSet/leaderworkerset-sample" in err and "LeaderWorkerSet/second" in err
    assert main(["plan", old, new, "--name", "second"]) == 0
    assert "R-0" in capsys.readouterr().out
    assert main(["plan", old, new, "--name", SEED["metadata"]["name"]]) == 0
    assert capsys.readouterr().out == "no changes\n"
    assert main(["plan", old, new, "--name", "missing"]) == 2
    assert "no workload named 'missing'" in capsys.readouterr().err


def test_a_file_without_leaderworkerset_exits_2(tmp_path, capsys):
    only_service = multi(tmp_path, "s.yaml", [MULTI[0]])
    assert main(["plan", only_service, write(tmp_path, "n.yaml", SEED)]) == 2
    assert "no LeaderWorkerSet" in capsys.readouterr().err


def test_descriptions_are_plain_words(tmp_path, capsys):
    old, new = write(tmp_path, "o.yaml", SEED), write(tmp_path, "n.yaml", with_image(SEED, "x:2", replicas=6))
    assert main(["plan", old, new]) == 0
    out = capsys.readouterr().out
    assert "case" not in out.lower()
    assert "apply NEW: template changed: new revision admitted from the top ordinal" in out


def test_every_case_has_words():
    from pulumi_lws.lws.rollout.budget import ROLLOUT_FIRST_CASE

    assert set(CASE_WORDS) == {"1", "2", "3", "3b", "4", "5", ROLLOUT_FIRST_CASE}
    assert all(describe_case(c) and not describe_case(c)[0].isdigit() for c in CASE_WORDS)
    assert describe_case(None) == ""


@pytest.mark.parametrize("command", ["plan", "simulate", "rollout"])
def test_help_has_no_markup(capsys, command):
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert "`" not in out and ":func:" not in out and ":mod:" not in out
    if command == "rollout":
        assert "(default: 50)" in out and "(default: dev)" in out and "until every" in out
    if command == "simulate":
        assert "--name NAME" in out and "multi-document" in out
