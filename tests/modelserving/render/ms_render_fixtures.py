"""Literal ModelServing specs shared by the render, revision and observe tests."""

from __future__ import annotations

import copy
from typing import Any

from pulumi_lws.modelserving.api import ModelServing


def container(name: str, image: str, cpu: str, memory: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "image": image, "resources": {"requests": {"cpu": cpu, "memory": memory}}, **extra}


def two_role_wire(image: str = "vllm:1") -> dict[str, Any]:
    """prefill: 2 replicas x (entry + 2 workers); decode: 1 replica, entry only (no workerTemplate)."""
    return {
        "apiVersion": "workload.serving.volcano.sh/v1alpha1",
        "kind": "ModelServing",
        "metadata": {"name": "llm", "namespace": "serving", "annotations": {"scheduling.volcano.sh/queue-name": "q1"}},
        "spec": {
            "replicas": 2,
            "template": {
                "gangPolicy": {"minRoleReplicas": {"prefill": 1}},
                "networkTopology": {
                    "groupPolicy": {"mode": "hard", "highestTierAllowed": 2},
                    "rolePolicy": {"mode": "soft"},
                },
                "roles": [
                    {
                        "name": "prefill",
                        "replicas": 2,
                        "workerReplicas": 2,
                        "entryTemplate": {
                            "metadata": {"labels": {"app": "p"}},
                            "spec": {
                                "initContainers": [container("init", "busybox", "100m", "64Mi")],
                                "containers": [
                                    container(
                                        "main",
                                        image,
                                        "500m",
                                        "1Gi",
                                        env=[{"name": "GROUP_SIZE", "value": "99"}, {"name": "MODEL", "value": "m"}],
                                    )
                                ],
                                "schedulerName": "default-scheduler",
                            },
                        },
                        "workerTemplate": {"spec": {"containers": [container("w", image, "1", "512Mi")]}},
                    },
                    {
                        "name": "decode",
                        "replicas": 1,
                        "workerReplicas": 0,
                        "entryTemplate": {"spec": {"containers": [container("main", image, "2", "2Gi")]}},
                    },
                ],
            },
        },
    }


def two_role(image: str = "vllm:1", **spec: Any) -> ModelServing:
    wire = two_role_wire(image)
    wire["spec"].update(spec)
    return ModelServing.from_manifest(wire)


def with_role(ms_wire: dict[str, Any], role: str, **fields: Any) -> dict[str, Any]:
    out = copy.deepcopy(ms_wire)
    for r in out["spec"]["template"]["roles"]:
        if r["name"] == role:
            r.update(fields)
    return out
