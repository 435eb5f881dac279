"""Simulator benchmark: a 100-group LWS rollout through the pure engine (reconcile + apply +
controllers), timed end to end. ``bench/run.py`` imports :func:`run`; ``python bench/bench_sim.py``
prints the figures. Target: seconds.
"""
from __future__ import annotations

import sys
import time
from typing import Any


def scenario(groups: int = 100, size: int = 2, history: str = "internal"):
    from pulumi_lws.sim.scenario import load_scenario

    def lws(image: str) -> dict[str, Any]:
        return {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
                "metadata": {"name": "bench"},
                "spec": {"replicas": groups,
                         "rolloutStrategy": {"rollingUpdateConfiguration": {"maxUnavailable": "10%", "maxSurge": "10%"}},
                         "leaderWorkerTemplate": {"size": size, "workerTemplate": {"spec": {"containers": [
                             {"name": "c", "image": image}]}}}}}
    return load_scenario({
        "name": f"bench-{groups}x{size}", "seed": 7, "engine": "pure", "start": "converged",
        "manifest": lws("img:1"), "updates": [{"at": 0, "manifest": lws("img:2")}],
        "reconcile": {"interval": 5, "tick": 5}, "kubelet": {"startSeconds": 1, "readySeconds": 3,
                                                             "terminationGracePeriodSeconds": 0},
        "cluster": {"statefulSetRevisions": history}, "stop": {"maxTime": 3600}})


def run(groups: int = 100, size: int = 2) -> dict[str, Any]:
    """Figures for one rollout: wall seconds, reconciles, simulated seconds, stages, objects."""
    from pulumi_lws.sim.runner import simulate

    sc = scenario(groups, size)
    t0 = time.perf_counter()
    result = simulate(sc)
    wall = time.perf_counter() - t0
    return {"name": "sim_rollout", "groups": groups, "size": size, "wall_seconds": round(wall, 3),
            "reconciles": len(result.stages), "simulated_seconds": result.end_time,
            "stages": len(result.trace.rows), "objects": len(result.cluster.store),
            "converged": result.trace.converged, "violations": len(result.trace.violations),
            "ms_per_reconcile": round(1000 * wall / max(1, len(result.stages)), 1)}


if __name__ == "__main__":
    groups = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    for key, value in run(groups).items():
        print(f"{key}: {value}")
