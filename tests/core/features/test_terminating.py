"""No API declares again, in the same reconcile, an object the snapshot shows terminating
(:mod:`pulumi_lws.core.features.terminating`): a same-name apply would land on the terminating
object (pulumi-kubernetes' server-side-apply create is a PATCH), which then disappears while the
stack's state says it exists."""

from __future__ import annotations

import copy
import pathlib

import pytest
import yaml

from pulumi_lws.core.contract.dependencies import check_dependency_order
from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.core.contract.stage import Stage
from pulumi_lws.core.contract.workload import Reconciled
from pulumi_lws.core.features.terminating import without_terminating
from pulumi_lws.workloads import workload_for

EXAMPLES = pathlib.Path(__file__).resolve().parents[3] / "examples"


def _obj(kind: str, name: str, deleting: bool = False) -> dict:
    meta: dict = {"name": name, "namespace": "default"}
    if deleting:
        meta["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    return {"apiVersion": "v1", "kind": kind, "metadata": meta}


def test_a_terminating_object_is_left_out_with_the_edges_to_it():
    manifests = (_obj("Service", "s"), _obj("StatefulSet", "a"), _obj("StatefulSet", "a-0"), _obj("StatefulSet", "b"))
    deps = {
        ("StatefulSet", "a"): (("Service", "s"),),
        ("StatefulSet", "a-0"): (("Service", "s"), ("StatefulSet", "a")),
        ("StatefulSet", "b"): (("StatefulSet", "a"),),
    }
    result = Reconciled(
        Stage(policy="t", target_revision="r", replicas=1, partition=0, group_revisions={}), manifests, None, deps
    )
    snapshot = Snapshot.of([_obj("Service", "s"), _obj("StatefulSet", "a", deleting=True), _obj("StatefulSet", "b")])
    out = without_terminating(result, snapshot)
    assert [m["metadata"]["name"] for m in out.manifests] == ["s", "a-0", "b"]
    assert out.dependencies == {("StatefulSet", "a-0"): (("Service", "s"),)}
    assert out.stage.notes == ("not declared while terminating (declared again once gone): StatefulSet a",)
    assert without_terminating(out, snapshot) is out  # nothing terminating is declared any more
    calm = Snapshot.of([_obj("StatefulSet", "a")])
    assert without_terminating(result, calm) is result and without_terminating(result, Snapshot()) is result


def _example(path: str) -> dict:
    return yaml.safe_load((EXAMPLES / path).read_text())


HASH = {
    "apiVersion": "leaderworkerset.x-k8s.io/v1",
    "kind": "LeaderWorkerSet",
    "metadata": {"name": "h", "namespace": "default"},
    "spec": {
        "replicas": 2,
        "groupIdentity": "Hash",
        "leaderWorkerTemplate": {"size": 2, "workerTemplate": {"spec": {"containers": [{"name": "c", "image": "i"}]}}},
    },
}

#: API -> (its manifest, the StatefulSet the second reconcile finds terminating)
CASES = {
    "LeaderWorkerSet worker": (lambda: _example("quickstart/lws.yaml"), "leaderworkerset-sample-1"),
    "LeaderWorkerSet leader": (lambda: _example("quickstart/lws.yaml"), "leaderworkerset-sample"),
    "ModelServing": (lambda: _example("modelserving-pd/ms.yaml"), None),
    "DisaggregatedSet": (lambda: _example("disaggregated-pd/ds.yaml"), None),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_no_api_declares_a_terminating_statefulset_again(case):
    make, name = CASES[case]
    doc = make()
    workload = workload_for(doc["kind"])
    spec = workload.parse(doc)
    first = workload.reconcile(spec, Snapshot(), workload.options())
    statefulsets = [m["metadata"]["name"] for m in first.manifests if m["kind"] == "StatefulSet"]
    name = name or statefulsets[-1]
    assert name in statefulsets
    cluster = [copy.deepcopy(dict(m)) for m in first.manifests]
    for obj in cluster:
        if obj["kind"] == "StatefulSet" and obj["metadata"]["name"] == name:
            obj["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    again = workload.reconcile(spec, Snapshot.of(cluster), workload.options())
    declared = [(m["kind"], m["metadata"]["name"]) for m in again.manifests]
    assert ("StatefulSet", name) not in declared
    assert [s for s in statefulsets if s != name] == [n for k, n in declared if k == "StatefulSet"]
    assert any(f"StatefulSet {name}" in note for note in again.stage.notes)
    check_dependency_order(again.manifests, again.dependencies)  # no edge names what was left out
    assert all(("StatefulSet", name) not in deps for deps in again.dependencies.values())
