"""The live actuator's issue-14 verbs over real HTTP against kmock: Events created then bumped
(count + 1, one object), the CRD check of controller mode (GET the CRD: present / 404), and
``disown`` removing only the upstream ownerReference with a uid-guarded JSON patch."""

from __future__ import annotations

import asyncio
import json

import pytest

pytest.importorskip("kmock")

from support.kmock_helpers import kmock_client

from pulumi_lws.cluster.live import LiveCluster
from pulumi_lws.cluster.patches import disown_patch
from pulumi_lws.core.contract.stage import Action, Stage
from pulumi_lws.core.features.events import WorkloadRef, derive_events, report_events

NS = "serving"
REF = WorkloadRef("LeaderWorkerSet", "leaderworkerset.x-k8s.io/v1", NS, "web")
CRDS = "apiextensions.k8s.io/v1/customresourcedefinitions"


def stage() -> Stage:
    return Stage(
        policy="lws/ordinal",
        target_revision="r2",
        replicas=1,
        partition=0,
        group_revisions={"0": "r2"},
        actions=(Action("ungate", "Pod", "web-0", {"gate": "g"}, uid="u0"),),
    )


@pytest.mark.asyncio
async def test_events_are_created_then_bumped_not_duplicated(kmock):
    kmock.resources["v1/events"] = {}
    live = LiveCluster(kmock_client(str(kmock.url)), now=lambda: 1000.0)
    first = await asyncio.to_thread(report_events, live, REF, stage(), {"ungate": "GroupReplacementAdmitted"})
    assert first and all(line.endswith("recorded") for line in first)
    events = [o.raw for k, o in kmock.objects.items() if k[0] == "v1/events"]
    [admitted] = [e for e in events if e["reason"] == "GroupReplacementAdmitted"]
    assert admitted["involvedObject"] == {"kind": "Pod", "namespace": NS, "name": "web-0", "uid": "u0"}
    assert admitted["metadata"]["labels"]["pulumi-lws.io/workload-name"] == "web"

    live2 = LiveCluster(kmock_client(str(kmock.url)), now=lambda: 1060.0)
    events_again = derive_events(
        REF,
        stage(),
        await asyncio.to_thread(live2.list_events, NS, REF.selector()),
        {"ungate": "GroupReplacementAdmitted"},
    )
    second = await asyncio.to_thread(live2.record_events, NS, events_again)
    assert second == ["event GroupReplacementAdmitted Pod/web-0: count 2"]  # one object, count 2
    after = [o.raw for k, o in kmock.objects.items() if k[0] == "v1/events"]
    assert len(after) == len(events)
    bumped = next(e for e in after if e["reason"] == "GroupReplacementAdmitted")
    assert bumped["count"] == 2 and bumped["lastTimestamp"] == "1970-01-01T00:17:40Z"


@pytest.mark.asyncio
async def test_the_crd_check_of_controller_mode(kmock):
    kmock.resources[CRDS] = {}
    kmock.objects[(CRDS, None, "leaderworkersets.leaderworkerset.x-k8s.io")] = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "leaderworkersets.leaderworkerset.x-k8s.io"},
        "spec": {
            "group": "leaderworkerset.x-k8s.io",
            "scope": "Namespaced",
            "versions": [],
            "names": {"kind": "LeaderWorkerSet", "plural": "leaderworkersets"},
        },
    }
    live = LiveCluster(kmock_client(str(kmock.url)))
    assert await asyncio.to_thread(live.serves_crd, "leaderworkersets.leaderworkerset.x-k8s.io") is True
    assert await asyncio.to_thread(live.serves_crd, "modelservings.workload.serving.volcano.sh") is False


@pytest.mark.asyncio
async def test_disown_removes_only_the_upstream_owner(kmock):
    refs = [
        {"apiVersion": "v1", "kind": "Pod", "name": "leader", "uid": "pod-1"},
        {
            "apiVersion": "leaderworkerset.x-k8s.io/v1",
            "kind": "LeaderWorkerSet",
            "name": "web",
            "uid": "cr-1",
            "controller": True,
        },
    ]
    kmock.objects[("apps/v1/statefulsets", NS, "web-0")] = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web-0", "namespace": NS, "uid": "sts-1", "ownerReferences": refs},
        "spec": {
            "serviceName": "web",
            "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}},
        },
    }
    live = LiveCluster(kmock_client(str(kmock.url)))
    [line] = await asyncio.to_thread(
        live.execute, NS, [Action("disown", "StatefulSet", "web-0", {"owners": ["cr-1"]}, uid="sts-1")]
    )
    assert "removed 1" in line
    patch = next(r for r in kmock if r.method.value == "PATCH")
    assert json.loads(patch.body) == disown_patch(refs, ["cr-1"], "sts-1")
    assert kmock.objects[("apps/v1/statefulsets", NS, "web-0")].raw["metadata"]["ownerReferences"] == refs[:1]


def test_disown_patch_guards_uid_and_index():
    refs = [{"uid": "a"}, {"uid": "b"}, {"uid": "c"}]
    assert disown_patch(refs, ["a", "c"], "me") == [
        {"op": "test", "path": "/metadata/uid", "value": "me"},
        {"op": "test", "path": "/metadata/ownerReferences/2/uid", "value": "c"},
        {"op": "remove", "path": "/metadata/ownerReferences/2"},
        {"op": "test", "path": "/metadata/ownerReferences/0/uid", "value": "a"},
        {"op": "remove", "path": "/metadata/ownerReferences/0"},
    ]
    assert disown_patch(refs, ["z"]) == []
