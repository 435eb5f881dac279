"""Hand-written manifests for simulator tests (no planner or renderer involved)."""

from __future__ import annotations

from typing import Any

from pulumi_lws.sim.cluster.kubelet import KubeletConfig, Timing
from pulumi_lws.sim.cluster.simcluster import SimCluster


def sts(
    name: str = "web",
    image: str = "a",
    replicas: int = 4,
    *,
    partition: int = 0,
    max_unavailable: Any = None,
    policy: str = "Parallel",
    strategy: str = "RollingUpdate",
    start: int | None = None,
    **extra: Any,
) -> dict:
    ru: dict[str, Any] = {"partition": partition}
    if max_unavailable is not None:
        ru["maxUnavailable"] = max_unavailable
    spec: dict[str, Any] = {
        "replicas": replicas,
        "serviceName": name,
        "podManagementPolicy": policy,
        "selector": {"matchLabels": {"app": name}},
        "updateStrategy": {"type": strategy, **({"rollingUpdate": ru} if strategy == "RollingUpdate" else {})},
        "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "c", "image": image}]}},
    }
    if start is not None:
        spec["ordinals"] = {"start": start}
    spec.update(extra)
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def deployment(
    name: str = "d", image: str = "a", replicas: int = 10, surge: Any = "25%", unavailable: Any = "25%"
) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": image}]},
            },
        },
    }


def pod(name: str, labels: dict | None = None, **spec: Any) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": labels or {}},
        "spec": {"containers": [{"name": "c", "image": "x"}], **spec},
    }


def cluster(start: float = 1, ready: float = 2, grace: float = 1, **kw: Any) -> SimCluster:
    return SimCluster(kubelet=KubeletConfig(default=Timing(start, ready), termination_grace=grace), **kw)


def run_until(c: SimCluster, t: float, step: float = 1.0) -> None:
    now = c.clock.now
    while now < t:
        now = min(t, now + step)
        c.step(now)


def images(c: SimCluster, prefix: str = "web") -> dict[str, str]:
    return {
        p["metadata"]["name"]: p["spec"]["containers"][0]["image"]
        for p in c.list("Pod")
        if p["metadata"]["name"].startswith(prefix) and not p["metadata"].get("deletionTimestamp")
    }


def deleting(c: SimCluster) -> list[str]:
    return sorted(p["metadata"]["name"] for p in c.list("Pod") if p["metadata"].get("deletionTimestamp"))
