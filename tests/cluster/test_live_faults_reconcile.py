"""The next reconcile converges after a fault, with the real planner in the loop: a LeaderWorkerSet
whose four pods lack the labels upstream's pod webhook sets gets four ``label`` actions from its
reconcile (observe over HTTP -> plan -> execute against kmock). A fault on the second one either
fails the update (the first applied and listed; the next reconcile plans only the three still
missing) or is settled by re-reading (the write landed; nothing left to plan)."""

from __future__ import annotations

import asyncio
import copy

import pytest

pytest.importorskip("kmock")

from support.kmock_helpers import CLIENT_TIMEOUT, HANG, Fault, FaultyEmulator, kmock_client

from pulumi_lws.cluster.live import LiveCluster
from pulumi_lws.cluster.resilience import RetryPolicy
from pulumi_lws.core.contract.ports import ActionError
from pulumi_lws.core.contract.snapshot import EMPTY
from pulumi_lws.workloads import workload_for

pytestmark = pytest.mark.kmock(cls=FaultyEmulator)

NS = "serving"
LWS = workload_for("LeaderWorkerSet")
SPEC = LWS.parse(
    {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "lws", "namespace": NS},
        "spec": {
            "replicas": 2,
            "leaderWorkerTemplate": {
                "size": 2,
                "workerTemplate": {"spec": {"containers": [{"name": "s", "image": "nginx:1"}]}},
            },
        },
    }
)
PLURALS = {
    "StatefulSet": "apps/v1/statefulsets",
    "Service": "v1/services",
    "ControllerRevision": "apps/v1/controllerrevisions",
}


def _pods(sts: dict) -> list[dict]:
    """The pods a StatefulSet controller creates: template labels/annotations, pod-index, owner."""
    template, name = sts["spec"]["template"], sts["metadata"]["name"]
    start = (sts["spec"].get("ordinals") or {}).get("start", 0)
    return [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"{name}-{i}",
                "namespace": NS,
                "uid": f"uid-pod-{name}-{i}",
                "labels": {**template["metadata"].get("labels", {}), "apps.kubernetes.io/pod-index": str(i)},
                "annotations": dict(template["metadata"].get("annotations") or {}),
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "StatefulSet",
                        "name": name,
                        "uid": sts["metadata"]["uid"],
                        "controller": True,
                    }
                ],
            },
            "spec": copy.deepcopy(template["spec"]),
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
        }
        for i in range(start, start + sts["spec"]["replicas"])
    ]


def seed(kmock) -> None:
    for m in LWS.reconcile(SPEC, EMPTY, LWS.options()).manifests:
        obj = copy.deepcopy(dict(m))
        obj["metadata"]["uid"] = f"uid-{obj['kind']}-{obj['metadata']['name']}"
        kmock.objects[(PLURALS[obj["kind"]], NS, obj["metadata"]["name"])] = obj
        if obj["kind"] == "StatefulSet":
            for pod in _pods(obj):
                kmock.objects[("v1/pods", NS, pod["metadata"]["name"])] = pod


def reconcile(cluster: LiveCluster):
    """One `pulumi up`'s observe -> plan -> execute; returns (planned actions, result lines)."""
    stage = LWS.reconcile(SPEC, cluster.observe(LWS.scope(SPEC)), LWS.options()).stage
    return stage.actions, (cluster.execute(NS, stage.actions) if stage.actions else [])


def _cluster(kmock) -> LiveCluster:
    return LiveCluster(
        kmock_client(str(kmock.url), timeout=CLIENT_TIMEOUT),
        now=lambda: 0.0,
        retry=RetryPolicy(sleep=lambda _: None, jitter=0.0),
    )


@pytest.mark.asyncio
async def test_after_a_failed_action_the_next_reconcile_plans_only_what_is_missing(kmock):
    seed(kmock)
    cluster = _cluster(kmock)
    planned = LWS.reconcile(
        SPEC, await asyncio.to_thread(cluster.observe, LWS.scope(SPEC)), LWS.options()
    ).stage.actions
    assert [(a.verb, a.name) for a in planned] == [
        ("label", "lws-0"),
        ("label", "lws-0-1"),
        ("label", "lws-1"),
        ("label", "lws-1-1"),
    ]
    kmock.inject(Fault("PATCH", f"/api/v1/namespaces/{NS}/pods/lws-0-1", 503, reason="ServiceUnavailable", times=None))

    with pytest.raises(ActionError) as raised:
        await asyncio.to_thread(reconcile, cluster)
    assert str(raised.value).startswith(
        f"label Pod/{NS}/lws-0-1 failed on cluster context 'kmock' at {cluster.server}: HTTP 503"
    )
    applied = raised.value.applied
    assert len(applied) == 1 and applied[0].startswith("label Pod/lws-0: ") and applied[0] in str(raised.value)

    kmock.faults.clear()
    actions, lines = await asyncio.to_thread(reconcile, cluster)
    assert [a.name for a in actions] == ["lws-0-1", "lws-1", "lws-1-1"]  # lws-0 is labelled: not planned again
    assert not any(line.startswith("skipped") for line in lines)
    assert (await asyncio.to_thread(reconcile, cluster))[0] == ()  # converged: nothing left to do


@pytest.mark.asyncio
async def test_a_write_that_landed_before_a_timeout_leaves_nothing_to_re_plan(kmock):
    seed(kmock)
    cluster = _cluster(kmock)
    kmock.inject(Fault("PATCH", f"/api/v1/namespaces/{NS}/pods/lws-0-1", delay=HANG, applied=True))

    actions, lines = await asyncio.to_thread(reconcile, cluster)

    assert len(actions) == 4 and "done (settled by re-reading after timed out" in lines[1]
    assert (await asyncio.to_thread(reconcile, cluster))[0] == ()
