"""Adoption of a DisaggregatedSet fleet the upstream DS + LWS controllers created (docs/modes.md,
"Adoption"): after ``kubectl delete ds,lws --cascade=orphan`` — or with the controllers gone and
the CRs still there — operator-free pulumi-lws takes the fleet over with zero pod restarts and no
pod template change (the observed DS revision whose children's content matches the spec is the
target under upstream's ``rev8``; each child keeps upstream's LWS template hash), drops the
ownerReferences to the DS and child LWS CRs, and an image change then rolls as a normal staged DS
rollout with the per-role budgets holding at every observed state.

The fleet is seeded as upstream leaves it: the DS CR, one child LeaderWorkerSet CR per role
(``<ds>-0-<rev8>-<role>``, owned by the DS, upstream's child shape: DS labels, no pulumi-lws env),
each child's ControllerRevision written with upstream's serialisation (labelled only with the LWS
name and hash), the child expanded by the project's LWS pipeline (its names and labels mirror the
LWS controller's; the StatefulSets carry the child's labels, as upstream's ``mergeMetadata``),
upstream's ownerReferences on what each CR owns, and the DS's ``<lws>-prv`` Services."""
from __future__ import annotations

import copy
import hashlib
import json

import pytest
from adoption_helpers import (
    ADOPTING_STACK,
    UPSTREAM_STACK,
    Takeover,
    go_style_key,
    with_null_timestamps,
)
from ds_helpers import (
    Bounds,
    converged_on,
    ds_manifest,
    lane_sequence,
    role,
    with_image,
)

from pulumi_lws.core.manifests import merged
from pulumi_lws.disaggregatedset import names
from pulumi_lws.disaggregatedset.adoption import upstream_child_lws
from pulumi_lws.disaggregatedset.render import services
from pulumi_lws.disaggregatedset.revision import compute_revision
from pulumi_lws.disaggregatedset.workload import WORKLOAD as DS
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.revision import revision_data
from pulumi_lws.lws.workload import WORKLOAD as LWS
from pulumi_lws.sim.cluster import SimCluster
from pulumi_lws.sim.store import meta

GRACE = {"terminationGracePeriodSeconds": 1}
OWNED_BY_CHILD = ("StatefulSet", "Deployment", "Service", "ControllerRevision")


def manifest(image: str = "img:1", identity: str | None = None) -> dict:
    roles = (role("prefill", 3, surge=1, unavailable=1, image=image, group_identity=identity),
             role("decode", 2, image=image, group_identity=identity))
    out = ds_manifest(*roles)
    for r in out["spec"]["roles"]:
        r["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"].update(GRACE)
    return with_image(out, image) if image != "img:1" else out


def upstream_rev8(spec) -> str:
    """ComputeRevision over Go's JSON (insertion order, ``creationTimestamp: null``): not pulumi-lws's key."""
    entries = []
    for r in spec.roles:
        tmpl = r.spec.leader_worker_template.to_wire()
        for k in ("leaderTemplate", "workerTemplate"):
            if tmpl.get(k) is not None:
                tmpl[k] = with_null_timestamps(tmpl[k])
        entries.append({"name": r.name, "template": tmpl})
    return hashlib.sha256(json.dumps(entries, separators=(",", ":")).encode()).hexdigest()[:8]


class DSFleet(Takeover):
    child_uids: dict[str, str]

    def crs(self) -> list[str]:
        return [self.cr_uid, *self.child_uids.values()]

    def upstream_owned(self) -> list[str]:
        uids = set(self.crs())
        return sorted(f"{o['kind']}/{meta(o)['name']}" for o in self.cluster.store.all() if o["kind"] not in
                      ("DisaggregatedSet", "LeaderWorkerSet")
                      and any(r.get("uid") in uids for r in meta(o).get("ownerReferences") or []))

    def orphan_delete(self) -> None:
        for uid in self.crs():
            cr = self.cluster.store.by_uid(uid)
            self.cluster.store.delete(cr["kind"], meta(cr)["namespace"], meta(cr)["name"], propagation="Orphan")
        self.cluster.settle()


def owner(cr: dict) -> dict:
    return {"apiVersion": cr["apiVersion"], "kind": cr["kind"], "name": meta(cr)["name"], "uid": meta(cr)["uid"],
            "controller": True, "blockOwnerDeletion": True}


def upstream_ds_fleet(identity: str | None = None, seed: int = 3) -> DSFleet:
    doc = manifest(identity=identity)
    spec = DS.parse(doc)
    rev8 = upstream_rev8(spec)
    cluster = SimCluster(seed=seed)
    ds_cr = cluster.create({"apiVersion": DS.api_version, "kind": DS.kind,
                            "metadata": {"name": spec.name, "namespace": spec.namespace}, "spec": copy.deepcopy(doc["spec"])})
    children, child_crs = [], {}
    for r in spec.roles:
        child = upstream_child_lws(spec, r.name, 0, rev8, r.replicas)
        cr = cluster.create({"apiVersion": LWS.api_version, "kind": LWS.kind,
                             "metadata": {"name": child.name, "namespace": spec.namespace,
                                          "labels": dict(child.metadata.labels), "ownerReferences": [owner(ds_cr)]},
                             "spec": child.spec.to_wire()})
        data = revision_data(child)
        lwt = data["spec"]["leaderWorkerTemplate"]
        for k in ("leaderTemplate", "workerTemplate"):
            if lwt.get(k) is not None:
                lwt[k] = with_null_timestamps(lwt[k])
        key = go_style_key(data)
        cluster.create({"apiVersion": "apps/v1", "kind": "ControllerRevision",
                        "metadata": {"name": f"{child.name}-{key}-1", "namespace": spec.namespace,
                                     "labels": {L.NAME: child.name, L.TEMPLATE_REVISION_HASH: key},
                                     "ownerReferences": [owner(cr)]},
                        "data": data, "revision": 1})
        children.append(child)
        child_crs[child.name] = cr
    cluster.kubelet.config.instant = True
    try:  # the LWS controller's reconciles of each child (labels merged onto its workloads, as upstream)
        for _ in range(60):
            done, manifests, dependencies, todo = True, list(services(spec, [rev8], range(spec.slices))), {}, []
            for child in children:  # one apply per round: the upstream stack holds every child's objects
                result = LWS.reconcile(child, cluster.observe(LWS.scope(child)), LWS.options())
                manifests += [dict(m, metadata={**m["metadata"], "labels": merged(m["metadata"].get("labels"),
                                                                                child.metadata.labels)})
                              if m["kind"] in ("StatefulSet", "Deployment") else m for m in result.manifests]
                dependencies.update(result.dependencies)
                todo += [a for a in result.stage.actions if a.verb != "disown"]
                done &= result.stage.complete and result.stage.blocker is None
            cluster.apply(manifests, stack_id=UPSTREAM_STACK, dependencies=dependencies)
            if todo:
                cluster.execute(spec.namespace, todo)
            if done:
                break
            cluster.step(cluster.clock.now + 1.0)
    finally:
        cluster.kubelet.config.instant = False
    for obj in list(cluster.store.all()):
        name = meta(obj).get("name", "")
        cr = child_crs.get((obj.get("metadata", {}).get("labels") or {}).get(L.NAME, ""))
        if obj["kind"] == "Service" and name.endswith(names.SERVICE_SUFFIX):
            cr = ds_cr
        if cr is not None and obj["kind"] in OWNED_BY_CHILD and not meta(obj).get("ownerReferences"):
            meta(obj)["ownerReferences"] = [owner(cr)]
            cluster.store._index_owners(obj)
            cluster.store.touch(obj)
    cluster.settle()
    fleet = DSFleet(cluster, DS, doc, meta(ds_cr)["uid"], rev8)
    fleet.child_uids = {n: meta(c)["uid"] for n, c in child_crs.items()}
    return fleet


def ds_pods(f: Takeover) -> dict:
    return {k: v for k, v in f.pods().items() if k.startswith(f"{f.spec.name}-")}


@pytest.mark.parametrize("identity", [None, "Hash"])
def test_orphaned_ds_fleet_is_adopted_without_restarts_then_rolls_within_budgets(identity):
    f = upstream_ds_fleet(identity)
    spec = f.spec
    assert f.upstream_key != compute_revision(spec)  # upstream's rev8, not ours
    assert all(k.startswith(f"{spec.name}-0-{f.upstream_key}-") for k in ds_pods(f))
    f.orphan_delete()
    pods, templates = ds_pods(f), f.templates()
    assert len(pods) == (3 + 2) * 2
    bounds = Bounds(spec=lambda: f.spec)
    for _ in range(4):  # several operator-free reconciles, from an empty stack
        result, applied, _ = f.up(ADOPTING_STACK)
        assert result.stage.complete and result.stage.blocker is None, result.stage.summary()
        assert result.stage.target_revision == f.upstream_key
        assert not applied.replaced and not applied.deleted
        f.cluster.step(f.cluster.clock.now + 10)
        assert ds_pods(f) == pods  # zero pod restarts, no pod recreated
        assert f.templates() == templates  # no pod template (label) change at adoption
    assert not [a for a in result.stage.actions if a.verb == "disown"]

    f.manifest = manifest(image="img:2", identity=identity)  # a normal staged rollout, budgets at every state
    bounds(f.cluster, f.cluster.clock.now)  # armed: every role ready at its target
    assert bounds.armed
    for _ in range(200):
        result, _, _ = f.up(ADOPTING_STACK)
        bounds(f.cluster, f.cluster.clock.now)
        if result.stage.complete and result.stage.blocker is None and not converged_on(f.cluster, f.spec):
            break
        f.cluster.step(f.cluster.clock.now + 1.0)
        bounds(f.cluster, f.cluster.clock.now)
    assert result.stage.target_revision == compute_revision(f.spec) != f.upstream_key
    assert not converged_on(f.cluster, f.spec), converged_on(f.cluster, f.spec)
    assert not bounds.violations, bounds.violations[:5]
    assert bounds.max_running[(0, "prefill")] <= 3 + 1 and bounds.min_ready[(0, "prefill")] >= 3 - 1
    assert bounds.max_running[(0, "decode")] <= 2 + 1 and bounds.min_ready[(0, "decode")] >= 2
    images = {c["image"] for p in f.cluster.list("Pod", "default") for c in p["spec"]["containers"]}
    assert images == {"img:2"}
    staged = lane_sequence(bounds, ["prefill", "decode"], compute_revision(f.spec))
    assert staged[0] == ((3, 2), (0, 0)) and staged[-1] == ((0, 0), (3, 2)) and len(staged) >= 4, staged


def test_ds_fleet_whose_crs_still_exist_is_disowned_from_ds_and_child_lws():
    f = upstream_ds_fleet()
    owned = f.upstream_owned()
    assert any(o.endswith(names.SERVICE_SUFFIX) for o in owned) and any(o.startswith("ControllerRevision/") for o in owned)
    # the child's own headless Service carries only the LWS name label upstream (like its
    # revisions), so the DS scope reads it once the first apply stamped the DS labels on it: the
    # second reconcile disowns it (docs/modes.md: wait for a preview without disown before
    # deleting the CRs without --cascade=orphan)
    first, _, _ = f.up(ADOPTING_STACK)
    second, _, _ = f.up(ADOPTING_STACK)
    disown = [a for r in (first, second) for a in r.stage.actions if a.verb == "disown"]
    assert sorted(f"{a.kind}/{a.name}" for a in disown) == owned and all(a.uid for a in disown)
    assert {f"{a.kind}/{a.name}" for a in second.stage.actions if a.verb == "disown"} == {
        f"Service/{c}" for c in f.child_uids}
    assert not f.upstream_owned()
    pods = ds_pods(f)
    for uid in f.crs():  # deleting the CRs no longer cascades into the adopted fleet
        cr = f.cluster.store.by_uid(uid)
        f.cluster.store.delete(cr["kind"], "default", meta(cr)["name"], propagation="Background")
    f.cluster.step(f.cluster.clock.now + 30)
    assert ds_pods(f) == pods
    again, _, _ = f.up(ADOPTING_STACK)
    assert not [a for a in again.stage.actions if a.verb == "disown"]
    assert again.stage.target_revision == f.upstream_key


def test_a_changed_template_is_not_adopted():
    """Content match needs every role's template equal: another image rolls to pulumi-lws's key."""
    f = upstream_ds_fleet()
    f.orphan_delete()
    f.manifest = manifest(image="img:2")
    result, _, _ = f.up(ADOPTING_STACK)
    assert result.stage.target_revision == compute_revision(f.spec) and not result.stage.complete


def test_foreign_revisions_read_by_the_existence_selector_form_no_child():
    """The scope reads every LWS-labelled ControllerRevision of the namespace (one LIST); those of
    another LeaderWorkerSet, or of another DisaggregatedSet's child, form no part of this one."""
    from pulumi_lws.disaggregatedset.observe import observe_children, split_by_child

    f = upstream_ds_fleet()
    f.orphan_delete()
    f.up(ADOPTING_STACK)
    for name, labels in (("web", {}), ("other-0-abcdef12-decode", {"disaggregatedset.x-k8s.io/name": "other"})):
        f.cluster.create({"apiVersion": "apps/v1", "kind": "ControllerRevision",
                          "metadata": {"name": f"{name}-x-1", "namespace": "default",
                                       "labels": {L.NAME: name, L.TEMPLATE_REVISION_HASH: "x", **labels}},
                          "data": {"spec": {"leaderWorkerTemplate": {}}}, "revision": 1})
    snapshot = f.cluster.observe(DS.scope(f.spec))
    assert snapshot.get("ControllerRevision", "web-x-1") is not None  # read: the LIST is by label existence
    assert set(split_by_child(snapshot)) == {f"pd-0-{f.upstream_key}-{r}" for r in ("prefill", "decode")}
    assert len(observe_children(f.spec, snapshot)) == 2
    result, applied, _ = f.up(ADOPTING_STACK)
    assert result.stage.complete and result.stage.target_revision == f.upstream_key and not applied.deleted
