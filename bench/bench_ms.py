"""ModelServing figures: a fleet of ServingGroups x 2 roles (prefill, decode: an entry pod and a
worker each) and a mid-rollout snapshot of it, built like bench_fixtures does for LWS — from the
objects the renderer declares, with the pods their StatefulSets run, Running and Ready.

Mid-rollout: an image change half done (ServingGroupRollingUpdate, maxUnavailable 10%): the
upper half of the ordinals runs the new revision, the lower half the old one; both
ControllerRevisions exist.
"""

from __future__ import annotations

import copy
from typing import Any

from bench_api_calls import CountingClient

from pulumi_lws.core.contract.snapshot import EMPTY, Snapshot
from pulumi_lws.workloads import workload_for

MS = workload_for("ModelServing")


def fleet_manifest(groups: int, image: str = "vllm/vllm-openai:v2") -> dict[str, Any]:
    def role(name: str) -> dict[str, Any]:
        pod = {
            "spec": {"containers": [{"name": "vllm", "image": image, "resources": {"limits": {"nvidia.com/gpu": "8"}}}]}
        }
        return {
            "name": name,
            "replicas": 1,
            "workerReplicas": 1,
            "entryTemplate": pod,
            "workerTemplate": copy.deepcopy(pod),
        }

    return {
        "apiVersion": MS.api_version,
        "kind": "ModelServing",
        "metadata": {"name": "fleet", "namespace": "bench"},
        "spec": {
            "replicas": groups,
            "schedulerName": "volcano",
            "rolloutStrategy": {
                "type": "ServingGroupRollingUpdate",
                "rollingUpdateConfiguration": {"maxUnavailable": "10%"},
            },
            "template": {"roles": [role("prefill"), role("decode")]},
        },
    }


def fleet_ms(groups: int, image: str = "vllm/vllm-openai:v2") -> Any:
    return MS.parse(fleet_manifest(groups, image))


def _pods(sts: dict[str, Any]) -> list[dict[str, Any]]:
    template = sts["spec"]["template"]
    start = (sts["spec"].get("ordinals") or {}).get("start", 0)
    name = sts["metadata"]["name"]
    return [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"{name}-{i}",
                "namespace": "bench",
                "uid": f"uid-{name}-{i}",
                "labels": dict(template["metadata"]["labels"]),
            },
            "spec": {},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
        }
        for i in range(start, start + sts["spec"]["replicas"])
    ]


def _group_of(obj: dict[str, Any]) -> int | None:
    from pulumi_lws.modelserving import labels as L

    name = ((obj.get("metadata") or {}).get("labels") or {}).get(L.GROUP_NAME)
    return int(name.rsplit("-", 1)[1]) if name else None


def mid_rollout_snapshot(groups: int) -> Snapshot:
    """Upper half of the ordinals on the new revision, lower half on the old one, all ready."""
    old = MS.reconcile(fleet_ms(groups, "vllm/vllm-openai:v1"), EMPTY).manifests
    new = MS.reconcile(fleet_ms(groups), EMPTY).manifests
    half = groups // 2
    objs: list[dict[str, Any]] = []
    for source, keep in ((old, lambda g: g is None or g < half), (new, lambda g: g is None or g >= half)):
        for m in source:
            m = copy.deepcopy(dict(m))
            if m["kind"] == "ControllerRevision" or keep(_group_of(m)):
                objs.append(m)
                if m["kind"] == "StatefulSet":
                    objs += _pods(m)
    seen, unique = set(), []
    for o in objs:  # a ControllerRevision or a shared object declared by both sides: once
        key = (o["kind"], o["metadata"]["name"])
        if key not in seen:
            seen.add(key)
            unique.append(o)
    return Snapshot.of(unique)


def count_calls(groups: int = 50) -> int:
    """LIST calls of one ModelServing reconcile against a mid-rollout fleet of ``groups``."""
    from pulumi_lws.cluster.live import LiveCluster

    spec = fleet_ms(groups)
    snap = mid_rollout_snapshot(groups)
    client = CountingClient(list(snap))
    observed = LiveCluster(client, gang_provider="volcano").observe(MS.scope(spec))
    assert len(observed.list("Pod")) == groups * 4, "the counting client must serve every pod"
    assert len(observed.list("PodGroup")) == groups
    MS.reconcile(spec, observed)
    return client.calls
