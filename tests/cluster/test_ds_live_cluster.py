"""LiveCluster for a DisaggregatedSet over real HTTP against kmock: one reconcile makes one LIST per
kind of the DisaggregatedSet scope (the LeaderWorkerSet kinds, selected by
``disaggregatedset.x-k8s.io/name=<ds>``) plus one for Nodes when a placement policy needs them —
the same count for 2 roles x 1 slice at rest as for 10 roles x 2 slices mid-rollout (2 revisions
per role and slice: 40 child LeaderWorkerSets). kmock ignores label selectors, so the client-side
check of the scope is what keeps a foreign DisaggregatedSet's objects out."""

from __future__ import annotations

import asyncio
import copy

import pytest

pytest.importorskip("kmock")

from kmock import ResourceInfo
from support.kmock_helpers import discovery_paths, kmock_client, object_requests

from pulumi_lws.cluster.live import LiveCluster
from pulumi_lws.cluster.resources import resource_classes
from pulumi_lws.core.contract.snapshot import EMPTY, Snapshot
from pulumi_lws.disaggregatedset import labels as DL
from pulumi_lws.disaggregatedset.observe import observe_children
from pulumi_lws.lws.observe import LWS_KINDS
from pulumi_lws.workloads import workload_for

NS = "serving"
DS = workload_for("DisaggregatedSet")
PLURALS = {
    "StatefulSet": "apps/v1/statefulsets",
    "Deployment": "apps/v1/deployments",
    "Service": "v1/services",
    "Pod": "v1/pods",
    "ControllerRevision": "apps/v1/controllerrevisions",
}


def manifest(roles: int, slices: int, image: str = "nginx:1", placement: bool = False) -> dict:
    def role(i: int) -> dict:
        return {
            "name": f"r{i}",
            "spec": {
                "replicas": 2,
                "leaderWorkerTemplate": {
                    "size": 2,
                    "workerTemplate": {"spec": {"containers": [{"name": "s", "image": image}]}},
                },
            },
        }

    spec: dict = {"roles": [role(i) for i in range(roles)], "slices": slices}
    if placement:
        spec["placementPolicy"] = {"type": "ExclusiveSlice", "topology": "topology.kubernetes.io/zone"}
    return {
        "apiVersion": DS.api_version,
        "kind": "DisaggregatedSet",
        "metadata": {"name": "pd", "namespace": NS},
        "spec": spec,
    }


def _pods(sts: dict) -> list[dict]:
    template = sts["spec"]["template"]
    name = sts["metadata"]["name"]
    return [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"{name}-{i}",
                "namespace": NS,
                "uid": f"uid-{name}-{i}",
                "labels": dict(template["metadata"]["labels"]),
            },
            "spec": copy.deepcopy(template["spec"]),
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
        }
        for i in range(sts["spec"]["replicas"])
    ]


def cluster_objects(roles: int, slices: int, *, revisions: int = 1, placement: bool = False) -> list[dict]:
    """What the cluster holds after the first reconcile of image ``nginx:1`` (every role at its
    target, pods Running and Ready), then — ``revisions=2`` — after the first reconcile of
    ``nginx:2`` on top of it (each role's new child created beside the old one)."""
    objs: dict[tuple[str, str], dict] = {}

    def add(manifests) -> None:
        for m in manifests:
            m = copy.deepcopy(dict(m))
            objs[(m["kind"], m["metadata"]["name"])] = m
            if m["kind"] == "StatefulSet":
                for pod in _pods(m):
                    objs[("Pod", pod["metadata"]["name"])] = pod

    add(DS.reconcile(DS.parse(manifest(roles, slices, placement=placement)), EMPTY).manifests)
    if revisions == 2:
        spec = DS.parse(manifest(roles, slices, "nginx:2", placement=placement))
        add(DS.reconcile(spec, Snapshot.of(list(objs.values()))).manifests)
    return list(objs.values())


def _seed(kmock, objects: list[dict]) -> None:
    for o in objects:
        kmock.objects[(PLURALS[o["kind"]], NS, o["metadata"]["name"])] = o
    kmock.objects[("v1/pods", NS, "other-0")] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "other-0", "namespace": NS, "labels": {DL.NAME: "other"}},
        "spec": {"containers": [{"name": "s", "image": "x"}]},
    }


def test_every_kind_the_disaggregatedset_scope_observes_has_a_resource_class():
    scope = DS.scope(DS.parse(manifest(2, 1)))
    assert scope.kinds == LWS_KINDS and scope.selector == {DL.NAME: "pd"} and not scope.nodes
    assert set(scope.kinds) <= set(resource_classes("kubernetes"))
    assert DS.scope(DS.parse(manifest(2, 1, placement=True))).nodes


async def _lists(kmock, roles: int, slices: int, *, revisions: int = 1, placement: bool = False):
    objects = cluster_objects(roles, slices, revisions=revisions, placement=placement)
    _seed(kmock, objects)
    image = "nginx:2" if revisions == 2 else "nginx:1"
    spec = DS.parse(manifest(roles, slices, image, placement=placement))
    live = LiveCluster(kmock_client(str(kmock.url)))
    before = len(list(kmock))
    snapshot = await asyncio.to_thread(live.observe, DS.scope(spec))
    requests = list(kmock)[before:]
    DS.reconcile(spec, snapshot)  # one reconcile = one observe
    assert len(snapshot.list("Pod")) == sum(o["kind"] == "Pod" for o in objects)
    assert snapshot.get("Pod", "other-0") is None  # another DisaggregatedSet's pod: filtered out
    children = observe_children(spec, snapshot)
    assert len(children) == roles * slices * revisions
    return requests, children


#: the kinds every cluster serves (always LISTed); PodGroup and Workload are LISTed only where
#: API discovery lists scheduling.k8s.io/v1beta1
ALWAYS = len(LWS_KINDS) - 2


def assert_selectors(requests) -> None:
    """Every kind selected by the DS name, except ControllerRevisions: by the LWS name label's
    existence (upstream's LWS controller labels an adopted child's revisions with only that), and
    without the worker StatefulSets' own history (``group-index``)."""
    selectors = sorted(r.params.get("labelSelector") for r in object_requests(requests))
    assert selectors == sorted(
        [f"{DL.NAME}=pd"] * (len(object_requests(requests)) - 1)
        + ["leaderworkerset.sigs.k8s.io/name,!leaderworkerset.sigs.k8s.io/group-index"]
    )


@pytest.mark.asyncio
async def test_list_calls_for_2_roles_x_1_slice(kmock):
    requests, _ = await _lists(kmock, 2, 1)
    assert len(object_requests(requests)) == ALWAYS == 5  # one LIST per served kind, no Nodes
    assert discovery_paths(requests) == ["/apis"]  # scheduling.k8s.io is not served: no LIST of it
    assert_selectors(requests)


@pytest.mark.asyncio
async def test_every_kind_is_listed_once_where_the_gang_apis_are_served(kmock):
    kmock.resources["scheduling.k8s.io/v1beta1/podgroups"] = ResourceInfo(kind="PodGroup", namespaced=True)
    kmock.resources["scheduling.k8s.io/v1beta1/workloads"] = ResourceInfo(kind="Workload", namespaced=True)
    requests, _ = await _lists(kmock, 2, 1)
    assert len(object_requests(requests)) == len(LWS_KINDS) == 7
    assert discovery_paths(requests) == ["/apis", "/apis/scheduling.k8s.io/v1beta1"]  # once for both kinds
    assert_selectors(requests)


@pytest.mark.asyncio
async def test_list_calls_do_not_grow_with_roles_slices_and_revisions(kmock):
    requests, children = await _lists(kmock, 10, 2, revisions=2)
    assert len({c.revision for c in children}) == 2 and len({c.name for c in children}) == 40
    assert len(object_requests(requests)) == ALWAYS  # 40 child LeaderWorkerSets, still one LIST per kind
    assert discovery_paths(requests) == ["/apis"]
    assert_selectors(requests)


@pytest.mark.asyncio
async def test_placement_adds_exactly_one_list_of_nodes(kmock):
    requests, _ = await _lists(kmock, 10, 2, revisions=2, placement=True)
    assert len(object_requests(requests)) == ALWAYS + 1
    assert [r.resource.plural for r in object_requests(requests)].count("nodes") == 1
