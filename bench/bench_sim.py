"""Simulator benchmark: an image-change rollout of N groups (LeaderWorkerSet, ModelServing or
DisaggregatedSet) through the pure engine (reconcile + apply + controllers), timed end to end. ``bench/run.py`` imports :func:`run`; ``python bench/bench_sim.py``
prints the figures. Target: seconds.
"""

from __future__ import annotations

import gc
import sys
import time
from typing import Any


def _lws(groups: int, size: int, image: str) -> dict[str, Any]:
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "bench"},
        "spec": {
            "replicas": groups,
            "rolloutStrategy": {"rollingUpdateConfiguration": {"maxUnavailable": "10%", "maxSurge": "10%"}},
            "leaderWorkerTemplate": {
                "size": size,
                "workerTemplate": {"spec": {"containers": [{"name": "c", "image": image}]}},
            },
        },
    }


def _ms(groups: int, size: int, image: str) -> dict[str, Any]:
    """ServingGroups x 2 roles (an entry pod and ``size - 1`` workers each), 10% at a time."""
    from bench_ms import fleet_manifest

    doc = fleet_manifest(groups, image)
    doc["metadata"] = {"name": "bench"}
    doc["spec"].pop("schedulerName", None)
    for role in doc["spec"]["template"]["roles"]:
        role["workerReplicas"] = size - 1
    return doc


def _ds(groups: int, size: int, image: str) -> dict[str, Any]:
    """Two roles (3:1, like the example) of ``groups`` groups in all, each group a leader and workers."""
    from bench_ds import fleet_manifest

    doc = fleet_manifest(2, 1, image)
    doc["metadata"] = {"name": "bench"}
    for role, n in zip(doc["spec"]["roles"], (groups - groups // 4, groups // 4)):
        role["spec"]["replicas"] = n
        role["spec"]["leaderWorkerTemplate"]["size"] = size
        role["spec"]["rolloutStrategy"] = {"rollingUpdateConfiguration": {"maxUnavailable": "10%", "maxSurge": "10%"}}
    return doc


MANIFESTS = {"LeaderWorkerSet": _lws, "ModelServing": _ms, "DisaggregatedSet": _ds}


def scenario_doc(groups: int = 100, size: int = 2, history: str = "internal", kind: str = "LeaderWorkerSet") -> dict:
    """The scenario file of :func:`scenario`, as a dict (tests add faults to it)."""
    make = MANIFESTS[kind]
    return {
        "name": f"bench-{kind}-{groups}x{size}",
        "seed": 7,
        "engine": "pure",
        "start": "converged",
        "manifest": make(groups, size, "img:1"),
        "updates": [{"at": 0, "manifest": make(groups, size, "img:2")}],
        "reconcile": {"interval": 5, "tick": 5},
        "kubelet": {"startSeconds": 1, "readySeconds": 3, "terminationGracePeriodSeconds": 0},
        "cluster": {"statefulSetRevisions": history},
        "stop": {"maxTime": 3600},
    }


def scenario(groups: int = 100, size: int = 2, history: str = "internal", kind: str = "LeaderWorkerSet"):
    """An image change on a converged fleet of ``groups`` groups of ``kind``."""
    from pulumi_lws.sim.driver.scenario import load_scenario

    return load_scenario(scenario_doc(groups, size, history, kind))


class _CollectorTime:
    """CPU seconds the cyclic GC spends in full (generation 2) collections, read through
    ``gc.callbacks`` (observation only: the collector's settings are left as they are)."""

    def __init__(self) -> None:
        self.seconds, self.full, self._start = 0.0, 0, 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if info.get("generation") != 2:
            return
        if phase == "start":
            self._start = time.process_time()
        else:
            self.seconds += time.process_time() - self._start
            self.full += 1


def run(groups: int = 100, size: int = 2, kind: str = "LeaderWorkerSet") -> dict[str, Any]:
    """Figures for one rollout: wall seconds, reconciles, simulated seconds, stages, objects,
    and the CPU seconds of the run spent in full GC collections (``gc_full_cpu_seconds``)."""
    from pulumi_lws.sim.driver.runner import simulate

    sc = scenario(groups, size, kind=kind)
    collector = _CollectorTime()
    gc.callbacks.append(collector)
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        result = simulate(sc)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    finally:
        gc.callbacks.remove(collector)
    return {
        "name": "sim_rollout",
        "kind": kind,
        "groups": groups,
        "size": size,
        "wall_seconds": round(wall, 3),
        "cpu_seconds": round(cpu, 3),
        "reconciles": len(result.stages),
        "simulated_seconds": result.end_time,
        "stages": len(result.trace.rows),
        "objects": len(result.cluster.store),
        "converged": result.trace.converged,
        "violations": len(result.trace.violations),
        "ms_per_reconcile": round(1000 * wall / max(1, len(result.stages)), 1),
        "gc_full_collections": collector.full,
        "gc_full_cpu_seconds": round(collector.seconds, 3),
    }


if __name__ == "__main__":
    groups = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    kind = sys.argv[2] if len(sys.argv) > 2 else "LeaderWorkerSet"
    for key, value in run(groups, kind=kind).items():
        print(f"{key}: {value}")
