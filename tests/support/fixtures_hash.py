"""Builders for hand-made Hash-mode snapshots (Kubernetes-shaped dicts), shared by test_hash_*.

Imported as ``from fixtures_hash import ...`` (pytest puts tests/ on sys.path).
"""

from __future__ import annotations

from typing import Any

from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.render.common import controller_revision
from pulumi_lws.lws.revision import build_catalog
from pulumi_lws.lws.rollout.hash.admission import derive_group_key

NS = "ns"
NAME = "web"


def make_lws(
    *,
    replicas: int = 2,
    size: int = 3,
    image: str = "v1",
    mu: Any = 1,
    ms: Any = 1,
    policy: str = "PostTermination",
    startup: str = "LeaderCreated",
    annotations: dict | None = None,
) -> LeaderWorkerSet:
    return LeaderWorkerSet.from_manifest(
        {
            "apiVersion": "leaderworkerset.x-k8s.io/v1",
            "kind": "LeaderWorkerSet",
            "metadata": {"name": NAME, "namespace": NS, "annotations": annotations or {}},
            "spec": {
                "replicas": replicas,
                "groupIdentity": "Hash",
                "groupReplacementPolicy": policy,
                "startupPolicy": startup,
                "rolloutStrategy": {"rollingUpdateConfiguration": {"maxUnavailable": mu, "maxSurge": ms}},
                "leaderWorkerTemplate": {
                    "size": size,
                    "workerTemplate": {"spec": {"containers": [{"name": "c", "image": image}]}},
                },
            },
        }
    )


def rev(lws: LeaderWorkerSet) -> str:
    return build_catalog(lws, []).target.key


def cr(lws: LeaderWorkerSet, number: int = 1) -> dict:
    """The ControllerRevision storing ``lws``'s revision, as the renderer would have created it."""
    target = build_catalog(lws, []).target
    from pulumi_lws.lws.revision import Revision

    return controller_revision(NAME, NS, Revision(target.key, number, target.data))


def ts(t: int) -> str:
    return f"2026-01-01T00:{t // 60:02d}:{t % 60:02d}Z"


def leader(
    name: str,
    revision: str,
    *,
    created: int = 0,
    gated: bool = True,
    deleting: bool = False,
    ready: bool = False,
    containers_ready: bool | None = None,
    labelled: bool = True,
    group_ready: str | None = None,
    exhausted: bool = False,
    phase: str | None = None,
    node: str | None = None,
    annotations: dict | None = None,
) -> dict:
    """A Deployment leader pod. ``labelled``: carries group-key/group-index already."""
    uid = f"uid-{name}"
    labels = {
        L.NAME: NAME,
        L.WORKER_INDEX: "0",
        L.TEMPLATE_REVISION_HASH: revision,
        L.POD_TEMPLATE_HASH: "rs" + revision[:4],
    }
    key = derive_group_key(NS, {"metadata": {"uid": uid}})
    if labelled:
        labels.update({L.GROUP_KEY: key, L.GROUP_INDEX: key})
    ann = dict(annotations or {})
    if exhausted:
        ann[L.RESTART_BUDGET_EXHAUSTED] = "true"
    meta: dict[str, Any] = {
        "name": name,
        "namespace": NS,
        "uid": uid,
        "labels": labels,
        "annotations": ann,
        "creationTimestamp": ts(created),
        "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-rs", "uid": "rs", "controller": True}
        ],
    }
    if deleting:
        meta["deletionTimestamp"] = ts(created + 1)
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x"}]}
    if gated:
        spec["schedulingGates"] = [{"name": L.GROUP_REPLACEMENT_GATE}]
    if node:
        spec["nodeName"] = node
    conds = []
    running = not gated and (phase or "Running") == "Running"
    if gated:
        conds.append({"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"})
    cr_ready = ready if containers_ready is None else containers_ready
    if running:
        conds.append({"type": "ContainersReady", "status": "True" if cr_ready else "False"})
        conds.append({"type": "Ready", "status": "True" if ready else "False"})
    if group_ready is not None:
        conds.append({"type": L.GROUP_READY_CONDITION, "status": group_ready})
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": spec,
        "status": {"phase": phase or ("Running" if running else "Pending"), "conditions": conds},
    }


def key_of(pod: dict) -> str:
    return derive_group_key(NS, pod)


def worker(leader_pod: dict, j: int, *, deleting: bool = False, revision: str | None = None) -> dict:
    key = key_of(leader_pod)
    meta: dict[str, Any] = {
        "name": f"{NAME}-{key[:8]}-{j}",
        "namespace": NS,
        "uid": f"uid-w-{key[:8]}-{j}",
        "labels": {
            L.NAME: NAME,
            L.GROUP_INDEX: key,
            L.GROUP_KEY: key,
            L.TEMPLATE_REVISION_HASH: revision or leader_pod["metadata"]["labels"][L.TEMPLATE_REVISION_HASH],
        },
        "creationTimestamp": ts(1),
    }
    if deleting:
        meta["deletionTimestamp"] = ts(2)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"containers": [{"name": "c", "image": "x"}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }


def worker_sts(leader_pod: dict, *, size: int = 3, ready: bool = True) -> dict:
    key = key_of(leader_pod)
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {
            "name": f"{NAME}-{key[:8]}",
            "namespace": NS,
            "labels": {
                L.NAME: NAME,
                L.GROUP_KEY: key,
                L.GROUP_INDEX: key,
                L.TEMPLATE_REVISION_HASH: leader_pod["metadata"]["labels"][L.TEMPLATE_REVISION_HASH],
            },
        },
        "spec": {"replicas": size - 1},
        "status": {"availableReplicas": size - 1 if ready else 0, "currentRevision": "a", "updateRevision": "a"},
    }


def deployment(revision: str, *, replicas: int, ready: int, updated: int) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": NAME,
            "namespace": NS,
            "generation": 2,
            "labels": {L.NAME: NAME, L.TEMPLATE_REVISION_HASH: revision},
        },
        "status": {"observedGeneration": 2, "replicas": replicas, "readyReplicas": ready, "updatedReplicas": updated},
    }


def snap(*objs: dict) -> Snapshot:
    return Snapshot.of(list(objs), now=100.0)


def test_fixture_keys_are_stable():
    p = leader("web-a", "r1")
    assert key_of(p) == p["metadata"]["labels"][L.GROUP_KEY] and len(key_of(p)) == 40
