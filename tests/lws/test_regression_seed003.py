"""Regression for upstream lws#225 (shared/reference/seeds/003_*): a controller restart or resync
mid-rollout pushed the new worker template into every group at once.

Here a "controller restart" is a re-run of the program (one more ``pulumi up``) at any moment,
with or without a crash half-way through the previous apply. After every re-run, no group below
the partition may have its worker StatefulSet on the new template, and no pod of such a group may
have been recreated.
"""

from __future__ import annotations

import copy

import pytest

from pulumi_lws.lws import labels as L
from pulumi_lws.lws.observe import revision_of
from pulumi_lws.sim.cluster.kubelet import KubeletConfig, Timing
from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.sim.driver.engines import PureEngine

NS, NAME = "default", "llm"


def manifest(image: str) -> dict:
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": NAME, "namespace": NS},
        "spec": {
            "replicas": 4,
            "leaderWorkerTemplate": {
                "size": 3,
                "leaderTemplate": {"spec": {"containers": [{"name": "leader", "image": f"leader:{image}"}]}},
                "workerTemplate": {"spec": {"containers": [{"name": "worker", "image": f"worker:{image}"}]}},
            },
        },
    }


def worker_image(sts: dict) -> str:
    return sts["spec"]["template"]["spec"]["containers"][0]["image"]


def group_pod_uids(cluster: SimCluster, ordinal: int) -> dict[str, str]:
    pods = [
        p
        for p in cluster.list("Pod", NS)
        if p["metadata"]["name"] == f"{NAME}-{ordinal}" or p["metadata"]["name"].startswith(f"{NAME}-{ordinal}-")
    ]
    return {p["metadata"]["name"]: p["metadata"]["uid"] for p in pods}


def converge(cluster: SimCluster, engine: PureEngine, desired: dict, t: int, limit: int = 200) -> int:
    for _ in range(limit):
        cluster.step(t)
        step = engine.step(cluster, copy.deepcopy(desired))
        if step.stage.complete:
            return t
        t += 2
    raise AssertionError("did not converge")


@pytest.mark.parametrize("keep", [1.0, 0.5, 0.0], ids=["rerun", "crash-half-apply", "crash-before-apply"])
def test_rerun_mid_rollout_never_touches_groups_below_the_partition(keep: float) -> None:
    cluster = SimCluster(seed=7, kubelet=KubeletConfig(default=Timing(start=1, ready=6), termination_grace=1))
    engine = PureEngine(NS)
    t = converge(cluster, engine, manifest("v1"), 0)
    desired = manifest("v2")

    rollout_started = False
    for _ in range(200):
        t += 2
        cluster.step(t)
        step = engine.step(cluster, copy.deepcopy(desired))
        stage = step.stage
        rollout_started = rollout_started or stage.target_revision != revision_of(
            cluster.get("StatefulSet", f"{NAME}-0")
        )
        partition = stage.partition or 0
        protected = {i: group_pod_uids(cluster, i) for i in range(partition)}
        # The "controller restart": re-run the program several times, the first after a crash
        # part-way through an apply, at the same instant (nothing became ready in between).
        engine.step(cluster, copy.deepcopy(desired), keep=keep)
        for _ in range(3):
            again = engine.step(cluster, copy.deepcopy(desired)).stage
            assert (again.replicas, again.partition) == (stage.replicas, stage.partition)
        cluster.settle()
        for i in range(partition):
            sts = cluster.get("StatefulSet", f"{NAME}-{i}", NS)
            assert sts is not None and worker_image(sts) == "worker:v1", (
                f"group {i} below partition {partition} got the new worker template"
            )
            assert revision_of(sts) != stage.target_revision
            assert group_pod_uids(cluster, i) == protected[i], f"group {i} below partition {partition} was recreated"
        if stage.complete:
            break
    else:
        raise AssertionError("rollout did not complete")
    assert rollout_started
    for i in range(4):
        assert worker_image(cluster.get("StatefulSet", f"{NAME}-{i}", NS)) == "worker:v2"
    leader = cluster.get("StatefulSet", NAME, NS)
    assert leader["spec"]["template"]["spec"]["containers"][0]["image"] == "leader:v2"
    assert leader["metadata"]["labels"][L.TEMPLATE_REVISION_HASH] == stage.target_revision
