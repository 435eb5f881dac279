"""Failure handling end to end in the simulator (SimCluster + PureEngine, one reconcile every
INTERVAL simulated seconds): a crash recreates exactly the failed group, whole and fresh; a
restart budget halts a crash-looping group (Degraded) until the user recovers it."""

from __future__ import annotations

import copy
import json

import pytest

from pulumi_lws.core.contract.snapshot import is_deleting, labels_of, pod_running_and_ready, statefulset_ready
from pulumi_lws.core.contract.stage import Action
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.observe import lws_scope
from pulumi_lws.lws.rollout.failure.ordinal import merge_failure_status
from pulumi_lws.lws.rollout.failure.retention import RETAIN_FINALIZER
from pulumi_lws.sim.cluster.kubelet import KubeletConfig, Timing
from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.sim.driver.engines import PureEngine

NS, NAME, INTERVAL, R, SIZE = "default", "web", 5, 3, 3


def manifest(image: str = "v1", **lwt_extra) -> dict:
    termination = lwt_extra.pop("podTerminationPolicy", None)
    container = {"name": "c", "image": image, "resources": {"limits": {"nvidia.com/gpu": 1}}}
    spec = {
        "replicas": R,
        "leaderWorkerTemplate": {
            "size": SIZE,
            **lwt_extra,
            "workerTemplate": {"spec": {"terminationGracePeriodSeconds": 2, "containers": [container]}},
        },
    }
    if termination:
        spec["podTerminationPolicy"] = termination
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": NAME, "namespace": NS},
        "spec": spec,
    }


class Driver:
    """Reconciles every INTERVAL s; checks after every second that no group other than the
    failing one ever loses a pod and that live groups never exceed replicas (no surge here)."""

    def __init__(self, desired: dict, gpus: bool = False) -> None:
        nodes = (
            [{"name": f"n{k}", "capacity": {"nvidia.com/gpu": SIZE, "cpu": 64, "pods": 110}} for k in range(R)]
            if gpus
            else ()
        )
        self.cluster = SimCluster(seed=3, nodes=nodes, kubelet=KubeletConfig(default=Timing(1, 2), termination_grace=2))
        self.engine = PureEngine(NS)
        self.desired = desired
        self.t = 0
        self.stages = []
        self.protected: dict[str, str] = {}  # pod name -> uid that must survive

    def run(self, seconds: int) -> None:
        for _ in range(seconds):
            self.cluster.step(self.t)
            if self.t % INTERVAL == 0:
                self.stages.append(self.engine.step(self.cluster, copy.deepcopy(self.desired)).stage)
            self.check()
            self.t += 1

    def check(self) -> None:
        uids = self.uids()
        for name, uid in self.protected.items():
            assert uids.get(name) == uid, f"t={self.t}: {name} was touched"
        leaders = [p for p in self.pods() if labels_of(p).get(L.WORKER_INDEX) == "0" and not is_deleting(p)]
        assert len(leaders) <= R

    def pods(self) -> list[dict]:
        return self.cluster.list("Pod", NS, {"matchLabels": {L.NAME: NAME}})

    def uids(self, group: int | None = None) -> dict[str, str]:
        out = {}
        for p in self.pods():
            name = p["metadata"]["name"]
            if group is None or name == f"{NAME}-{group}" or name.startswith(f"{NAME}-{group}-"):
                out[name] = p["metadata"]["uid"]
        return out

    def group_ready(self, i: int) -> bool:
        leader = self.cluster.get("Pod", f"{NAME}-{i}", NS)
        return pod_running_and_ready(leader) and statefulset_ready(self.cluster.get("StatefulSet", f"{NAME}-{i}", NS))

    def all_ready(self) -> bool:
        return all(self.group_ready(i) for i in range(R)) and not any(is_deleting(p) for p in self.pods())

    def settle(self, limit: int = 90) -> None:
        for _ in range(limit // INTERVAL):
            self.run(INTERVAL)
            if self.all_ready() and self.stages[-1].complete:
                return
        raise AssertionError(f"did not settle: {self.stages[-1].summary()} {self.stages[-1].notes}")

    def protect_all_but(self, group: int) -> None:
        self.protected = {n: u for n, u in self.uids().items() if n not in self.uids(group)}

    def gpus_in_use(self) -> int:
        """GPUs requested by pods the scheduler counts (bound, not in a terminal phase)."""
        return sum(
            int(c.get("resources", {}).get("limits", {}).get("nvidia.com/gpu", 0))
            for p in self.pods()
            if p["spec"].get("nodeName") and p["status"].get("phase") not in ("Failed", "Succeeded")
            for c in p["spec"]["containers"]
        )

    def counts(self) -> dict:
        ann = self.cluster.get("StatefulSet", NAME, NS)["metadata"].get("annotations") or {}
        return json.loads(ann.get(L.GROUP_RESTART_COUNTS, "{}"))

    def status(self) -> dict:
        lws = LeaderWorkerSet.from_manifest(self.desired, namespace=NS)
        return merge_failure_status({"conditions": []}, lws, self.cluster.observe(lws_scope(NS, NAME)))


@pytest.mark.parametrize("termination", ["Sequential", "Parallel"])
def test_worker_crash_recreates_exactly_that_group(termination):
    d = Driver(manifest(podTerminationPolicy=termination))
    d.settle()
    before = d.uids(1)
    assert len(before) == SIZE
    d.protect_all_but(1)
    d.cluster.restart_container(NS, f"{NAME}-1-2")
    d.settle()
    after = d.uids(1)
    assert set(after) == set(before) and not set(after.values()) & set(before.values())  # every pod fresh
    assert any("RecreateGroup" in n for s in d.stages for n in s.notes)
    deletes = [a for s in d.stages for a in s.actions if a.verb == "delete" and a.name == f"{NAME}-1"]
    assert len(deletes) == 1  # one failure, one recreation
    # rollout invariants still hold: a template change afterwards rolls every group normally
    d.protected = {}
    d.desired = manifest("v2", **({} if termination == "Sequential" else {"podTerminationPolicy": termination}))
    d.settle(limit=200)
    images = {p["spec"]["containers"][0]["image"] for p in d.pods()}
    assert images == {"v2"}


def test_restart_budget_exhaustion_retains_the_group_and_recover_brings_it_back():
    d = Driver(manifest(maxGroupRestarts=1), gpus=True)
    d.settle()
    d.protect_all_but(2)
    d.cluster.restart_container(NS, f"{NAME}-2-1")
    d.settle()
    assert list(d.counts().values()) == [1]
    assert d.status()["conditions"][0]["status"] == "False"  # Degraded=False
    first = d.uids(2)
    assert d.gpus_in_use() == R * SIZE

    d.cluster.restart_container(NS, f"{NAME}-2-1")  # the budget (1) is used up: retain the group
    d.run(40)
    pods = {n: d.cluster.get("Pod", n, NS) for n in first}
    assert {n: p["metadata"]["uid"] for n, p in pods.items()} == first  # the same objects, nothing recreated
    assert pods[f"{NAME}-2"]["metadata"]["annotations"][L.RESTART_BUDGET_EXHAUSTED] == "true"
    for p in pods.values():
        assert p["metadata"]["deletionTimestamp"] and p["metadata"]["finalizers"] == [RETAIN_FINALIZER]
        assert p["status"]["phase"] == "Failed"
        assert not any("running" in cs["state"] for cs in p["status"].get("containerStatuses") or [])
    assert d.gpus_in_use() == (R - 1) * SIZE  # the retained pods free their GPUs ...
    probe = d.cluster.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "probe", "namespace": NS},
            "spec": {"containers": [{"name": "p", "resources": {"limits": {"nvidia.com/gpu": 1}}}]},
        }
    )
    assert d.cluster.get("Pod", "probe", NS)["spec"].get(
        "nodeName"
    )  # ... and the scheduler can use them (all nodes were full)
    d.cluster.store.delete("Pod", NS, "probe", uid=probe["metadata"]["uid"], grace=0)
    d.cluster.settle()
    assert d.cluster.get("StatefulSet", f"{NAME}-2", NS) is None or is_deleting(
        d.cluster.get("StatefulSet", f"{NAME}-2", NS)
    )
    assert list(d.counts().values()) == [1]
    degraded = d.status()["conditions"][0]
    assert (degraded["type"], degraded["status"], degraded["reason"]) == (
        "Degraded",
        "True",
        "ReplicaRestartBudgetExceeded",
    )
    assert d.stages[-1].groups[2].phase == "exhausted" and not d.stages[-1].complete

    d.cluster.execute(NS, [Action("delete", "Pod", f"{NAME}-2")])  # kubectl delete: no recovery
    d.run(2 * INTERVAL)
    assert d.uids(2) == first and not d.stages[-1].actions

    d.cluster.execute(NS, [_recover_action(pods[f"{NAME}-2"])])  # kubectl annotate pod web-2 ...recover=true
    d.settle()
    fresh = d.uids(2)
    assert len(fresh) == SIZE and not set(fresh.values()) & set(first.values())
    assert d.counts() == {} and d.status()["conditions"][0]["status"] == "False"
    assert d.gpus_in_use() == R * SIZE


def _recover_action(leader: dict):
    return Action("annotate", "Pod", leader["metadata"]["name"], {"annotations": {L.RECOVER: "true"}})


def test_sim_finalize_verb_and_finalizer_semantics():
    c = SimCluster(seed=1, kubelet=KubeletConfig(default=Timing(0, 0), termination_grace=2))
    pod = c.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": NS},
            "spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1}}}]},
        }
    )
    uid = pod["metadata"]["uid"]
    c.step(1)
    assert c.execute(NS, [Action("finalize", "Pod", "p", {"add": [RETAIN_FINALIZER]}, uid="other")])[0].endswith(
        f"uid precondition failed (have {uid}, want other)"
    )
    assert c.execute(
        NS,
        [Action("finalize", "Pod", "p", {"add": [RETAIN_FINALIZER]}, uid=uid), Action("delete", "Pod", "p", uid=uid)],
    ) == ["finalize Pod/p: ok", "delete Pod/p: deleted"]
    assert c.get("Pod", "p", NS)["status"]["phase"] == "Running"  # grace period: still terminating
    c.step(5)
    kept = c.get("Pod", "p", NS)
    assert kept["status"]["phase"] == "Failed" and kept["metadata"]["finalizers"] == [RETAIN_FINALIZER]
    assert "terminated" in kept["status"]["containerStatuses"][0]["state"]
    assert "Forbidden" in c.execute(NS, [Action("finalize", "Pod", "p", {"add": ["x.io/y"]}, uid=uid)])[0]
    c.execute(NS, [Action("delete", "Pod", "p", uid=uid)])  # a second delete changes nothing
    assert c.get("Pod", "p", NS) is not None
    assert c.execute(NS, [Action("finalize", "Pod", "p", {"remove": [RETAIN_FINALIZER]}, uid=uid)]) == [
        "finalize Pod/p: ok"
    ]
    assert c.get("Pod", "p", NS) is None
