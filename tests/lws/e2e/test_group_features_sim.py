"""End to end in the simulator: reconcile (PureEngine: observe -> plan -> render -> apply) against
SimCluster's StatefulSet controller, scheduler and kubelet. startupPolicy LeaderReady, exclusive
topology across zones, gang objects before member pods, and volume claim templates."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

import pulumi_lws.sim.cluster.simcluster as sim_cluster
import pulumi_lws.sim.driver.engines as sim_engines
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.render import scheduling as S
from pulumi_lws.lws.rollout import placement as P
from pulumi_lws.sim.cluster.kubelet import KubeletConfig, Override, Timing

ZONE = "topology.kubernetes.io/zone"


def lws_manifest(
    *,
    replicas: int = 2,
    size: int = 3,
    startup: str = "LeaderCreated",
    image: str = "a",
    annotations: dict | None = None,
    **lwt_extra: Any,
) -> dict:
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "lws", "namespace": "default", "annotations": annotations or {}},
        "spec": {
            "replicas": replicas,
            "startupPolicy": startup,
            "leaderWorkerTemplate": {
                "size": size,
                "workerTemplate": {"spec": {"containers": [{"name": "c", "image": image}]}},
                **lwt_extra,
            },
        },
    }


def make_cluster(*, nodes: tuple = (), overrides: tuple = (), ready: float = 2.0):
    cfg = KubeletConfig(default=Timing(1.0, ready), overrides=list(overrides), termination_grace=1.0)
    return sim_cluster.SimCluster(nodes=nodes, kubelet=cfg)


def drive(
    cluster,
    manifest: dict,
    until: float,
    *,
    provider: str | None = None,
    every: float = 1.0,
    after_step: Callable[[Any, Any], None] | None = None,
):
    """One reconcile every ``every`` seconds until ``until``; returns the last stage."""
    engine = sim_engines.PureEngine("default", gang_provider=provider)
    stage = None
    while True:
        step = engine.step(cluster, manifest)
        stage = step.stage
        if after_step is not None:
            after_step(cluster, stage)
        if cluster.clock.now >= until:
            return stage
        cluster.step(cluster.clock.now + every)


def pods(cluster, prefix: str = "lws-") -> dict[str, dict]:
    return {
        p["metadata"]["name"]: p
        for p in cluster.list("Pod")
        if p["metadata"]["name"].startswith(prefix) and not p["metadata"].get("deletionTimestamp")
    }


def is_ready(pod: dict) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True" for c in pod["status"].get("conditions") or [])


# ---- startupPolicy LeaderReady ------------------------------------------------------------------


def test_leader_ready_holds_workers_until_leader_ready_and_again_on_rollout():
    slow = Override(pod="lws-1", ready=15.0)  # leader of group 1 takes 15 s to become Ready
    cluster = make_cluster(overrides=(slow,))
    manifest = lws_manifest(startup="LeaderReady")
    violations: list[str] = []

    def check(c, _stage):
        live = pods(c)
        for i in (0, 1):
            workers = [n for n in live if n.startswith(f"lws-{i}-")]
            leader = live.get(f"lws-{i}")
            if workers and not (leader and is_ready(leader)) and c.get("StatefulSet", f"lws-{i}") is None:
                violations.append(f"t={c.clock.now}: workers {workers} without a Ready leader")
        sts = c.get("StatefulSet", "lws-1")
        if sts is not None and c.clock.now < 16:
            violations.append(f"t={c.clock.now}: worker StatefulSet lws-1 before its leader was Ready")

    stage = drive(cluster, manifest, 40, after_step=check)
    assert not violations, violations
    assert stage.complete, stage.summary()
    first_worker = cluster.get("Pod", "lws-1-1")
    assert first_worker is not None
    assert (
        cluster.get("StatefulSet", "lws-0")["metadata"]["creationTimestamp"]
        < first_worker["metadata"]["creationTimestamp"]
    )

    # rollout: each replaced group waits for its NEW leader before its new workers exist
    new = lws_manifest(startup="LeaderReady", image="b")
    seen: list[str] = []

    def check_rollout(c, _stage):
        for i in (0, 1):
            sts = c.get("StatefulSet", f"lws-{i}")
            leader = c.get("Pod", f"lws-{i}")
            if sts is None or sts["spec"]["template"]["spec"]["containers"][0]["image"] != "b":
                continue
            lead_image = leader["spec"]["containers"][0]["image"] if leader else None
            first = f"lws-{i}" not in seen
            seen.append(f"lws-{i}")
            if lead_image != "b" or (first and not is_ready(leader)):
                violations.append(f"t={c.clock.now}: new workers of group {i} declared before its new leader was Ready")

    stage = drive(cluster, new, cluster.clock.now + 80, after_step=check_rollout)
    assert not violations, violations
    assert stage.complete, stage.summary()
    assert {"lws-0", "lws-1"} <= set(seen)
    assert all(p["spec"]["containers"][0]["image"] == "b" for p in pods(cluster).values())


# ---- exclusive topology -------------------------------------------------------------------------


def zone_nodes() -> tuple:
    return tuple(
        {"name": f"{z}{n}", "labels": {ZONE: z}, "capacity": {"cpu": "64", "memory": "256Gi", "pods": "110"}}
        for z in ("a", "b", "c")
        for n in (1, 2)
    )


def zone_of(cluster, pod: dict) -> str:
    return cluster.get("Node", pod["spec"]["nodeName"], namespace="")["metadata"]["labels"][ZONE]


def test_exclusive_topology_three_groups_three_zones_fourth_pending():
    cluster = make_cluster(nodes=zone_nodes())
    manifest = lws_manifest(replicas=3, size=3, annotations={L.EXCLUSIVE_TOPOLOGY: ZONE})
    stage = drive(cluster, manifest, 30)
    assert stage.complete, stage.summary()
    zones = {}
    for i in range(3):
        members = [p for n, p in pods(cluster).items() if n == f"lws-{i}" or n.startswith(f"lws-{i}-")]
        assert len(members) == 3
        group_zones = {zone_of(cluster, p) for p in members}
        assert len(group_zones) == 1, (i, group_zones)
        zones[i] = group_zones.pop()
        sel = cluster.get("StatefulSet", f"lws-{i}")["spec"]["template"]["spec"]["nodeSelector"]
        assert sel == {ZONE: zones[i]}
    assert sorted(zones.values()) == ["a", "b", "c"]

    bigger = copy.deepcopy(manifest)
    bigger["spec"]["replicas"] = 4
    stage = drive(cluster, bigger, cluster.clock.now + 20)
    leader3 = cluster.get("Pod", "lws-3")
    assert leader3 is not None and leader3["status"]["phase"] == "Pending" and not leader3["spec"].get("nodeName")
    cond = next(c for c in leader3["status"]["conditions"] if c["type"] == "PodScheduled")
    assert cond["status"] == "False" and cond["reason"] == "Unschedulable"
    assert cluster.get("StatefulSet", "lws-3") is None  # workers held until the leader is scheduled
    assert stage.blocker is not None and stage.blocker.code == P.DOMAIN_UNAVAILABLE
    assert "lws-3" in stage.blocker.message and stage.blocker.groups == ("3",)
    assert {zone_of(cluster, p) for n, p in pods(cluster).items() if n.startswith("lws-0")} == {zones[0]}


def test_exclusive_topology_node_without_label_blocks_with_upstream_message():
    nodes = ({"name": "bare", "labels": {}, "capacity": {"cpu": "8", "pods": "110"}},)
    cluster = make_cluster(nodes=nodes)
    manifest = lws_manifest(replicas=1, size=2, annotations={L.EXCLUSIVE_TOPOLOGY: ZONE})
    stage = drive(cluster, manifest, 5)
    assert cluster.get("StatefulSet", "lws-0") is None
    assert stage.blocker is not None and stage.blocker.code == P.LABEL_MISSING
    assert stage.blocker.message == f"node bare does not have topology label: {ZONE}"


# ---- gang scheduling ------------------------------------------------------------------------------


def record_creations(cluster) -> list[tuple[str, str]]:
    created: list[tuple[str, str]] = []
    original = cluster.store.create

    def create(obj, *a, **kw):
        out = original(obj, *a, **kw)
        created.append((out["kind"], out["metadata"]["name"]))
        return out

    cluster.store.create = create  # type: ignore[method-assign]
    return created


@pytest.mark.parametrize(
    "provider,scheduling",
    [
        ("kubernetes", {}),
        ("kubernetes", {"replica": {"leader": {}, "worker": {}}}),
        ("kubernetes", {"schedulingPolicy": {"gang": {}}}),
        ("volcano", {}),
    ],
)
def test_gang_objects_exist_before_member_pods(provider, scheduling):
    cluster = make_cluster()
    created = record_creations(cluster)
    manifest = lws_manifest()
    manifest["spec"]["scheduling"] = scheduling
    stage = drive(cluster, manifest, 20, provider=provider)
    assert stage.complete, stage.summary()
    order = {key: n for n, key in enumerate(created)}
    live = pods(cluster)
    referenced = 0
    for name, pod in live.items():
        pg = (pod["spec"].get("schedulingGroup") or {}).get("podGroupName") or (
            pod["metadata"].get("annotations") or {}
        ).get(S.VOLCANO_GROUP_NAME)
        if pg is None:
            continue
        referenced += 1
        assert cluster.get("PodGroup", pg) is not None, (name, pg)
        assert order[("PodGroup", pg)] < order[("Pod", name)], (name, pg)
    if provider == "kubernetes":
        assert order[("Workload", "lws")] < min(order[k] for k in order if k[0] == "PodGroup")
    assert referenced >= 4  # every worker pod (2 groups x 2 workers) names its gang


# ---- storage: volume claim templates -------------------------------------------------------------

VCT = [
    {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
]


@pytest.mark.parametrize(
    "retention,kept_after_scale_down", [(None, True), ({"whenScaled": "Delete", "whenDeleted": "Delete"}, False)]
)
def test_volume_claims_per_pod_and_retention_on_scale_down(retention, kept_after_scale_down):
    cluster = make_cluster()
    extra: dict[str, Any] = {"volumeClaimTemplates": VCT}
    if retention:
        extra["persistentVolumeClaimRetentionPolicy"] = retention
    manifest = lws_manifest(replicas=2, size=2, **extra)
    stage = drive(cluster, manifest, 15)
    assert stage.complete, stage.summary()
    pvcs = {p["metadata"]["name"] for p in cluster.list("PersistentVolumeClaim")}
    assert pvcs == {"data-lws-0", "data-lws-1", "data-lws-0-1", "data-lws-1-1"}
    mounted = {
        v["persistentVolumeClaim"]["claimName"]
        for p in pods(cluster).values()
        for v in p["spec"].get("volumes") or []
        if "persistentVolumeClaim" in v
    }
    assert mounted == pvcs

    smaller = copy.deepcopy(manifest)
    smaller["spec"]["replicas"] = 1
    stage = drive(cluster, smaller, cluster.clock.now + 15)
    assert stage.complete, stage.summary()
    pvcs = {p["metadata"]["name"] for p in cluster.list("PersistentVolumeClaim")}
    group1 = {"data-lws-1", "data-lws-1-1"}
    assert {"data-lws-0", "data-lws-0-1"} <= pvcs
    assert (group1 <= pvcs) is kept_after_scale_down and (not group1 & pvcs) is (not kept_after_scale_down)


# ---- through the real Pulumi component ---------------------------------------------------------


def test_component_registers_gang_objects_and_topology_workers():
    """The component (mock engine) registers Workload/PodGroups as CustomResources with their body,
    and pins workers once the simulator scheduled their leaders (nodes observed by the component)."""
    from pulumi_lws.components.leaderworkerset import LeaderWorkerSet as Component
    from pulumi_lws.sim.driver.pulumi_engine import run_program

    gang = lws_manifest(replicas=2, size=2)
    gang["spec"]["scheduling"] = {}
    result = run_program(lambda: Component("gang", {"manifest": gang}), make_cluster(), make_cluster())
    kinds = [(m["apiVersion"], m["kind"]) for m in result.manifests]
    assert ("scheduling.k8s.io/v1beta1", "Workload") in kinds and kinds.count(
        ("scheduling.k8s.io/v1beta1", "PodGroup")
    ) == 2
    for m in result.manifests:
        if S.is_gang_object(m):
            assert m["metadata"]["name"] and m["metadata"]["namespace"] == "default" and m["spec"]

    cluster = make_cluster(nodes=zone_nodes())
    topo = lws_manifest(replicas=2, size=2, annotations={L.EXCLUSIVE_TOPOLOGY: ZONE})
    for _ in range(4):
        result = run_program(lambda: Component("topo", {"manifest": topo}), cluster, cluster)
        cluster.apply(result.manifests, stack_id="topo")
        cluster.step(cluster.clock.now + 3)
    workers = [m for m in result.manifests if m["kind"] == "StatefulSet" and m["metadata"]["name"] != "lws"]
    assert [w["metadata"]["name"] for w in workers] == ["lws-0", "lws-1"]
    assert all(ZONE in w["spec"]["template"]["spec"]["nodeSelector"] for w in workers)
