"""Deleting N StatefulSets of a LeaderWorkerSet runs the component's delete hook N times, and the
hook observes the workload once (``components/lifecycle.RetainedRelease``): over HTTP against
kmock, N hook calls send the LISTs of one observe and release every retained pod; before, each
call re-LISTed the whole fleet (N x the kinds of the scope)."""

from __future__ import annotations

import asyncio
import copy

import pulumi
import pytest

pytest.importorskip("kmock")

from support.kmock_helpers import kmock_client, object_requests

from pulumi_lws.cluster.live import LiveCluster
from pulumi_lws.core.contract.snapshot import EMPTY
from pulumi_lws.core.features.retention import RETAIN_FINALIZER
from pulumi_lws.lws import labels as L
from pulumi_lws.workloads import workload_for

NS = "serving"
LWS = workload_for("LeaderWorkerSet")
MANIFEST = {
    "apiVersion": "leaderworkerset.x-k8s.io/v1",
    "kind": "LeaderWorkerSet",
    "metadata": {"name": "web", "namespace": NS},
    "spec": {
        "replicas": 4,
        "leaderWorkerTemplate": {"size": 2, "workerTemplate": {"spec": {"containers": [{"name": "c", "image": "x"}]}}},
    },
}
RESOURCE = {
    "StatefulSet": "apps/v1/statefulsets",
    "Service": "v1/services",
    "ControllerRevision": "apps/v1/controllerrevisions",
}


def seed(kmock, retained_groups: tuple[int, ...]) -> list[str]:
    """The first stage's objects, the pods of every group, the pods of ``retained_groups`` carrying
    the project's finalizer (an exhausted restart budget); returns the retained pods' names."""
    retained = []
    for m in LWS.reconcile(LWS.parse(copy.deepcopy(MANIFEST)), EMPTY).manifests:
        kmock.objects[(RESOURCE[m["kind"]], NS, m["metadata"]["name"])] = copy.deepcopy(dict(m))
    for group in range(4):
        for name in (f"web-{group}", f"web-{group}-1"):
            meta = {"name": name, "namespace": NS, "uid": f"uid-{name}", "labels": {L.NAME: "web"}}
            if group in retained_groups:
                meta["finalizers"] = [RETAIN_FINALIZER]
                retained.append(name)
            kmock.objects[("v1/pods", NS, name)] = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": meta,
                "spec": {"containers": [{"name": "c", "image": "x"}]},
            }
    return retained


def _lists(requests) -> list:
    return [r for r in object_requests(requests) if r.method.name == "GET" and r.name is None]


@pytest.mark.asyncio
@pytest.mark.parametrize("deleted", [1, 3])
async def test_n_deleted_statefulsets_cost_one_observe(kmock, deleted):
    from pulumi_lws.sim.driver.pulumi_engine import run_program

    retained = seed(kmock, retained_groups=(1, 2))
    live = LiveCluster(kmock_client(str(kmock.url)))
    captured = []

    def program() -> None:
        import pulumi_lws

        captured.append(pulumi_lws.LeaderWorkerSet("web", {"manifest": copy.deepcopy(MANIFEST)}))

    await asyncio.to_thread(run_program, program, live, live)
    hook = captured[0]._release_hook
    before = len(list(kmock))

    for _ in range(deleted):  # the engine's before_delete, once per StatefulSet it deletes
        await asyncio.to_thread(hook, pulumi.ResourceHookArgs(urn="", id="", name=hook.name, type=""))

    after = list(kmock)[before:]
    # one observe for the whole batch (before: deleted x 5): each kind of the scope the cluster serves, once
    assert sorted(r.resource.plural for r in _lists(after)) == [
        "controllerrevisions",
        "deployments",
        "pods",
        "services",
        "statefulsets",
    ]
    patched = sorted(r.name for r in object_requests(after) if r.method.name == "PATCH")
    assert patched == sorted(retained)  # every retained pod released once
    for name in retained:
        assert RETAIN_FINALIZER not in (kmock.objects[("v1/pods", NS, name)].raw["metadata"].get("finalizers") or [])
