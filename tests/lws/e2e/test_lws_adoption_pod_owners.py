"""Adopting an Ordinal fleet upstream LWS created: its worker StatefulSets are controller
dependents of their leader Pods (upstream's pod controller, ``blockOwnerDeletion``), so the
garbage collector deletes a group's workers whenever its leader pod is recreated. pulumi-kubernetes
diffs against its state, not the cluster: nothing would declare them back until ``pulumi refresh``.
The adopting reconcile drops those references first (uid-guarded ``disown``) and holds a moving
stage until they are gone (``core.features.adoption``).

The simulator's garbage collector honours ownerReferences to Pods, but its applier diffs against
the cluster and would recreate a collected StatefulSet at the next apply; so these tests follow
the worker StatefulSets' uids: one collected and recreated has a new uid."""

from __future__ import annotations

import pytest
from support.adoption_helpers import orphan_delete

# the fleet and manifest of the adoption tests
from test_lws_adoption import fleet, manifest

from pulumi_lws.core.features.adoption import POD_OWNER_REASON, POD_OWNERS_HELD
from pulumi_lws.core.k8s import keys as K
from pulumi_lws.lws.revision import revision_key
from pulumi_lws.sim.cluster.store import meta

WORKERS = ("web-0", "web-1", "web-2")


def worker_uids(f) -> dict[str, str]:
    return {n: meta(s)["uid"] for n in WORKERS if (s := f.cluster.get("StatefulSet", n)) is not None}


def pod_refs(f, name: str) -> list[str]:
    return [r["kind"] for r in meta(f.cluster.get("StatefulSet", name)).get("ownerReferences") or []]


def recreate_leader(f, name: str) -> None:
    """A leader pod recreated (a group restart: uid-guarded foreground delete; its StatefulSet makes a new one)."""
    pod = f.cluster.get("Pod", name)
    f.cluster.store.delete("Pod", "default", name, propagation="Foreground", uid=meta(pod)["uid"])
    for _ in range(10):
        f.cluster.step(f.cluster.clock.now + 1.0)


def test_upstream_worker_statefulsets_are_collected_with_their_leader_pod():
    """What the simulator shows without adoption: the leader pod goes, its workers' StatefulSet with it."""
    f = fleet("Ordinal")
    orphan_delete(f)
    assert pod_refs(f, "web-1") == ["Pod"]
    recreate_leader(f, "web-1")
    assert f.cluster.get("Pod", "web-1") is not None  # the leader StatefulSet made a new leader
    assert f.cluster.get("StatefulSet", "web-1") is None  # the garbage collector took the workers


def test_adoption_drops_the_leader_pod_owner_so_a_recreated_leader_keeps_its_workers():
    f = fleet("Ordinal")
    orphan_delete(f)
    result, applied, _ = f.up()
    assert result.stage.complete and result.stage.blocker is None  # nothing to hold: nothing moves
    disowned = [a for a in result.stage.actions if a.reason == POD_OWNER_REASON]
    assert [a.name for a in disowned] == list(WORKERS) and not applied.errors
    assert all(pod_refs(f, n) == [] for n in WORKERS)  # no worker StatefulSet names its leader pod
    uids = worker_uids(f)
    leader = meta(f.cluster.get("Pod", "web-1"))["uid"]
    recreate_leader(f, "web-1")
    assert meta(f.cluster.get("Pod", "web-1"))["uid"] != leader  # recreated ...
    assert worker_uids(f) == uids  # ... and its workers' StatefulSet was not collected
    again, _, _ = f.up()
    assert not [a for a in again.stage.actions if a.reason == POD_OWNER_REASON]


def test_a_template_change_at_adoption_waits_until_the_leader_pod_owners_are_gone():
    f = fleet("Ordinal")
    orphan_delete(f)
    uids, pods = worker_uids(f), f.pods()
    f.manifest = manifest("Ordinal", image="nginx:1.28")  # adopted and changed in the same pulumi up
    first, applied, _ = f.up()
    assert first.stage.blocker is not None and first.stage.blocker.code == POD_OWNERS_HELD
    assert [a.name for a in first.stage.actions if a.reason == POD_OWNER_REASON] == list(WORKERS)
    assert not applied.created and not applied.replaced and not applied.deleted  # held: nothing moves
    assert f.cluster.get("StatefulSet", "web")["spec"]["updateStrategy"]["rollingUpdate"]["partition"] == 0
    f.cluster.step(f.cluster.clock.now + 5)
    assert f.pods() == pods and all(pod_refs(f, n) == [] for n in WORKERS)
    for _ in range(200):
        result, applied, _ = f.up()
        assert not applied.errors
        lost = [k for k in f.cluster.applier.state["adopted"] if f.cluster.store.get(*k) is None]
        assert not lost, lost  # nothing the stack's state holds was collected
        assert worker_uids(f) == uids  # updated in place, never collected and recreated
        if (
            result.stage.complete
            and result.stage.blocker is None
            and result.stage.target_revision == revision_key(f.spec)
        ):
            break
        f.cluster.step(f.cluster.clock.now + 1.0)
    images = {c["image"] for p in f.cluster.list("Pod", "default") for c in p["spec"]["containers"]}
    assert images == {"nginx:1.28"}


def test_regression_without_the_disowns_a_rollout_loses_the_workers_to_the_collector(monkeypatch):
    """Take the disowns away: the rollout recreates leaders and the collector takes their workers
    (the simulator's applier then creates them again — what pulumi-kubernetes would not do)."""
    monkeypatch.setattr("pulumi_lws.lws.reconcile.pod_owner_actions", lambda objects: ())
    f = fleet("Ordinal")
    orphan_delete(f)
    uids = worker_uids(f)
    f.manifest = manifest("Ordinal", image="nginx:1.28")
    f.converge()
    assert worker_uids(f) != uids


def test_hash_fleets_keep_the_references_they_declare():
    f = fleet("Hash")
    orphan_delete(f)
    result, _, _ = f.up()
    assert not [a for a in result.stage.actions if a.reason == POD_OWNER_REASON]
    workers = [s for s in f.cluster.list("StatefulSet", "default")]
    assert workers and all(pod_refs(f, meta(s)["name"]) == ["Pod"] for s in workers)


@pytest.mark.parametrize("identity", ["Ordinal", "Hash"])
def test_the_adopting_reconcile_forces_its_apply_over_upstreams_field_manager(identity):
    """``pulumi.com/patchForce`` on every declared object the adopting reconcile finds (no
    ownership label, upstream owners); objects it creates and later reconciles' objects (owned by
    pulumi-lws alone: the simulator keeps no managedFields) are applied without force."""
    f = fleet(identity)
    orphan_delete(f)
    existing = {
        (o["kind"], meta(o)["name"])
        for k in ("StatefulSet", "Deployment", "Service", "ControllerRevision")
        for o in f.cluster.list(k, "default")
    }
    first, _, _ = f.up()
    forced = {
        (m["kind"], m["metadata"]["name"])
        for m in first.manifests
        if (m["metadata"].get("annotations") or {}).get(K.PATCH_FORCE) == "true"
    }
    declared = {(m["kind"], m["metadata"]["name"]) for m in first.manifests}
    assert forced == declared & existing and forced
    second, _, _ = f.up()
    assert not [m for m in second.manifests if (m["metadata"].get("annotations") or {}).get(K.PATCH_FORCE)]
