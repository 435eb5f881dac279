"""observe_groups on literal snapshots: statuses, revisions, template hashes, deletion costs."""

from __future__ import annotations

import copy
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent / "render"))
from ms_render_fixtures import two_role, two_role_wire, with_role

from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.modelserving import labels as L
from pulumi_lws.modelserving.api import ModelServing
from pulumi_lws.modelserving.groups import CREATING, DELETING, RUNNING
from pulumi_lws.modelserving.observe import KINDS, modelserving_scope, observe_groups
from pulumi_lws.modelserving.render import (
    DeclaredGroup,
    declare_all,
    render_modelserving,
)
from pulumi_lws.modelserving.revision import (
    build_catalog,
    controller_revision,
    modelserving_revision,
    revision_data,
    role_template_hash,
)


def pods_of(sts, ready=True, cost=None):
    """The pods Kubernetes would create for a rendered StatefulSet."""
    start = (sts["spec"].get("ordinals") or {}).get("start", 0)
    out = []
    for i in range(start, start + sts["spec"]["replicas"]):
        name = f"{sts['metadata']['name']}-{i}"
        meta = {
            "name": name,
            "namespace": sts["metadata"]["namespace"],
            "labels": {**sts["spec"]["template"]["metadata"]["labels"], "statefulset.kubernetes.io/pod-name": name},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "StatefulSet",
                    "name": sts["metadata"]["name"],
                    "uid": f"uid-{sts['metadata']['name']}",
                    "controller": True,
                }
            ],
        }
        if cost is not None:
            meta["annotations"] = {"controller.kubernetes.io/pod-deletion-cost": cost}
        status = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
        out.append({"kind": "Pod", "metadata": meta, "status": status})
    return out


def cluster(objs, ready=lambda name: True, cost=None):
    out = [copy.deepcopy(o) for o in objs]
    for o in objs:
        if o["kind"] == "StatefulSet":
            out += pods_of(o, ready(o["metadata"]["name"]), cost)
    return out


def steady(ms):
    cat = build_catalog(ms)
    return render_modelserving(ms, declare_all(ms, cat), cat), cat


def test_scope():
    scope = modelserving_scope("serving", "llm")
    assert scope.namespace == "serving" and scope.selector == {L.NAME: "llm"} and scope.kinds == KINDS
    assert set(KINDS) == {"StatefulSet", "Pod", "Service", "ControllerRevision", "PodGroup"}


def test_all_ready_is_running():
    ms = two_role()
    objs, cat = steady(ms)
    groups = observe_groups(Snapshot.of(cluster(objs)), ms, cat)
    assert [(g.ordinal, g.revision, g.status) for g in groups] == [(0, cat.target, RUNNING), (1, cat.target, RUNNING)]
    roles = groups[0].roles
    assert [(r.role, r.ordinal, r.status) for r in roles] == [
        ("decode", 0, RUNNING),
        ("prefill", 0, RUNNING),
        ("prefill", 1, RUNNING),
    ]
    assert groups[0].role_replicas("prefill")[0].template_hash == role_template_hash(ms.roles[0])


def test_one_unready_worker_makes_role_and_group_creating():
    ms = two_role()
    objs, cat = steady(ms)
    snap = Snapshot.of(cluster(objs, ready=lambda n: n != "llm-1-prefill-1-w"))
    g0, g1 = observe_groups(snap, ms, cat)
    assert g0.status == RUNNING and g1.status == CREATING
    assert {r.id: r.status for r in g1.roles} == {"decode-0": RUNNING, "prefill-0": RUNNING, "prefill-1": CREATING}


def test_missing_worker_pod_or_missing_role_replica_is_creating():
    ms = two_role()
    objs, cat = steady(ms)
    snap = [o for o in cluster(objs) if o["metadata"]["name"] != "llm-0-prefill-0-w-2"]
    assert observe_groups(Snapshot.of(snap), ms, cat)[0].status == CREATING
    snap = [o for o in cluster(objs) if not o["metadata"]["name"].startswith("llm-0-decode-0")]
    g0 = observe_groups(Snapshot.of(snap), ms, cat)[0]
    assert g0.status == CREATING and {r.id for r in g0.roles} == {"prefill-0", "prefill-1"}


def test_deleting_group_and_deleting_role_replica():
    ms = two_role()
    objs, cat = steady(ms)
    # group 1: StatefulSets gone, pods left -> Deleting
    snap = [o for o in cluster(objs) if not (o["kind"] == "StatefulSet" and o["metadata"]["name"].startswith("llm-1-"))]
    g0, g1 = observe_groups(Snapshot.of(snap), ms, cat)
    assert g0.status == RUNNING and g1.status == DELETING and g1.revision == cat.target
    assert all(r.status == DELETING for r in g1.roles)
    # one role replica's StatefulSet has a deletionTimestamp: the replica is Deleting, the group is not
    snap = cluster(objs)
    for o in snap:
        if o["kind"] == "StatefulSet" and o["metadata"]["name"] == "llm-0-prefill-1":
            o["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    g0 = observe_groups(Snapshot.of(snap), ms, cat)[0]
    assert {r.id: r.status for r in g0.roles}["prefill-1"] == DELETING and g0.status == CREATING
    # the PodGroup is being deleted -> the group is Deleting
    snap = cluster(objs)
    for o in snap:
        if o["kind"] == "PodGroup" and o["metadata"]["name"] == "llm-0":
            o["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert observe_groups(Snapshot.of(snap), ms, cat)[0].status == DELETING


def test_deletion_cost():
    ms = two_role()
    objs, cat = steady(ms)
    groups = observe_groups(Snapshot.of(cluster(objs, cost="10")), ms, cat)
    assert groups[0].deletion_cost == 10 * (3 + 3 + 1)
    assert {r.id: r.deletion_cost for r in groups[0].roles} == {"prefill-0": 30, "prefill-1": 30, "decode-0": 10}
    assert observe_groups(Snapshot.of(cluster(objs, cost="x")), ms, cat)[0].deletion_cost == 0


def test_outdated_group_keeps_its_revision_and_shape():
    old = ModelServing.from_manifest(with_role(two_role_wire("vllm:1"), "prefill", workerReplicas=1))
    new = two_role("vllm:2")
    old_rev = modelserving_revision(old)
    cat = build_catalog(new, [controller_revision("llm", "serving", old_rev, revision_data(old)["data"])])
    objs = render_modelserving(new, [DeclaredGroup(0, old_rev), DeclaredGroup(1, cat.target)], cat)
    g0, g1 = observe_groups(Snapshot.of(cluster(objs)), new, cat)
    assert (g0.revision, g0.status) == (old_rev, RUNNING)  # 1 worker each, as its own revision says
    assert g0.role_replicas("prefill")[0].template_hash == role_template_hash(old.roles[0])
    assert (g1.revision, g1.status) == (cat.target, RUNNING)


def test_unknown_hash_and_foreign_objects():
    ms = two_role()
    objs, cat = steady(ms)
    snap = cluster(objs)
    for o in snap:
        o["metadata"]["labels"].pop(L.ROLE_TEMPLATE_HASH, None)
    snap.append(
        {
            "kind": "Pod",
            "metadata": {
                "name": "other-0-a-0-0",
                "labels": {L.NAME: "llm", L.GROUP_NAME: "other-0", L.ROLE: "a", L.ROLE_ID: "a-0"},
            },
        }
    )
    snap.append({"kind": "Pod", "metadata": {"name": "x", "labels": {L.NAME: "llm", L.GROUP_NAME: "llm-x"}}})
    groups = observe_groups(Snapshot.of(snap), ms, cat)
    assert [g.ordinal for g in groups] == [0, 1]
    assert {r.template_hash for g in groups for r in g.roles} == {""}
    assert all(g.status == RUNNING for g in groups)


def test_empty_snapshot():
    ms = two_role()
    assert observe_groups(Snapshot.of([]), ms, build_catalog(ms)) == ()
