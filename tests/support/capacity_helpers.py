"""GPU fleets of every API for the capacity-check tests (issue 24 item 5): each old fleet fills its
nodes but one, so the update's surge group (16 nvidia.com/gpu) does not fit the 8 GPUs left."""

from __future__ import annotations

import copy
from typing import Any

from pulumi_lws.core.features.control import CHECK_CAPACITY_ANNOTATION

GPU = "nvidia.com/gpu"


def container(image: str) -> dict[str, Any]:
    return {"name": "c", "image": image, "resources": {"limits": {GPU: 8}}}


def lws(image: str) -> dict[str, Any]:
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "llm", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "rolloutStrategy": {
                "type": "RollingUpdate",
                "rollingUpdateConfiguration": {"maxUnavailable": 0, "maxSurge": 1},
            },
            "leaderWorkerTemplate": {"size": 2, "workerTemplate": {"spec": {"containers": [container(image)]}}},
        },
    }


def modelserving(image: str) -> dict[str, Any]:
    role = {
        "name": "prefill",
        "replicas": 1,
        "workerReplicas": 1,
        "entryTemplate": {"spec": {"containers": [container(image)]}},
        "workerTemplate": {"spec": {"containers": [container(image)]}},
    }
    return {
        "apiVersion": "workload.serving.volcano.sh/v1alpha1",
        "kind": "ModelServing",
        "metadata": {"name": "ms", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "schedulerName": "default-scheduler",
            "rolloutStrategy": {
                "type": "ServingGroupRollingUpdate",
                "rollingUpdateConfiguration": {"maxUnavailable": 0, "maxSurge": 1},
            },
            "template": {"roles": [role]},
        },
    }


def ds(image: str) -> dict[str, Any]:
    def role(name: str, replicas: int) -> dict[str, Any]:
        return {
            "name": name,
            "spec": {
                "replicas": replicas,
                "rolloutStrategy": {
                    "type": "RollingUpdate",
                    "rollingUpdateConfiguration": {"maxSurge": 1, "maxUnavailable": 0},
                },
                "leaderWorkerTemplate": {"size": 2, "workerTemplate": {"spec": {"containers": [container(image)]}}},
            },
        }

    return {
        "apiVersion": "disaggregatedset.x-k8s.io/v1",
        "kind": "DisaggregatedSet",
        "metadata": {"name": "pd", "namespace": "default"},
        "spec": {"roles": [role("prefill", 1), role("decode", 1)]},
    }


ONE = f"the surge group needs 16 {GPU}; 8 are free on nodes matching its selector"
#: api -> (manifest builder, nodes the old fleet fills, the field path the remedy names, the blocker)
CASES = {
    "LeaderWorkerSet": (
        lws,
        4,
        "set spec.rolloutStrategy.rollingUpdateConfiguration.maxUnavailable ≥ 1 and maxSurge 0",
        ONE,
    ),
    "ModelServing": (modelserving, 4, "set spec.rolloutStrategy.rollingUpdateConfiguration.maxUnavailable ≥ 1", ONE),
    # both roles surge in lockstep: two surge groups of 16 GPUs each
    "DisaggregatedSet": (
        ds,
        4,
        "set spec.roles[0].spec.rolloutStrategy.rollingUpdateConfiguration.maxUnavailable ≥ 1",
        f"the 2 surge groups need 32 {GPU}; 8 are free on nodes matching their selector",
    ),
}


def scenario(api: str, *, check: bool | None = True, annotate: bool = False, add_at: float = 60) -> dict[str, Any]:
    build, filled, _, _ = CASES[api]
    old, new = build("img:1"), build("img:2")
    if annotate:
        for m in (old, new):
            m["metadata"]["annotations"] = {CHECK_CAPACITY_ANNOTATION: "true"}
    reconcile: dict[str, Any] = {"interval": 10}
    if check is not None:
        reconcile["checkCapacity"] = check
    return {
        "name": f"capacity-{api}",
        "start": "converged",
        "manifest": old,
        "updates": [{"at": 0, "manifest": copy.deepcopy(new)}],
        # one node more than the old fleet fills: 8 GPUs free, a surge group needs 16
        "nodes": [{"name": "gpu", "count": filled + 1, "capacity": {"cpu": 64, "memory": "512Gi", GPU: 8}}],
        "events": [{"at": add_at, "addNodes": 3, "gpusPerNode": 8}],
        "reconcile": reconcile,
        "stop": {"maxTime": 900},
    }
