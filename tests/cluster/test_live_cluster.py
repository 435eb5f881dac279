"""LiveCluster (lightkube) over real HTTP against kmock's in-memory Kubernetes API emulator.

The sync lightkube client runs in a worker thread (``asyncio.to_thread``) while kmock serves on
the test's event loop. kmock ignores label selectors and has no status-subresource semantics, so
the tests assert on the requests sent (selector, patch bodies, delete options) as well as on the
resulting objects.
"""

from __future__ import annotations

import asyncio
import json

import pytest

pytest.importorskip("kmock")

from support.kmock_helpers import kmock_client

from pulumi_lws.cluster.live import LiveCluster
from pulumi_lws.cluster.patches import condition_patch, ungate_patch
from pulumi_lws.core.contract.stage import Action
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.observe import lws_scope

NS = "serving"
LWS = "demo"
GROUPS = 50


def _meta(name: str, lws: str = LWS, **labels: str) -> dict:
    return {"name": name, "namespace": NS, "uid": f"uid-{name}", "labels": {L.NAME: lws, **labels}}


def _pod(name: str, lws: str = LWS, gates: list[str] | None = None) -> dict:
    spec: dict = {"containers": [{"name": "main", "image": "nginx"}]}
    if gates:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": _meta(name, lws),
        "spec": spec,
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }


def _sts(name: str, replicas: int) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": _meta(name),
        "spec": {
            "replicas": replicas,
            "serviceName": LWS,
            "selector": {"matchLabels": {L.NAME: LWS}},
            "template": {
                "metadata": {"labels": {L.NAME: LWS}},
                "spec": {"containers": [{"name": "main", "image": "nginx"}]},
            },
        },
        "status": {"replicas": replicas, "availableReplicas": replicas},
    }


def _seed(kmock) -> None:
    """A 50-group LWS (leader STS, 50 worker STS, 200 pods, Service, revisions) + a foreign pod."""
    kmock.objects[("apps/v1/statefulsets", NS, LWS)] = _sts(LWS, GROUPS)
    for i in range(GROUPS):
        kmock.objects[("apps/v1/statefulsets", NS, f"{LWS}-{i}")] = _sts(f"{LWS}-{i}", 3)
        for w in range(4):
            name = f"{LWS}-{i}" if w == 0 else f"{LWS}-{i}-{w}"
            kmock.objects[("v1/pods", NS, name)] = _pod(name)
    kmock.objects[("v1/pods", NS, "other-0")] = _pod("other-0", lws="other")
    kmock.objects[("v1/services", NS, LWS)] = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _meta(LWS),
        "spec": {"clusterIP": "None"},
    }
    for n, key in enumerate(["aaa", "bbb"], 1):
        kmock.objects[("apps/v1/controllerrevisions", NS, f"{LWS}-{key}-{n}")] = {
            "apiVersion": "apps/v1",
            "kind": "ControllerRevision",
            "revision": n,
            "data": {"spec": {}},
            "metadata": _meta(f"{LWS}-{key}-{n}", **{L.TEMPLATE_REVISION_HASH: key}),
        }
    kmock.resources["apps/v1/deployments"] = {}
    kmock.objects[("v1/nodes", None, "node-a")] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"}}
    # scheduling.k8s.io/v1beta1 PodGroup/Workload are not declared: the API is absent (404).


@pytest.mark.asyncio
async def test_observe_lists_each_kind_once_with_the_selector(kmock):
    _seed(kmock)
    live = LiveCluster(kmock_client(str(kmock.url)), now=lambda: 1000.0)
    snapshot = await asyncio.to_thread(live.observe, lws_scope(NS, LWS, nodes=True))

    requests = list(kmock)
    assert len(requests) <= 8, [str(r.url) for r in requests]
    lists = [r for r in requests if r.resource is not None and r.resource.plural != "nodes"]
    selectors = {r.resource.plural: r.params.get("labelSelector") for r in lists}
    # without the worker StatefulSets' own history (their templates carry the group index)
    assert selectors.pop("controllerrevisions") == f"{L.NAME}={LWS},!{L.GROUP_INDEX}"
    assert selectors and all(s == f"{L.NAME}={LWS}" for s in selectors.values())
    assert len(snapshot.list("StatefulSet")) == GROUPS + 1
    assert len(snapshot.list("Pod")) == GROUPS * 4  # the foreign pod is not ours
    assert snapshot.get("Pod", "other-0") is None
    assert snapshot.get("Service", LWS)["spec"]["clusterIP"] == "None"
    assert [cr["revision"] for cr in snapshot.list("ControllerRevision")] == [1, 2]
    assert snapshot.get("Node", "node-a") is not None
    assert snapshot.list("PodGroup") == [] and snapshot.list("Workload") == []
    assert snapshot.now == 1000.0
    pod = snapshot.get("Pod", f"{LWS}-7")
    assert pod["kind"] == "Pod" and pod["status"]["phase"] == "Running"


@pytest.mark.asyncio
async def test_observe_without_nodes_makes_no_node_call(kmock):
    _seed(kmock)
    live = LiveCluster(kmock_client(str(kmock.url)))
    await asyncio.to_thread(live.observe, lws_scope(NS, LWS))
    assert not [r for r in kmock if r.resource is not None and r.resource.plural == "nodes"]


@pytest.mark.asyncio
async def test_execute_sends_precise_patches(kmock):
    kmock.objects[("v1/pods", NS, "demo-1")] = _pod("demo-1", gates=["other.io/gate", L.GROUP_REPLACEMENT_GATE])
    kmock.objects[("v1/pods", NS, "demo-2")] = _pod("demo-2")
    kmock.objects[("apps/v1/statefulsets", NS, "demo-2")] = _sts("demo-2", 3)
    live = LiveCluster(kmock_client(str(kmock.url)), now=lambda: 0.0)
    actions = [
        Action("label", "Pod", "demo-1", {"labels": {"team": "a"}}, uid="uid-demo-1"),
        Action("annotate", "Pod", "demo-1", {"annotations": {L.GROUP_RESTART_COUNTS: "1"}}),
        Action("ungate", "Pod", "demo-1", {"gate": L.GROUP_REPLACEMENT_GATE}, uid="uid-demo-1"),
        Action("set-condition", "Pod", "demo-1", {"type": L.GROUP_READY_CONDITION, "status": "True"}),
        Action("delete", "StatefulSet", "demo-2", {"propagation": "Foreground"}, uid="uid-demo-2"),
        Action("delete", "Pod", "gone", uid="uid-gone"),
    ]
    lines = await asyncio.to_thread(live.execute, NS, actions)

    assert len(lines) == 6 and lines[-1].startswith("skipped")
    pod = kmock.objects[("v1/pods", NS, "demo-1")].raw
    assert pod["metadata"]["labels"]["team"] == "a" and pod["metadata"]["labels"][L.NAME] == LWS
    assert pod["metadata"]["annotations"] == {L.GROUP_RESTART_COUNTS: "1"}
    assert pod["spec"]["schedulingGates"] == [{"name": "other.io/gate"}]  # only our gate removed
    types = [c["type"] for c in pod["status"]["conditions"]]
    assert types == ["Ready", L.GROUP_READY_CONDITION]
    # read back over HTTP (`key in kmock.objects` is always False for string resource keys)
    from lightkube.resources.apps_v1 import StatefulSet

    from pulumi_lws.cluster.resilience import status_code

    with pytest.raises(Exception) as gone:
        await asyncio.to_thread(live.client.get, StatefulSet, "demo-2", namespace=NS)
    assert status_code(gone.value) == 404

    sent = {(r.method.value if hasattr(r.method, "value") else str(r.method), str(r.url.path)): r for r in kmock}
    status_patch = next(r for (m, p), r in sent.items() if p.endswith("/pods/demo-1/status"))
    assert status_patch.headers["Content-Type"] == "application/json-patch+json"
    delete = next(r for (m, p), r in sent.items() if p.endswith("/statefulsets/demo-2"))
    body = json.loads(delete.body)
    assert body["preconditions"] == {"uid": "uid-demo-2"} and body["propagationPolicy"] == "Foreground"


def test_ungate_patch_guards_the_index_and_uid():
    assert ungate_patch(1, "g", "u") == [
        {"op": "test", "path": "/metadata/uid", "value": "u"},
        {"op": "test", "path": "/spec/schedulingGates/1/name", "value": "g"},
        {"op": "remove", "path": "/spec/schedulingGates/1"},
    ]


def test_condition_patch_replaces_by_type_and_keeps_transition_time():
    old = [{"type": "Ready", "status": "True"}, {"type": "X", "status": "True", "lastTransitionTime": "t0"}]
    ops = condition_patch(old, {"type": "X", "status": "True", "lastTransitionTime": "t1"})
    assert ops[0] == {"op": "test", "path": "/status/conditions/1/type", "value": "X"}
    assert ops[1]["value"]["lastTransitionTime"] == "t0"
    assert condition_patch(None, {"type": "X", "status": "False"})[0]["path"] == "/status/conditions"


@pytest.mark.asyncio
async def test_finalize_adds_and_removes_with_a_guarded_json_patch(kmock):
    from pulumi_lws.lws.rollout.failure.retention import RETAIN_FINALIZER

    kmock.objects[("v1/pods", NS, "demo-3")] = _pod("demo-3")
    kmock.objects[("v1/pods", NS, "demo-4")] = {
        **_pod("demo-4"),
        "metadata": {**_meta("demo-4"), "finalizers": ["other.io/keep", RETAIN_FINALIZER]},
    }
    live = LiveCluster(kmock_client(str(kmock.url)), now=lambda: 0.0)
    lines = await asyncio.to_thread(
        live.execute,
        NS,
        [
            Action("finalize", "Pod", "demo-3", {"add": [RETAIN_FINALIZER]}, uid="uid-demo-3"),
            Action("finalize", "Pod", "demo-4", {"remove": [RETAIN_FINALIZER]}, uid="uid-demo-4"),
            Action("finalize", "Pod", "demo-4", {"remove": ["absent.io/x"]}, uid="uid-demo-4"),
        ],
    )
    assert lines[0].startswith("finalize Pod/demo-3") and lines[2].endswith("unchanged")
    assert kmock.objects[("v1/pods", NS, "demo-3")].raw["metadata"]["finalizers"] == [RETAIN_FINALIZER]
    assert kmock.objects[("v1/pods", NS, "demo-4")].raw["metadata"]["finalizers"] == ["other.io/keep"]

    patches = [r for r in kmock if str(getattr(r.method, "value", r.method)).upper() == "PATCH"]
    assert len(patches) == 2 and all(r.headers["Content-Type"] == "application/json-patch+json" for r in patches)
    assert json.loads(patches[0].body) == [
        {"op": "test", "path": "/metadata/uid", "value": "uid-demo-3"},
        {"op": "add", "path": "/metadata/finalizers", "value": [RETAIN_FINALIZER]},
    ]
    assert json.loads(patches[1].body) == [
        {"op": "test", "path": "/metadata/uid", "value": "uid-demo-4"},
        {"op": "test", "path": "/metadata/finalizers/1", "value": RETAIN_FINALIZER},
        {"op": "remove", "path": "/metadata/finalizers/1"},
    ]


def test_finalizer_patch_appends_to_an_existing_list_and_removes_highest_index_first():
    from pulumi_lws.cluster.patches import finalizer_patch

    assert finalizer_patch(["a"], add=["b", "a"]) == [{"op": "add", "path": "/metadata/finalizers/-", "value": "b"}]
    assert finalizer_patch(["x", "y", "x"], remove=["x"], uid="u") == [
        {"op": "test", "path": "/metadata/uid", "value": "u"},
        {"op": "test", "path": "/metadata/finalizers/2", "value": "x"},
        {"op": "remove", "path": "/metadata/finalizers/2"},
        {"op": "test", "path": "/metadata/finalizers/0", "value": "x"},
        {"op": "remove", "path": "/metadata/finalizers/0"},
    ]
    assert finalizer_patch(None, remove=["x"]) == []
