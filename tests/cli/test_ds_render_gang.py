"""``pulumi-lws render --gang-provider`` for a DisaggregatedSet whose roles use ``spec.scheduling``:
every child LeaderWorkerSet's gang objects follow the flag, first stage and steady state alike
(Volcano: one PodGroup per child group; kubernetes: the Workload + PodGroups), as for a
LeaderWorkerSet; every printed object validated (kubernetes-validate strict; the gang API's
schema is 1.37's, as tests/lws)."""

from __future__ import annotations

import copy
import pathlib
from collections import Counter

import kubernetes_validate
import pytest
import yaml
from conftest import validate_manifest

from pulumi_lws.cli import main
from pulumi_lws.lws import labels as L

ROOT = pathlib.Path(__file__).resolve().parents[2]
PD = yaml.safe_load((ROOT / "examples" / "disaggregated-pd" / "ds.yaml").read_text())


def gang_file(tmp_path) -> pathlib.Path:
    doc = copy.deepcopy(PD)
    for role in doc["spec"]["roles"]:
        role["spec"]["scheduling"] = {}
    path = tmp_path / "ds.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def render(capsys, *argv: str) -> list[dict]:
    assert main(["render", *argv]) == 0
    objs = [d for d in yaml.safe_load_all(capsys.readouterr().out) if d is not None]
    for o in objs:
        if o["apiVersion"].startswith("scheduling.k8s.io/") or "schedulingGroup" in str(o):
            kubernetes_validate.validate(o, "1.37", strict=True)
        else:
            validate_manifest(o)
    return objs


@pytest.mark.parametrize("stage", ["first", "steady"])
def test_volcano_pod_groups_per_child_group(capsys, tmp_path, stage):
    objs = render(capsys, str(gang_file(tmp_path)), "--stage", stage, "--gang-provider", "volcano")
    groups = [o for o in objs if o["kind"] == "PodGroup"]
    assert {o["apiVersion"] for o in groups} == {"scheduling.volcano.sh/v1beta1"}
    roles = Counter(g["metadata"]["labels"][L.NAME].rsplit("-", 1)[1] for g in groups)  # <ds>-<s>-<rev>-<role>
    assert roles == {"prefill": 6, "decode": 2}
    assert not [o for o in objs if o["kind"] == "Workload"]


def test_kubernetes_is_the_default(capsys, tmp_path):
    objs = render(capsys, str(gang_file(tmp_path)))
    assert {o["apiVersion"] for o in objs if o["kind"] == "PodGroup"} == {"scheduling.k8s.io/v1beta1"}
    assert sorted(o["metadata"]["labels"][L.NAME].rsplit("-", 1)[1] for o in objs if o["kind"] == "Workload") == [
        "decode",
        "prefill",
    ]
