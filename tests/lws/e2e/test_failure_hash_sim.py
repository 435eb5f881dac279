"""Hash-mode failure handling end to end in the simulator (SimCluster + PureEngine, one reconcile
every INTERVAL simulated seconds): a crash recreates the group under a new key and its restart
count follows it (transfer); exhaustion retains the group and holds back its gated replacement
under both replacement policies; recover releases it."""

from __future__ import annotations

import copy
import json

import pytest

from pulumi_lws.core.contract.snapshot import is_deleting, labels_of
from pulumi_lws.core.contract.stage import Action
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.observe import lws_scope
from pulumi_lws.lws.rollout.failure.ordinal import merge_failure_status
from pulumi_lws.lws.rollout.failure.retention import RETAIN_FINALIZER
from pulumi_lws.sim.cluster.kubelet import KubeletConfig, Timing
from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.sim.driver.engines import PureEngine

NS, NAME, INTERVAL, R, SIZE = "default", "web", 5, 2, 3


def manifest(policy: str) -> dict:
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": NAME, "namespace": NS},
        "spec": {
            "replicas": R,
            "groupIdentity": "Hash",
            "groupReplacementPolicy": policy,
            "rolloutStrategy": {"rollingUpdateConfiguration": {"maxUnavailable": 1, "maxSurge": 1}},
            "leaderWorkerTemplate": {
                "size": SIZE,
                "maxGroupRestarts": 1,
                "workerTemplate": {
                    "spec": {"terminationGracePeriodSeconds": 2, "containers": [{"name": "c", "image": "v1"}]}
                },
            },
        },
    }


class Driver:
    def __init__(self, policy: str) -> None:
        self.cluster = SimCluster(seed=5, kubelet=KubeletConfig(default=Timing(1, 2), termination_grace=2))
        self.engine = PureEngine(NS)
        self.desired = manifest(policy)
        self.t = 0
        self.stages = []

    def run(self, seconds: int) -> None:
        for _ in range(seconds):
            self.cluster.step(self.t)
            if self.t % INTERVAL == 0:
                self.stages.append(self.engine.step(self.cluster, copy.deepcopy(self.desired)).stage)
            self.t += 1

    def converge(self, limit: int = 120) -> None:
        for _ in range(limit // INTERVAL):
            self.run(INTERVAL)
            if self.stages[-1].complete:
                return
        raise AssertionError(f"did not converge: {self.stages[-1].summary()} {self.stages[-1].notes}")

    def pods(self) -> list[dict]:
        return self.cluster.list("Pod", NS, {"matchLabels": {L.NAME: NAME}})

    def leaders(self) -> list[dict]:
        return [p for p in self.pods() if labels_of(p).get(L.WORKER_INDEX) == "0"]

    def live_keys(self) -> set[str]:
        return {labels_of(p)[L.GROUP_KEY] for p in self.leaders() if not is_deleting(p)}

    def group_pods(self, key: str) -> list[dict]:
        return [p for p in self.pods() if labels_of(p).get(L.GROUP_INDEX) == key]

    def counts(self) -> dict:
        ann = self.cluster.get("Deployment", NAME, NS)["metadata"].get("annotations") or {}
        return {k.split("/", 1)[1]: v for k, v in json.loads(ann.get(L.GROUP_RESTART_COUNTS, "{}")).items()}

    def crash_worker(self, key: str) -> None:
        self.cluster.restart_container(NS, f"{NAME}-{key[:8]}-1")

    def degraded(self) -> dict:
        lws = LeaderWorkerSet.from_manifest(self.desired, namespace=NS)
        conds = merge_failure_status({"conditions": []}, lws, self.cluster.observe(lws_scope(NS, NAME)))["conditions"]
        return next(c for c in conds if c["type"] == "Degraded")


@pytest.mark.parametrize("policy", ["PostTermination", "Immediate"])
def test_hash_crash_transfer_exhaustion_and_recover(policy):
    d = Driver(policy)
    d.converge()
    first = sorted(d.live_keys())
    victim, other = first

    d.crash_worker(victim)  # restart 1 of 1: recreated under a new key, the count follows
    d.converge()
    keys = d.live_keys()
    assert other in keys and victim not in keys and len(keys) == R
    (replacement,) = keys - {other}
    assert d.counts() == {replacement: 1}
    assert any("RecreateGroup" in n for s in d.stages for n in s.notes)
    assert any(
        a.verb == "annotate" and a.kind == "Deployment" and "transfer" in a.reason for s in d.stages for a in s.actions
    )

    d.crash_worker(replacement)  # budget used up: retained, its gated replacement held back
    d.run(40)
    kept = d.group_pods(replacement)
    assert len(kept) == SIZE
    for p in kept:
        assert is_deleting(p) and p["metadata"]["finalizers"] == [RETAIN_FINALIZER] and p["status"]["phase"] == "Failed"
    gated = [p for p in d.leaders() if not is_deleting(p) and p["spec"].get("schedulingGates")]
    assert len(gated) == 1 and d.live_keys() - {labels_of(gated[0])[L.GROUP_KEY]} == {other}
    assert d.counts() == {replacement: 1} and d.degraded()["status"] == "True"
    assert not d.stages[-1].complete and [g.phase for g in d.stages[-1].groups if g.key == replacement] == ["exhausted"]

    retained_leader = next(p for p in kept if labels_of(p).get(L.WORKER_INDEX) == "0")
    d.cluster.execute(
        NS, [Action("annotate", "Pod", retained_leader["metadata"]["name"], {"annotations": {L.RECOVER: "true"}})]
    )
    d.converge()
    assert not d.group_pods(replacement) and len(d.live_keys()) == R and other in d.live_keys()
    assert d.counts() == {} and d.degraded()["status"] == "False"


def leader_of(d: Driver, key: str) -> dict:
    return next(p for p in d.leaders() if labels_of(p).get(L.GROUP_KEY) == key)


@pytest.mark.parametrize("policy", ["PostTermination", "Immediate"])
def test_failed_leader_is_torn_down_replaced_and_its_count_follows(policy):
    d = Driver(policy)
    d.converge()
    victim, other = sorted(d.live_keys())
    d.cluster.crash_pod(NS, leader_of(d, victim)["metadata"]["name"])  # phase Failed: the ReplicaSet replaces it
    d.converge()
    keys = d.live_keys()
    assert other in keys and victim not in keys and len(keys) == R and not d.group_pods(victim)
    (replacement,) = keys - {other}
    assert d.counts() == {replacement: 1}  # counted against maxGroupRestarts, moved to the replacement
    assert len(d.pods()) == R * SIZE and all(p["status"]["phase"] == "Running" for p in d.pods())


def test_failed_leader_with_restart_policy_none_still_frees_its_slot():
    d = Driver("PostTermination")
    lwt = d.desired["spec"]["leaderWorkerTemplate"]
    lwt.pop("maxGroupRestarts")
    lwt["restartPolicy"] = "None"
    d.converge()
    victim, other = sorted(d.live_keys())
    d.cluster.crash_pod(NS, leader_of(d, victim)["metadata"]["name"])
    d.converge()
    assert victim not in d.live_keys() and other in d.live_keys() and len(d.live_keys()) == R
    assert not d.group_pods(victim) and d.counts() == {}
    assert any("TerminalLeaderRemoved" in n for s in d.stages for n in s.notes)
