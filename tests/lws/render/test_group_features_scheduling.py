"""lws/render/scheduling.py: Workload/PodGroup (kubernetes provider) and Volcano PodGroups, pod template
stamping, quantity sums, schema validity (Kubernetes 1.37 has the v1beta1 scheduling API), and the
validation rules of ``spec.scheduling`` this feature depends on."""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

import kubernetes_validate
import pytest

from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.core.contract.snapshot import EMPTY
from pulumi_lws.core.contract.stage import Stage
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.reconcile import ReconcileOptions, reconcile
from pulumi_lws.lws.render import scheduling as S
from pulumi_lws.lws.revision import build_catalog

WAS_K8S = "1.37"  # first Kubernetes version whose schema has scheduling.k8s.io/v1beta1 and schedulingGroup


def manifest(
    scheduling: Any = None,
    *,
    replicas: int = 2,
    size: int = 3,
    annotations: dict | None = None,
    startup: str = "LeaderCreated",
    image: str = "a",
    leader: dict | None = None,
    priority: str | None = None,
) -> dict:
    worker: dict[str, Any] = {
        "spec": {
            "containers": [{"name": "w", "image": image, "resources": {"requests": {"cpu": "500m", "memory": "4Gi"}}}]
        }
    }
    if priority:
        worker["spec"]["priorityClassName"] = priority
    lwt: dict[str, Any] = {"size": size, "workerTemplate": worker}
    if leader is not None:
        lwt["leaderTemplate"] = leader
    spec: dict[str, Any] = {"replicas": replicas, "startupPolicy": startup, "leaderWorkerTemplate": lwt}
    if scheduling is not None:
        spec["scheduling"] = scheduling
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "inf", "annotations": annotations or {}},
        "spec": spec,
    }


def render(scheduling: Any, provider: str = "kubernetes", **kw: Any) -> list[dict]:
    lws = LeaderWorkerSet.from_manifest(manifest(scheduling, **kw))
    return list(reconcile(lws, EMPTY, ReconcileOptions(gang_provider=provider)).manifests)  # type: ignore[arg-type]


def by_kind(objs: list[dict], kind: str) -> list[dict]:
    return [o for o in objs if o["kind"] == kind]


def template_spec(sts: dict) -> dict:
    return sts["spec"]["template"]["spec"]


def assert_valid(objs: list[dict]) -> None:
    for obj in objs:
        kubernetes_validate.validate(dict(obj), WAS_K8S, strict=True)


# ---- no scheduling --------------------------------------------------------------------------


def test_without_scheduling_nothing_changes():
    objs = render(None)
    assert not by_kind(objs, "PodGroup") and not by_kind(objs, "Workload")
    assert all("schedulingGroup" not in template_spec(s) for s in by_kind(objs, "StatefulSet"))


# ---- kubernetes provider ----------------------------------------------------------------------


def test_replica_level_objects_names_order_and_stamping():
    objs = render({})
    assert_valid(objs)
    kinds = [o["kind"] for o in objs]
    assert kinds.index("Workload") < kinds.index("PodGroup") < kinds.index("StatefulSet")
    wl = by_kind(objs, "Workload")[0]
    rev = by_kind(objs, "StatefulSet")[0]["metadata"]["labels"][L.TEMPLATE_REVISION_HASH]
    assert wl["metadata"]["name"] == "inf"
    assert wl["spec"]["controllerRef"] == {
        "apiGroup": "leaderworkerset.x-k8s.io",
        "kind": "LeaderWorkerSet",
        "name": "inf",
    }
    assert [t["name"] for t in wl["spec"]["podGroupTemplates"]] == ["replica"]
    pgs = by_kind(objs, "PodGroup")
    assert [p["metadata"]["name"] for p in pgs] == [f"inf-0-{rev}", f"inf-1-{rev}"]
    pg = pgs[1]
    assert pg["spec"]["workloadRef"] == {"workloadName": "inf", "templateName": "replica"}
    assert pg["spec"]["schedulingPolicy"] == {"gang": {"minCount": 2}}  # the size-1 workers that reference it
    assert {k: v for k, v in pg["metadata"]["labels"].items() if k not in (L.MANAGED_BY, L.OWNERSHIP)} == {
        L.NAME: "inf",
        L.GROUP_INDEX: "1",
        L.TEMPLATE_REVISION_HASH: rev,
        S.SCHEDULING_LEVEL: "replica",
    }
    leader, w0, w1 = by_kind(objs, "StatefulSet")
    assert "schedulingGroup" not in template_spec(leader)
    assert template_spec(w1)["schedulingGroup"] == {"podGroupName": f"inf-1-{rev}"}
    assert w0["spec"]["template"]["metadata"]["annotations"][S.WAS_MODE_ANNOTATION] == "replica"


def test_role_level_leader_and_worker_groups():
    objs = render({"replica": {"leader": {}, "worker": {}}})
    assert_valid(objs)
    rev = by_kind(objs, "StatefulSet")[0]["metadata"]["labels"][L.TEMPLATE_REVISION_HASH]
    assert [t["name"] for t in by_kind(objs, "Workload")[0]["spec"]["podGroupTemplates"]] == ["leader", "worker"]
    pgs = {p["metadata"]["name"]: p for p in by_kind(objs, "PodGroup")}
    assert list(pgs) == [f"inf-0-leader-{rev}", f"inf-0-worker-{rev}", f"inf-1-leader-{rev}", f"inf-1-worker-{rev}"]
    assert pgs[f"inf-0-leader-{rev}"]["spec"]["schedulingPolicy"]["gang"]["minCount"] == 1
    assert pgs[f"inf-0-worker-{rev}"]["spec"]["schedulingPolicy"]["gang"]["minCount"] == 2
    assert pgs[f"inf-0-worker-{rev}"]["metadata"]["labels"][L.ROLE] == "worker"
    assert pgs[f"inf-0-worker-{rev}"]["metadata"]["labels"][S.SCHEDULING_LEVEL] == "role"
    assert template_spec(by_kind(objs, "StatefulSet")[1])["schedulingGroup"]["podGroupName"] == f"inf-0-worker-{rev}"


def test_lws_level_one_group_named_by_every_template():
    objs = render({"schedulingPolicy": {"gang": {}}, "disruptionMode": "All"}, replicas=3, size=2)
    assert_valid(objs)
    (pg,) = by_kind(objs, "PodGroup")
    assert pg["metadata"]["name"] == "inf-lws"
    assert pg["spec"]["schedulingPolicy"] == {"gang": {"minCount": 6}}
    assert pg["spec"]["disruptionMode"] == {"all": {}}
    assert no_group_index(pg)
    for sts in by_kind(objs, "StatefulSet"):
        assert template_spec(sts)["schedulingGroup"] == {"podGroupName": "inf-lws"}


def no_group_index(pg: dict) -> bool:
    return L.GROUP_INDEX not in pg["metadata"]["labels"]


def test_lws_level_zero_replicas_keeps_a_valid_min_count():
    objs = render({"schedulingPolicy": {"gang": {}}}, replicas=0)
    assert by_kind(objs, "PodGroup")[0]["spec"]["schedulingPolicy"]["gang"]["minCount"] == 1


def test_basic_policy_and_priority_class_are_copied():
    pc = {"spec": {"priorityClassName": "high", "containers": [{"name": "l", "image": "x"}]}}
    objs = render({"replica": {"schedulingPolicy": {"basic": {}}}}, leader=pc, priority="high")
    pg = by_kind(objs, "PodGroup")[0]
    assert pg["spec"]["schedulingPolicy"] == {"basic": {}}
    assert pg["spec"]["priorityClassName"] == "high"


def test_rollout_groups_keep_their_revision_and_size():
    """Group 0 below the partition stays on the old revision (size 3), group 1 is on the new (size 5)."""
    old = LeaderWorkerSet.from_manifest(manifest({}, size=3))
    new = LeaderWorkerSet.from_manifest(manifest({}, size=5))
    old_cat = build_catalog(old, [])
    cr = next(m for m in reconcile(old, EMPTY).manifests if m["kind"] == "ControllerRevision")
    catalog = build_catalog(new, [cr])
    old_key, new_key = old_cat.target.key, catalog.target.key
    stage = Stage("lws/ordinal", new_key, 2, 1, {"0": old_key, "1": new_key})
    objs = S.with_gang_scheduling([], new, stage, catalog)
    pgs = {p["metadata"]["name"]: p["spec"]["schedulingPolicy"]["gang"]["minCount"] for p in by_kind(objs, "PodGroup")}
    assert pgs == {f"inf-0-{old_key}": 2, f"inf-1-{new_key}": 4}


def test_inputs_are_not_mutated():
    lws = LeaderWorkerSet.from_manifest(manifest({}))
    base = [dict(m) for m in reconcile(LeaderWorkerSet.from_manifest(manifest(None)), EMPTY).manifests]
    before = copy.deepcopy(base)
    catalog = build_catalog(lws, [])
    S.with_gang_scheduling(base, lws, Stage("lws/ordinal", catalog.target.key, 2, 0, {}), catalog)
    assert base == before


def test_is_gang_object():
    objs = render({})
    assert [o["kind"] for o in objs if S.is_gang_object(o)] == ["Workload", "PodGroup", "PodGroup"]
    assert all(o["apiVersion"] and o["metadata"]["name"] and "spec" in o for o in objs if S.is_gang_object(o))


# ---- volcano ----------------------------------------------------------------------------------


def test_volcano_pod_groups():
    ann = {S.VOLCANO_QUEUE: "gpu", "volcano.sh/preemptable": "true", "other/x": "y"}
    leader = {
        "spec": {
            "containers": [{"name": "l", "image": "x", "resources": {"requests": {"cpu": "2", "memory": "512Mi"}}}]
        }
    }
    objs = render({}, provider="volcano", annotations=ann, leader=leader)
    assert not by_kind(objs, "Workload")
    pgs = by_kind(objs, "PodGroup")
    rev = by_kind(objs, "StatefulSet")[0]["metadata"]["labels"][L.TEMPLATE_REVISION_HASH]
    assert [p["metadata"]["name"] for p in pgs] == [f"inf-0-{rev}", f"inf-1-{rev}"]
    pg = pgs[0]
    assert pg["apiVersion"] == S.VOLCANO_API
    assert pg["spec"] == {"minMember": 2, "queue": "gpu", "minResources": {"cpu": "3", "memory": "8704Mi"}}
    assert pg["metadata"]["annotations"] == {"volcano.sh/preemptable": "true"}
    leader_sts, w0, _ = by_kind(objs, "StatefulSet")
    assert w0["spec"]["template"]["metadata"]["annotations"][S.VOLCANO_GROUP_NAME] == f"inf-0-{rev}"
    assert S.VOLCANO_GROUP_NAME not in (leader_sts["spec"]["template"]["metadata"].get("annotations") or {})
    assert "schedulingGroup" not in template_spec(w0)


def test_volcano_queue_option_and_leader_ready_min_member():
    lws = LeaderWorkerSet.from_manifest(manifest({"replica": {"leader": {}, "worker": {}}}, startup="LeaderReady"))
    objs = reconcile(lws, EMPTY, ReconcileOptions(gang_provider="volcano", volcano_queue="q")).manifests
    pg = by_kind(list(objs), "PodGroup")[0]
    assert pg["spec"]["minMember"] == 1 and pg["spec"]["queue"] == "q"


# ---- quantities -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,value,binary",
    [
        ("500m", Decimal("0.5"), False),
        ("4Gi", Decimal(4 * 2**30), True),
        ("8", Decimal(8), False),
        ("1e3", Decimal(1000), False),
        ("1.5G", Decimal("1.5e9"), False),
        (2, Decimal(2), False),
    ],
)
def test_parse_quantity(text, value, binary):
    assert S.parse_quantity(text) == (value, binary)


def test_parse_quantity_rejects_garbage():
    with pytest.raises(ValueError):
        S.parse_quantity("12 apples")


def test_sum_requests_counts_init_containers_and_limits():
    tmpl = {
        "spec": {
            "initContainers": [
                {"name": "i", "resources": {"requests": {"cpu": "4"}}},
                {"name": "side", "restartPolicy": "Always", "resources": {"requests": {"cpu": "250m"}}},
            ],
            "containers": [
                {"name": "a", "resources": {"limits": {"nvidia.com/gpu": "1"}, "requests": {"cpu": "1"}}},
                {"name": "b", "resources": {"requests": {"cpu": "1500m", "memory": "1Gi"}}},
            ],
        }
    }
    # containers + sidecar = 2.75 cpu < init 4 cpu
    assert S.sum_requests([(tmpl, 1)]) == {"cpu": "4", "memory": "1Gi", "nvidia.com/gpu": "1"}
    assert S.sum_requests(
        [(tmpl, 2), ({"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}]}}, 3)]
    ) == {"cpu": "8300m", "memory": "2Gi", "nvidia.com/gpu": "2"}


# ---- validation rules (lws/api/validation.py) this feature relies on -----------------------------


@pytest.mark.parametrize(
    "scheduling,startup,annotations,message",
    [
        (
            {},
            "LeaderReady",
            {},
            "a gang containing the leader and workers is incompatible with startupPolicy LeaderReady",
        ),
        (
            {},
            "LeaderCreated",
            {L.EXCLUSIVE_TOPOLOGY: "zone"},
            "gang scheduling or workload topology constraints cannot be combined with exclusive topology in alpha",
        ),
        (
            {"schedulingPolicy": {"gang": {}}, "replica": {}},
            "LeaderCreated",
            {},
            "phase 1 requires exactly one active scheduling level, got [lws replica]",
        ),
    ],
)
def test_validation_rejects(scheduling, startup, annotations, message):
    with pytest.raises(SpecError) as err:
        LeaderWorkerSet.from_manifest(manifest(scheduling, startup=startup, annotations=annotations))
    assert message in str(err.value)


def test_validation_level_immutable():
    old = LeaderWorkerSet.from_manifest(manifest({}))
    new = LeaderWorkerSet.from_manifest(manifest({"replica": {"leader": {}, "worker": {}}}))
    with pytest.raises(SpecError) as err:
        new.validate(old)
    assert "cannot switch the active scheduling level after creation" in str(err.value)
