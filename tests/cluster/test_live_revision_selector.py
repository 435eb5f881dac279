"""The ControllerRevision LIST of every API leaves out server-side the StatefulSets' own history
it does not read: the StatefulSet controller keeps up to ``revisionHistoryLimit`` revisions per
StatefulSet, each a whole pod template labelled like the template — the API's name label included —
so a name selector alone carries them all, per group. LeaderWorkerSet and DisaggregatedSet send
``!leaderworkerset.sigs.k8s.io/group-index`` (every worker StatefulSet's history; the leader
StatefulSet's is kept: the ordinal planner reads the LWS revision of its ``status.currentRevision``
there), ModelServing ``!controller.kubernetes.io/hash`` (all of it). Upstream LeaderWorkerSet
revisions (name + ``template-revision-hash``) are still read, so an upstream fleet is still adopted.

Over HTTP against kmock: kmock ignores label selectors, so the test checks the selector the
request carries, and that the observer's client-side check (the same selector) drops the history
kmock sends anyway."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("kmock")

from support.adoption_helpers import lws_upstream_revision, upstream_fleet
from support.ds_helpers import ds_manifest
from support.kmock_helpers import kmock_client
from support.ms_helpers import ms_manifest
from support.ms_helpers import role as ms_role

from pulumi_lws.cluster.live import LiveCluster
from pulumi_lws.core.contract.ports import ABSENT
from pulumi_lws.core.k8s.keys import STS_HISTORY_HASH
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.rollout.ordinal.groups import leader_current_revision
from pulumi_lws.workloads import workload_for

LWS = workload_for("LeaderWorkerSet")
RESOURCE = {
    "StatefulSet": "apps/v1/statefulsets",
    "Service": "v1/services",
    "Pod": "v1/pods",
    "ControllerRevision": "apps/v1/controllerrevisions",
}
MANIFEST = {
    "apiVersion": "leaderworkerset.x-k8s.io/v1",
    "kind": "LeaderWorkerSet",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {
        "replicas": 3,
        "rolloutStrategy": {"rollingUpdateConfiguration": {"maxUnavailable": 1, "maxSurge": 1}},
        "leaderWorkerTemplate": {
            "size": 2,
            "workerTemplate": {
                "spec": {"terminationGracePeriodSeconds": 1, "containers": [{"name": "c", "image": "nginx:1"}]}
            },
        },
    },
}


def _history(labels: dict) -> dict:
    """A StatefulSet's own history revision: its template's labels plus the controller's hash."""
    return {"kind": "ControllerRevision", "metadata": {"labels": {**labels, STS_HISTORY_HASH: "7d9f"}}}


def _revision(labels: dict) -> dict:
    return {"kind": "ControllerRevision", "metadata": {"labels": labels}}


WORKER = {L.NAME: "web", L.GROUP_INDEX: "3", L.GROUP_KEY: "k", L.TEMPLATE_REVISION_HASH: "abc"}
LEADER = {L.NAME: "web", L.WORKER_INDEX: "0", L.TEMPLATE_REVISION_HASH: "abc"}
MS_LABELS = {"modelserving.volcano.sh/name": "ms", "modelserving.volcano.sh/revision": "abc"}


@pytest.mark.parametrize(
    "kind, manifest, left_out, read",
    [
        # the worker StatefulSets' history is left out; the leader's and the LWS revisions are read
        (
            "LeaderWorkerSet",
            MANIFEST,
            [_history(WORKER)],
            [_history(LEADER), _revision({L.NAME: "web", L.TEMPLATE_REVISION_HASH: "abc"})],
        ),
        (
            "DisaggregatedSet",
            ds_manifest(),
            [_history({**WORKER, L.NAME: "pd-0-abc-prefill"})],
            [_history({**LEADER, L.NAME: "pd-0-abc-prefill"}), _revision({L.NAME: "pd-0-abc-prefill"})],
        ),
        # nothing of a ModelServing reads StatefulSet history: all of it is left out
        (
            "ModelServing",
            ms_manifest(replicas=2, roles=[ms_role("prefill", workers=1)]),
            [_history({**MS_LABELS, "modelserving.volcano.sh/role": "prefill"})],
            [_revision(MS_LABELS)],
        ),
    ],
)
def test_every_api_lists_its_revisions_without_the_history_it_does_not_read(kind, manifest, left_out, read):
    workload = workload_for(kind)
    scope = workload.scope(workload.parse(manifest))
    selector = scope.selector_for("ControllerRevision")
    assert [k for k, v in selector.items() if v is ABSENT] == [
        STS_HISTORY_HASH if kind == "ModelServing" else L.GROUP_INDEX
    ]
    assert not any(scope.selects(cr, "ControllerRevision") for cr in left_out)
    assert all(scope.selects(cr, "ControllerRevision") for cr in read)


@pytest.mark.asyncio
async def test_the_revision_list_carries_the_selector_and_upstream_revisions_are_still_adopted(kmock):
    fleet = upstream_fleet(
        LWS, MANIFEST, lws_upstream_revision, owned_kinds=("StatefulSet", "Service", "ControllerRevision")
    )
    store = fleet.cluster.store
    stored = [store.observed(o) for kind in RESOURCE for o in store.list(kind, "default")]
    history = [
        o for o in stored if o["kind"] == "ControllerRevision" and STS_HISTORY_HASH in o["metadata"].get("labels", {})
    ]
    workers = [o for o in history if L.GROUP_INDEX in o["metadata"]["labels"]]
    leader = [o for o in history if L.GROUP_INDEX not in o["metadata"]["labels"]]
    assert workers and leader and all(o["metadata"]["labels"][L.NAME] == "web" for o in history)
    for obj in stored:
        if obj["kind"] == "Pod":  # what the planner reads (the simulated kubelet's statuses lack imageID)
            obj = {**obj, "status": {k: obj["status"][k] for k in ("phase", "conditions") if k in obj["status"]}}
        kmock.objects[(RESOURCE[obj["kind"]], "default", obj["metadata"]["name"])] = obj
    kmock.resources["apps/v1/deployments"] = {}
    live = LiveCluster(kmock_client(str(kmock.url)))

    snapshot = await asyncio.to_thread(live.observe, LWS.scope(fleet.spec))

    revision_lists = [r for r in kmock if r.resource is not None and r.resource.plural == "controllerrevisions"]
    assert [r.params.get("labelSelector") for r in revision_lists] == [f"{L.NAME}=web,!{L.GROUP_INDEX}"]
    names = sorted(r["metadata"]["name"] for r in snapshot.list("ControllerRevision"))
    # upstream's revision and the leader StatefulSet's history; no worker StatefulSet's history
    assert names == sorted([f"web-{fleet.upstream_key}-1", *(o["metadata"]["name"] for o in leader)])
    stage = LWS.reconcile(fleet.spec, snapshot).stage
    assert stage.target_revision == fleet.upstream_key  # upstream's revision is the target: adopted
    assert stage.complete and {a.verb for a in stage.actions} == {"disown"}  # adoption only: no pod moves
    # the leader StatefulSet's current revision is readable: the planner keeps what it may recreate pods from
    leader_sts = snapshot.get("StatefulSet", "web")
    assert leader_current_revision(snapshot, leader_sts) == fleet.upstream_key
