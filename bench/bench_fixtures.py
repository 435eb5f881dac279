"""Synthetic fleets for benchmarks: a large LWS and a mid-rollout snapshot of it."""
from __future__ import annotations

from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api import LeaderWorkerSet
from pulumi_lws.core.snapshot import Snapshot
from pulumi_lws.lws.revision import revision_data, revision_key


def fleet_lws(groups: int, image: str = "vllm/vllm-openai:v2", size: int = 4) -> LeaderWorkerSet:
    return LeaderWorkerSet.parse({
        "metadata": {"name": "fleet", "namespace": "bench"},
        "spec": {
            "replicas": groups,
            "rolloutStrategy": {"rollingUpdateConfiguration": {"maxUnavailable": "10%", "maxSurge": "5%"}},
            "leaderWorkerTemplate": {"size": size, "workerTemplate": {"spec": {"containers": [
                {"name": "vllm", "image": image, "resources": {"limits": {"nvidia.com/gpu": "8"}}}]}}},
        },
    })


def _pod(name: str, key: str, ready: bool, index: int) -> dict:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "bench", "uid": f"uid-{name}",
                     "labels": {L.NAME: "fleet", L.WORKER_INDEX: "0", L.TEMPLATE_REVISION_HASH: key, L.POD_INDEX: str(index)}},
        "spec": {},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


def _worker_sts(name: str, key: str, size: int, ready: bool) -> dict:
    return {
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": "bench", "labels": {L.NAME: "fleet", L.TEMPLATE_REVISION_HASH: key}},
        "spec": {"replicas": size - 1},
        "status": {"availableReplicas": size - 1 if ready else 0, "currentRevision": "a", "updateRevision": "a"},
    }


def mid_rollout_snapshot(lws: LeaderWorkerSet) -> Snapshot:
    """A rollout from an old image to ``lws``'s spec, half done: upper half updated and ready."""
    old = lws.model_copy(deep=True)
    old.spec.leader_worker_template.worker_template["spec"]["containers"][0]["image"] = "vllm/vllm-openai:v1"
    old_key, new_key = revision_key(old), revision_key(lws)
    r = lws.replicas
    partition = r // 2
    objs = [
        {"apiVersion": "apps/v1", "kind": "StatefulSet",
         "metadata": {"name": "fleet", "namespace": "bench", "labels": {L.NAME: "fleet", L.TEMPLATE_REVISION_HASH: new_key},
                      "annotations": {L.REPLICAS: str(r)}},
         "spec": {"replicas": r, "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": partition}}},
         "status": {}},
        {"apiVersion": "apps/v1", "kind": "ControllerRevision", "revision": 1, "data": revision_data(old),
         "metadata": {"name": f"fleet-{old_key}-1", "namespace": "bench", "labels": {L.NAME: "fleet", L.TEMPLATE_REVISION_HASH: old_key}}},
        {"apiVersion": "apps/v1", "kind": "ControllerRevision", "revision": 2, "data": revision_data(lws),
         "metadata": {"name": f"fleet-{new_key}-2", "namespace": "bench", "labels": {L.NAME: "fleet", L.TEMPLATE_REVISION_HASH: new_key}}},
    ]
    for i in range(r):
        key = new_key if i >= partition else old_key
        objs.append(_pod(f"fleet-{i}", key, True, i))
        objs.append(_worker_sts(f"fleet-{i}", key, lws.size, True))
    return Snapshot.of(objs)
