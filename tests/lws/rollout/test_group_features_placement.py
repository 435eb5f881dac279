"""lws/rollout/placement.py: startupPolicy LeaderReady and exclusive topology, on literal snapshots,
and through ``reconcile`` (which worker StatefulSets are declared, pinned where, and why not)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import validate_manifest

from pulumi_lws.core.contract.snapshot import EMPTY, Snapshot
from pulumi_lws.core.contract.stage import Blocker, Stage
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.reconcile import reconcile
from pulumi_lws.lws.revision import build_catalog, revision_key
from pulumi_lws.lws.rollout import placement as P

ZONE = "topology.kubernetes.io/zone"


def make_lws(
    replicas: int = 2, size: int = 3, startup: str = "LeaderCreated", topology: str | None = None, image: str = "a"
) -> LeaderWorkerSet:
    ann = {L.EXCLUSIVE_TOPOLOGY: topology} if topology else {}
    return LeaderWorkerSet.from_manifest(
        {
            "apiVersion": "leaderworkerset.x-k8s.io/v1",
            "kind": "LeaderWorkerSet",
            "metadata": {"name": "lws", "annotations": ann},
            "spec": {
                "replicas": replicas,
                "startupPolicy": startup,
                "leaderWorkerTemplate": {
                    "size": size,
                    "workerTemplate": {"spec": {"containers": [{"name": "c", "image": image}]}},
                },
            },
        }
    )


def leader(
    i: int,
    key: str,
    *,
    ready: bool = True,
    node: str | None = "n1",
    created: str = "2026-01-01T00:00:10Z",
    deleting: bool = False,
    unschedulable: str | None = None,
) -> dict[str, Any]:
    conds = [{"type": "Ready", "status": "True" if ready else "False"}]
    if unschedulable:
        conds.append({"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": unschedulable})
    meta: dict[str, Any] = {
        "name": f"lws-{i}",
        "creationTimestamp": created,
        "labels": {L.NAME: "lws", L.WORKER_INDEX: "0", L.TEMPLATE_REVISION_HASH: key},
    }
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:01:00Z"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"nodeName": node} if node else {},
        "status": {"phase": "Running" if node else "Pending", "conditions": conds},
    }


def worker_sts(i: int, key: str, created: str = "2026-01-01T00:00:20Z", domain: str | None = None) -> dict[str, Any]:
    tmpl: dict[str, Any] = {"spec": {"nodeSelector": {ZONE: domain}}} if domain else {"spec": {}}
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {
            "name": f"lws-{i}",
            "creationTimestamp": created,
            "labels": {L.NAME: "lws", L.GROUP_INDEX: str(i), L.TEMPLATE_REVISION_HASH: key},
        },
        "spec": {"replicas": 2, "template": tmpl},
        "status": {},
    }


def node(name: str, zone: str | None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {ZONE: zone} if zone else {}}}


def stage_for(lws: LeaderWorkerSet, revisions: dict[str, str] | None = None) -> tuple[Stage, Any]:
    catalog = build_catalog(lws, [])
    key = catalog.target.key
    revs = revisions or {str(i): key for i in range(lws.replicas)}
    return Stage("lws/ordinal", key, lws.replicas, 0, revs), catalog


def place(lws: LeaderWorkerSet, objs: list[dict[str, Any]]) -> P.Placement:
    stage, catalog = stage_for(lws)
    return P.place_groups(lws, Snapshot.of(objs), stage, catalog)


# ---- helpers --------------------------------------------------------------------------------


def test_needs_nodes_only_for_group_exclusive_topology():
    assert P.needs_nodes(make_lws(topology=ZONE))
    assert not P.needs_nodes(make_lws())
    sub = make_lws()
    sub.metadata.annotations[L.SUBGROUP_EXCLUSIVE_TOPOLOGY] = ZONE
    assert not P.needs_nodes(sub)


def test_leader_created_without_topology_is_unrestricted():
    p = place(make_lws(), [])
    assert p == P.Placement() and p.worker_groups is None and p.blocker is None


# ---- LeaderReady ----------------------------------------------------------------------------


def test_leader_ready_waits_for_ready_leader():
    lws = make_lws(startup="LeaderReady")
    key = revision_key(lws)
    p = place(lws, [leader(0, key, ready=True), leader(1, key, ready=False)])
    assert p.worker_groups == frozenset({0})
    assert [h.group for h in p.holds] == [1] and "lws-1" in p.holds[0].message and p.holds[0].code == ""
    assert p.blocker is None


def test_leader_ready_keeps_existing_workers_when_leader_turns_unready():
    lws = make_lws(startup="LeaderReady")
    key = revision_key(lws)
    p = place(lws, [leader(0, key, ready=False), worker_sts(0, key), leader(1, key, ready=False)])
    assert p.worker_groups == frozenset({0})


def test_leader_ready_recreated_leader_waits_again():
    """Worker StatefulSet older than the leader pod: it belonged to the previous incarnation."""
    lws = make_lws(replicas=1, startup="LeaderReady")
    key = revision_key(lws)
    p = place(lws, [leader(0, key, ready=False, created="2026-01-01T00:05:00Z"), worker_sts(0, key)])
    assert p.worker_groups == frozenset()


def test_leader_ready_group_replaced_by_rollout_waits_for_new_leader():
    old = make_lws(replicas=1, startup="LeaderReady", image="old")
    new = make_lws(replicas=1, startup="LeaderReady", image="new")
    old_key, new_key = revision_key(old), revision_key(new)
    # old leader still Ready, old workers exist, group admitted to the new revision
    objs = [leader(0, old_key, ready=True), worker_sts(0, old_key)]
    p = place(new, objs)
    assert p.worker_groups == frozenset() and "being replaced" in p.holds[0].message
    # new leader created but not Ready yet
    assert place(new, [leader(0, new_key, ready=False, created="2026-01-01T00:09:00Z")]).worker_groups == frozenset()
    assert place(new, [leader(0, new_key, ready=True)]).worker_groups == frozenset({0})


def test_leader_ready_deleting_leader_never_releases_workers():
    lws = make_lws(replicas=1, startup="LeaderReady")
    key = revision_key(lws)
    assert place(lws, [leader(0, key, ready=True, deleting=True)]).worker_groups == frozenset()


def test_size_one_groups_are_not_held():
    lws = make_lws(size=1, startup="LeaderReady")
    assert place(lws, []).worker_groups == frozenset() and place(lws, []).holds == ()


# ---- exclusive topology -----------------------------------------------------------------------


def test_topology_pins_workers_to_leader_domain():
    lws = make_lws(topology=ZONE)
    key = revision_key(lws)
    p = place(lws, [leader(0, key, node="a1"), leader(1, key, node="b1"), node("a1", "a"), node("b1", "b")])
    assert p.worker_groups == frozenset({0, 1}) and dict(p.group_domains) == {0: "a", 1: "b"}


def test_topology_holds_workers_until_leader_scheduled():
    lws = make_lws(replicas=1, topology=ZONE)
    key = revision_key(lws)
    p = place(lws, [leader(0, key, node=None, ready=False)])
    assert p.worker_groups == frozenset() and p.blocker is None and "scheduled" in p.holds[0].message


def test_topology_label_missing_is_a_blocker_with_upstream_message():
    lws = make_lws(replicas=1, topology=ZONE)
    key = revision_key(lws)
    p = place(lws, [leader(0, key, node="bare"), node("bare", None)])
    assert p.worker_groups == frozenset()
    assert p.blocker == Blocker(
        P.LABEL_MISSING, f"node bare does not have topology label: {ZONE}", ("0",), P._REMEDIES[P.LABEL_MISSING]
    )


def test_topology_unschedulable_leader_is_reported():
    lws = make_lws(replicas=1, topology=ZONE)
    key = revision_key(lws)
    p = place(lws, [leader(0, key, node=None, ready=False, unschedulable="0/3 nodes are available")])
    assert p.blocker is not None and p.blocker.code == P.DOMAIN_UNAVAILABLE
    assert "0/3 nodes are available" in p.blocker.message


def test_topology_node_not_observed_keeps_existing_domain_or_blocks():
    lws = make_lws(replicas=1, topology=ZONE)
    key = revision_key(lws)
    kept = place(lws, [leader(0, key, node="a1"), worker_sts(0, key, domain="a")])
    assert kept.worker_groups == frozenset({0}) and dict(kept.group_domains) == {0: "a"}
    blocked = place(lws, [leader(0, key, node="a1")])
    assert blocked.blocker is not None and blocked.blocker.code == P.NODE_NOT_OBSERVED


def test_topology_with_leader_ready_needs_both():
    lws = make_lws(replicas=1, startup="LeaderReady", topology=ZONE)
    key = revision_key(lws)
    assert place(lws, [leader(0, key, node="a1", ready=False), node("a1", "a")]).worker_groups == frozenset()
    p = place(lws, [leader(0, key, node="a1", ready=True), node("a1", "a")])
    assert p.worker_groups == frozenset({0}) and dict(p.group_domains) == {0: "a"}


# ---- through reconcile ------------------------------------------------------------------------


def _sts_names(manifests) -> list[str]:
    return [m["metadata"]["name"] for m in manifests if m["kind"] == "StatefulSet"]


def test_reconcile_creation_stage_leader_ready_has_no_workers():
    r = reconcile(make_lws(startup="LeaderReady"), EMPTY)
    assert _sts_names(r.manifests) == ["lws"]


def test_reconcile_leader_created_unchanged():
    r = reconcile(make_lws(), EMPTY)
    assert _sts_names(r.manifests) == ["lws", "lws-0", "lws-1"]


def test_reconcile_pins_workers_and_reports_label_blocker():
    lws = make_lws(topology=ZONE)
    key = revision_key(lws)
    snap = Snapshot.of([leader(0, key, node="a1"), leader(1, key, node="bare"), node("a1", "a"), node("bare", None)])
    r = reconcile(lws, snap)
    workers = {
        m["metadata"]["name"]: m for m in r.manifests if m["kind"] == "StatefulSet" and m["metadata"]["name"] != "lws"
    }
    assert list(workers) == ["lws-0"]
    assert workers["lws-0"]["spec"]["template"]["spec"]["nodeSelector"] == {ZONE: "a"}
    assert r.stage.blocker is not None and r.stage.blocker.code == P.LABEL_MISSING
    assert r.stage.blocker.message == f"node bare does not have topology label: {ZONE}"
    assert not r.stage.complete
    for m in r.manifests:
        validate_manifest(m)


@pytest.mark.parametrize("code,replaced", [("waiting-for-groups", True), ("deadlock-717", False)])
def test_with_placement_replaces_only_generic_blockers(code, replaced):
    lws = make_lws(replicas=1, topology=ZONE)
    stage, _ = stage_for(lws)
    stage = Stage(**{**stage.__dict__, "blocker": Blocker(code, "x")})
    hold = P.Hold(0, "node n does not have topology label: z", P.LABEL_MISSING)
    out = P.with_placement(stage, P.Placement(frozenset(), {}, (hold,)))
    assert (out.blocker.code == P.LABEL_MISSING) is replaced
    assert hold.message in out.notes
