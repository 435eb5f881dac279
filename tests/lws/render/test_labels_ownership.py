"""The user's labels are kept: ``app.kubernetes.io/managed-by: kustomize`` (upstream's TPU sample)
stays on every object that carries the LWS's labels and on every pod template whose template sets
it; pulumi-lws marks what it owns with its own label ``pulumi-lws.io/managed: "true"`` on every
object, and sets ``managed-by: pulumi-lws`` only where the user's labels name no manager.
"""

from __future__ import annotations

import copy

import pytest
from conftest import TESTS_DIR, validate_manifest

from pulumi_lws.core.contract.snapshot import EMPTY
from pulumi_lws.core.k8s.manifests import metadata, owned_labels
from pulumi_lws.core.k8s.yamlio import load_documents
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api import LeaderWorkerSet
from pulumi_lws.lws.reconcile import reconcile

TPU = TESTS_DIR / "manifests_upstream" / "config_samples_leaderworkerset_tpu.yaml"
WORKLOADS = ("StatefulSet", "Deployment")


def tpu_sample(**spec) -> dict:
    (doc,) = load_documents(TPU.read_text())
    doc = copy.deepcopy(doc)
    doc["spec"].update(spec)
    return doc


def objects(manifest: dict) -> list[dict]:
    return list(reconcile(LeaderWorkerSet.from_manifest(manifest), EMPTY).manifests)


def pod_templates(objs: list[dict]) -> list[dict]:
    return [o["spec"]["template"] for o in objs if o["kind"] in WORKLOADS]


@pytest.mark.parametrize("identity", ["Ordinal", "Hash"])
def test_kustomize_managed_by_stays_on_every_workload(identity: str) -> None:
    objs = objects(tpu_sample(groupIdentity=identity))
    workloads = [o for o in objs if o["kind"] in WORKLOADS]
    assert workloads
    for o in workloads:
        labels = o["metadata"]["labels"]
        assert labels[L.MANAGED_BY] == "kustomize", o["metadata"]["name"]
        assert labels["app.kubernetes.io/part-of"] == "lws" and labels[L.OWNERSHIP] == "true"
    for o in objs:
        validate_manifest(o)


def test_every_object_carries_the_ownership_label() -> None:
    for o in objects(tpu_sample()):
        labels = o["metadata"]["labels"]
        assert labels[L.OWNERSHIP] == "true"
        assert labels[L.MANAGED_BY] in ("kustomize", "pulumi-lws")  # pulumi-lws where no user labels apply


def test_objects_without_user_labels_say_pulumi_lws() -> None:
    objs = objects(tpu_sample())
    others = [o for o in objs if o["kind"] not in WORKLOADS]
    assert {o["kind"] for o in others} >= {"Service", "ControllerRevision"}
    assert all(o["metadata"]["labels"][L.MANAGED_BY] == "pulumi-lws" for o in others)


@pytest.mark.parametrize("identity", ["Ordinal", "Hash"])
def test_kustomize_managed_by_stays_on_pod_templates(identity: str) -> None:
    doc = tpu_sample(groupIdentity=identity)
    lwt = doc["spec"]["leaderWorkerTemplate"]
    lwt["workerTemplate"]["metadata"] = {"labels": {L.MANAGED_BY: "kustomize"}}
    lwt["leaderTemplate"] = copy.deepcopy(lwt["workerTemplate"])
    templates = pod_templates(objects(doc))
    assert len(templates) >= (2 if identity == "Ordinal" else 1)  # Hash workers follow the leader pods
    for t in templates:
        assert t["metadata"]["labels"][L.MANAGED_BY] == "kustomize"
        assert L.OWNERSHIP not in t["metadata"]["labels"]  # pod templates are the user's: no extra label


def test_pod_templates_get_no_managed_by_of_their_own() -> None:
    for t in pod_templates(objects(tpu_sample())):
        assert L.MANAGED_BY not in t["metadata"]["labels"] and L.OWNERSHIP not in t["metadata"]["labels"]


def test_gang_objects_are_owned_too() -> None:
    objs = objects(tpu_sample(scheduling={}))
    gang = [o for o in objs if o["kind"] in ("Workload", "PodGroup")]
    assert gang and all(o["metadata"]["labels"][L.OWNERSHIP] == "true" for o in gang)


def test_owned_labels() -> None:
    assert owned_labels({"a": "b"}) == {"a": "b", L.MANAGED_BY: "pulumi-lws", L.OWNERSHIP: "true"}
    assert owned_labels({L.MANAGED_BY: "helm"}) == {L.MANAGED_BY: "helm", L.OWNERSHIP: "true"}
    assert owned_labels({L.OWNERSHIP: "false"})[L.OWNERSHIP] == "true"  # the mark is not the user's to change
    assert metadata("x", "ns", {})["labels"] == {L.MANAGED_BY: "pulumi-lws", L.OWNERSHIP: "true"}
