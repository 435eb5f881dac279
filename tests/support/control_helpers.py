"""Rollout-control test helpers shared by the pause / deadline / rollback tests of the three APIs.

``lws_harness`` is the LeaderWorkerSet counterpart of ``ms_helpers.Harness``/``ds_helpers.Harness``
with bounds read through ``Workload.trace_view`` (the simulator runner's own invariant reading):
live groups <= replicas + maxSurge, available >= replicas - maxUnavailable once fully available.
``pods`` / ``registered`` read what the cluster shows, to prove that nothing moved.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pulumi_lws.core.features.control import PAUSED_ANNOTATION
from pulumi_lws.core.features.hold import ours
from pulumi_lws.lws.workload import WORKLOAD as LWS_WORKLOAD
from pulumi_lws.sim.cluster.kubelet import KubeletConfig, Override, Timing
from pulumi_lws.sim.cluster.simcluster import SimCluster
from support.harness import WorkloadHarness


def with_annotation(manifest: Mapping[str, Any], key: str, value: str | None) -> dict[str, Any]:
    out = copy.deepcopy(dict(manifest))
    ann = dict(out.setdefault("metadata", {}).get("annotations") or {})
    if value is None:
        ann.pop(key, None)
    else:
        ann[key] = value
    out["metadata"]["annotations"] = ann
    return out


def paused(manifest: Mapping[str, Any], on: bool = True) -> dict[str, Any]:
    return with_annotation(manifest, PAUSED_ANNOTATION, "true" if on else None)


def pods(cluster: SimCluster) -> dict[str, tuple[str, str]]:
    """Live pods: name -> (uid, pod-template image) — a moved group changes one of them."""
    out = {}
    for p in cluster.list("Pod"):
        if p["metadata"].get("deletionTimestamp"):
            continue
        image = p["spec"]["containers"][0]["image"]
        out[p["metadata"]["name"]] = (p["metadata"]["uid"], image)
    return out


def registered(cluster: SimCluster) -> dict[tuple[str, str], Any]:
    """Every object of ours by (kind, name) with its spec (what ``pulumi up`` declares)."""
    out = {}
    for obj in cluster.store.all():
        if ours(obj):
            out[(obj["kind"], obj["metadata"]["name"])] = copy.deepcopy(obj.get("spec") or obj.get("data"))
    return out


@dataclass
class TraceBounds:
    """The runner's invariants through ``Workload.trace_view`` at every tick."""

    harness: Any
    violations: list[str] = field(default_factory=list)
    armed: bool = False
    max_live: int = 0
    min_available: int = 10**9

    def __call__(self, cluster: SimCluster, t: float) -> None:
        h = self.harness
        spec = h.spec
        budgets = h.WORKLOAD.budgets(spec)[""]
        view = h.WORKLOAD.trace_view(spec, h.snapshot())
        self.max_live = max(self.max_live, view.live)
        if view.live > budgets.replicas + budgets.max_surge:
            self.violations.append(f"t={t:g}: live {view.live} > {budgets.replicas} + {budgets.max_surge}")
        if self.armed:
            self.min_available = min(self.min_available, view.available)
            if view.available < budgets.replicas - budgets.max_unavailable:
                self.violations.append(
                    f"t={t:g}: available {view.available} < {budgets.replicas} - {budgets.max_unavailable}"
                )
        if view.available >= budgets.replicas:
            self.armed = True

    def disarm(self) -> None:
        self.armed = False


@dataclass
class LwsHarness(WorkloadHarness):
    WORKLOAD = LWS_WORKLOAD
    STACK = "default/ctl"

    def converged(self) -> bool:
        stage = self.last.stage if self.last else None
        if stage is None or not stage.complete or stage.blocker is not None:
            return False
        view = self.WORKLOAD.trace_view(self.spec, self.snapshot())
        return view.available == self.spec.replicas and all(c.state == "U" for c in view.cells if c.state != "-")


def lws_manifest(
    replicas: int = 4, image: str = "img:1", *, mu: int = 1, surge: int = 1, size: int = 2
) -> dict[str, Any]:
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "ctl", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "rolloutStrategy": {"rollingUpdateConfiguration": {"maxUnavailable": mu, "maxSurge": surge}},
            "leaderWorkerTemplate": {
                "size": size,
                "workerTemplate": {"spec": {"containers": [{"name": "c", "image": image}]}},
            },
        },
    }


def lws_harness(
    manifest: Mapping[str, Any], *, seed: int = 0, ready: float = 2.0, overrides: list[Override] | None = None
) -> LwsHarness:
    cluster = SimCluster(seed=seed, kubelet=KubeletConfig(default=Timing(1.0, ready), overrides=overrides or []))
    h = LwsHarness(cluster, copy.deepcopy(dict(manifest)))
    h.bounds = TraceBounds(h)
    h.warm_up()
    h.check()
    return h
