"""Deployment/ReplicaSet, garbage collection, scheduler, kubelet gates and the Actuator."""

from __future__ import annotations

from support.sim_helpers import cluster, deployment, pod, run_until, sts

from pulumi_lws.core.contract.snapshot import pod_condition, pod_running_and_ready, pod_unschedulable
from pulumi_lws.core.contract.stage import Action
from pulumi_lws.sim.cluster.deployment import resolve_fenceposts


def rs_replicas(c):
    return {r["metadata"]["labels"]["pod-template-hash"]: r["spec"]["replicas"] for r in c.list("ReplicaSet")}


def test_fenceposts_rounding():
    assert resolve_fenceposts("25%", "25%", 10) == (3, 2)
    assert resolve_fenceposts(0, 0, 5) == (0, 1)
    assert resolve_fenceposts("10%", "10%", 4) == (1, 0)


def test_deployment_surge_arithmetic_10_replicas_25_percent():
    c = cluster()
    c.apply([deployment()])
    run_until(c, 5)
    c.apply([deployment(image="b")])
    reps = c.list("ReplicaSet")
    new = next(r for r in reps if r["spec"]["template"]["spec"]["containers"][0]["image"] == "b")
    old = next(r for r in reps if r is not new)
    # new RS +3 (maxSurge, 13 total); old -2 (maxUnavailable) -> 8; the next sync refills the
    # surge room against spec counts (terminating pods are not counted): new 5, old 8.
    assert new["spec"]["replicas"] == 5 and old["spec"]["replicas"] == 8
    active = [p for p in c.list("Pod") if not p["metadata"].get("deletionTimestamp")]
    assert len(active) == 13 and len(c.list("Pod")) == 15
    run_until(c, 60)
    assert sorted(rs_replicas(c).values()) == [0, 10]
    d = c.get("Deployment", "d")["status"]
    assert d["updatedReplicas"] == d["availableReplicas"] == 10
    assert all(p["metadata"]["name"].startswith(new["metadata"]["name"] + "-") for p in c.list("Pod"))


def test_deployment_availability_never_below_floor():
    c = cluster(ready=3)
    c.apply([deployment(replicas=8, surge=1, unavailable=1)])
    run_until(c, 6)
    c.apply([deployment(replicas=8, image="b", surge=1, unavailable=1)])
    for t in range(7, 80):
        run_until(c, t)
        d = c.get("Deployment", "d")["status"]
        assert d["availableReplicas"] >= 7
        assert sum(r["spec"]["replicas"] for r in c.list("ReplicaSet")) <= 9


def test_replicaset_victim_ranking():
    c = cluster(start=1, ready=1)
    c.apply([deployment(replicas=5, surge=0, unavailable=1)])
    run_until(c, 3)
    pods = sorted(p["metadata"]["name"] for p in c.list("Pod"))
    cheap, gated = pods[3], pods[4]
    c.execute(
        "default",
        [Action("annotate", "Pod", cheap, {"annotations": {"controller.kubernetes.io/pod-deletion-cost": "-100"}})],
    )
    c.restart_container("default", gated)  # not ready: ranks before ready pods
    c.apply([deployment(replicas=3, surge=0, unavailable=1)])
    gone = sorted(p["metadata"]["name"] for p in c.list("Pod") if p["metadata"].get("deletionTimestamp"))
    assert gone == sorted([cheap, gated])
    assert c.store.list("ReplicaSet")
    ranked = sorted(c.store.list("Pod"), key=c.replicasets.victim_key)
    assert ranked[0]["metadata"].get("deletionTimestamp") is not None


def test_gc_background_and_foreground():
    c = cluster(grace=2)
    c.apply([sts(replicas=2)])
    run_until(c, 4)
    owner = c.store.get("Pod", "default", "web-0")
    c.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": "child",
                "namespace": "default",
                "ownerReferences": [
                    {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "name": "web-0",
                        "uid": owner["metadata"]["uid"],
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
        }
    )
    # foreground: the owner keeps existing (finalizer) until the blocking dependent is gone
    c.execute(
        "default", [Action("delete", "Pod", "web-0", {"propagation": "Foreground"}, uid=owner["metadata"]["uid"])]
    )
    assert c.get("ConfigMap", "child") is None
    assert c.get("Pod", "web-0")["metadata"].get("finalizers") in (None, [])
    # background delete of the StatefulSet: pods are collected once it is gone
    c.store.delete("StatefulSet", "default", "web", propagation="Background")
    c.settle()
    assert all(p["metadata"].get("deletionTimestamp") for p in c.list("Pod"))
    run_until(c, 10)
    assert c.list("Pod") == []


def test_delete_uid_precondition_protects_recreated_objects():
    c = cluster(grace=0)
    c.apply([sts(replicas=1)])
    old_uid = c.get("Pod", "web-0")["metadata"]["uid"]
    out = c.execute("default", [Action("delete", "Pod", "web-0", uid=old_uid)])
    assert out == ["delete Pod/web-0: deleted"]
    out = c.execute("default", [Action("delete", "Pod", "web-0", uid=old_uid)])  # recreated by the STS
    assert "Conflict" in out[0] and c.get("Pod", "web-0") is not None


def test_scheduling_gates_and_readiness_gates():
    c = cluster()
    c.create(pod("p", schedulingGates=[{"name": "g1"}], readinessGates=[{"conditionType": "example.com/ok"}]))
    run_until(c, 5)
    p = c.get("Pod", "p")
    assert p["status"]["phase"] == "Pending" and pod_condition(p, "PodScheduled")["reason"] == "SchedulingGated"
    c.execute("default", [Action("ungate", "Pod", "p", {"gate": "g1"})])
    run_until(c, 10)
    p = c.get("Pod", "p")
    assert p["status"]["phase"] == "Running" and not pod_running_and_ready(p)  # readiness gate not True yet
    out = c.execute(
        "default", [Action("set-condition", "Pod", "p", {"type": "example.com/ok", "status": "True", "reason": "Test"})]
    )
    assert out == ["set-condition Pod/p: ok"] and pod_running_and_ready(c.get("Pod", "p"))


def test_label_action_merges_and_removes():
    c = cluster()
    c.create(
        pod(
            "p",
        )
    )
    c.execute("default", [Action("label", "Pod", "p", {"labels": {"a": "1", "b": "2"}})])
    c.execute("default", [Action("label", "Pod", "p", {"labels": {"a": None}})])
    assert c.get("Pod", "p")["metadata"]["labels"] == {"b": "2"}


def gpu_pod(name, gpus, **spec):
    return pod(
        name,
        {"app": "g"},
        containers=[{"name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpu": gpus}}}],
        **spec,
    )


def test_scheduler_gpu_capacity_and_unschedulable_message():
    c = cluster(
        nodes=[
            {"name": f"n{i}", "labels": {"zone": "a" if i < 2 else "b"}, "capacity": {"nvidia.com/gpu": 8, "cpu": 16}}
            for i in range(3)
        ]
    )
    for i in range(3):
        c.create(gpu_pod(f"p{i}", 8))
    c.create(gpu_pod("p3", 4))
    assert sorted(p["spec"].get("nodeName", "") for p in c.list("Pod")) == ["", "n0", "n1", "n2"]
    p3 = c.get("Pod", "p3")
    assert (
        pod_unschedulable(p3)
        and pod_condition(p3, "PodScheduled")["message"] == "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."
    )
    c.store.delete("Pod", "default", "p0")
    run_until(c, 3)  # grace 1s frees the GPUs
    assert c.get("Pod", "p3")["spec"]["nodeName"] == "n0"


def test_node_selector_affinity_and_anti_affinity_by_zone():
    nodes = [{"name": f"n{i}", "labels": {"zone": "a" if i < 2 else "b"}, "capacity": {"cpu": 8}} for i in range(4)]
    c = cluster(nodes=nodes)
    c.create(pod("sel", {"app": "x"}, nodeSelector={"zone": "b"}))
    assert c.get("Pod", "sel")["spec"]["nodeName"] in ("n2", "n3")
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchExpressions": [{"key": "grp", "operator": "In", "values": ["1"]}]},
                    "topologyKey": "zone",
                }
            ]
        }
    }
    c.create(pod("a1", {"grp": "1"}, affinity=anti))
    c.create(pod("a2", {"grp": "1"}, affinity=anti))
    c.create(pod("a3", {"grp": "1"}, affinity=anti))
    zones = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in c.list("Pod")}
    assert {zones["a1"][:2], zones["a2"][:2]} and zones["a3"] is None
    assert ({zones["a1"], zones["a2"]} & {"n0", "n1"}) and ({zones["a1"], zones["a2"]} & {"n2", "n3"})
    aff = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"grp": "2"}}, "topologyKey": "zone"}
            ]
        }
    }
    c.create(pod("b1", {"grp": "2"}, affinity=aff))  # first of a self-affine set goes anywhere
    c.create(pod("b2", {"grp": "2"}, affinity=aff))
    z = lambda n: "a" if c.get("Pod", n)["spec"]["nodeName"] in ("n0", "n1") else "b"  # noqa: E731
    assert z("b1") == z("b2")
    c.create(
        pod(
            "none",
            {},
            affinity={
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "labelSelector": {"matchExpressions": [{"key": "nope", "operator": "Exists"}]},
                            "topologyKey": "zone",
                        }
                    ]
                }
            },
        )
    )
    assert pod_unschedulable(c.get("Pod", "none"))


def test_no_nodes_means_everything_fits():
    c = cluster()
    c.create(gpu_pod("big", 1000))
    assert c.get("Pod", "big")["spec"]["nodeName"] == "sim-node"


def test_node_loss_evicts_pods_and_statefulset_recreates_them():
    c = cluster(nodes=[{"name": "n0", "capacity": {"cpu": 8}}, {"name": "n1", "capacity": {"cpu": 8}}])
    c.apply([sts(replicas=2)])
    run_until(c, 4)
    lost = c.get("Pod", "web-0")["spec"]["nodeName"]
    c.lose_node(lost)
    assert c.get("Pod", "web-0")["spec"]["nodeName"] != lost and all(
        p["spec"]["nodeName"] != lost for p in c.list("Pod")
    )
