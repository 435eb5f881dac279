"""The simulated kubelet knows no API: a timing override by ``group:`` / ``lws:`` finds its pods with
the labels each registered API declares (``Workload.group_labels``, pulumi_lws/core/contract/simulation.py),
handed to the kubelet by the driver side (the runner, the test harnesses)."""

from __future__ import annotations

from pulumi_lws.core.contract.simulation import GroupLabels, group_of, owner_of
from pulumi_lws.sim.cluster.kubelet import KubeletConfig, Override, Timing
from pulumi_lws.sim.driver.runner import Runner
from pulumi_lws.sim.driver.scenario import Scenario
from pulumi_lws.workloads import registered, simulator_group_labels, workload_for

LWS = workload_for("LeaderWorkerSet").group_labels
MS = workload_for("ModelServing").group_labels
TOY = GroupLabels(owner="toy.example/name", group="toy.example/slot", group_pattern=r"slot-(\d+)")


def pod(name: str, **labels: str) -> dict:
    return {"metadata": {"name": name, "labels": labels}}


def test_every_registered_api_declares_its_labels_once_in_registration_order():
    declared = [w.group_labels for w in registered().values()]
    assert all(d is not None for d in declared)
    assert simulator_group_labels() == tuple(dict.fromkeys(declared))  # DisaggregatedSet's are LWS's
    assert simulator_group_labels()[:2] == (LWS, MS)


def test_group_and_owner_come_from_the_declared_labels_only():
    lws_worker = pod("web-2-1", **{LWS.owner: "web", LWS.group: "2"})
    lws_leader_without_group = pod("web-3", **{LWS.owner: "web"})
    serving = pod("ms-entry-abc", **{MS.owner: "ms", MS.group: "ms-4"})
    facts = simulator_group_labels()
    assert [group_of(p, facts) for p in (lws_worker, lws_leader_without_group, serving)] == ["2", "3", "4"]
    assert [owner_of(p, facts) for p in (lws_worker, serving)] == ["web", "ms"]
    assert group_of(serving, (LWS,)) is None and owner_of(serving, (LWS,)) is None  # undeclared: unknown
    assert group_of(serving, ()) is None


def test_a_new_api_declares_its_own_labels_and_the_kubelet_follows():
    toy = pod("t-x", **{TOY.owner: "t", TOY.group: "slot-7"})
    assert group_of(toy, (TOY,)) == "7" and owner_of(toy, (TOY,)) == "t"
    slow = Override(group="7", lws="t", ready=30.0)
    config = KubeletConfig(default=Timing(1.0, 2.0), overrides=[slow], group_labels=(TOY,))
    assert config.timing_for(toy, 0.0).ready == 30.0
    assert KubeletConfig(default=Timing(1.0, 2.0), overrides=[slow]).timing_for(toy, 0.0).ready == 2.0  # no facts


def test_the_runner_hands_the_registered_labels_to_the_kubelet():
    doc = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 1,
            "leaderWorkerTemplate": {
                "size": 1,
                "workerTemplate": {"spec": {"containers": [{"name": "w", "image": "a"}]}},
            },
        },
    }
    runner = Runner(Scenario(name="t", engine="pure", manifest=doc))
    try:
        assert runner.cluster.kubelet.config.group_labels == simulator_group_labels()
    finally:
        runner.close()
