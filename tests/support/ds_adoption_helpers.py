"""A DisaggregatedSet fleet as the upstream DS + LWS controllers leave it, on the embedded cluster
(shared by the adoption and adoption-rollback e2e tests; the seeding is described in
tests/disaggregatedset/e2e/test_ds_adoption_e2e.py)."""

from __future__ import annotations

import copy
import hashlib
import json

from pulumi_lws.core.contract.driver import cycle
from pulumi_lws.core.k8s.manifests import merged
from pulumi_lws.disaggregatedset import names
from pulumi_lws.disaggregatedset.adoption import upstream_child_lws
from pulumi_lws.disaggregatedset.render import services
from pulumi_lws.disaggregatedset.workload import WORKLOAD as DS
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.revision import revision_data
from pulumi_lws.lws.workload import WORKLOAD as LWS
from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.sim.cluster.store import meta
from support.adoption_helpers import (
    UPSTREAM_STACK,
    Takeover,
    go_style_key,
    own_by_leader_pods,
    with_null_timestamps,
    without_ownership_labels,
)
from support.ds_helpers import (
    ds_manifest,
    role,
    with_image,
)

GRACE = {"terminationGracePeriodSeconds": 1}
OWNED_BY_CHILD = ("StatefulSet", "Deployment", "Service", "ControllerRevision")


def manifest(image: str = "img:1", identity: str | None = None) -> dict:
    roles = (
        role("prefill", 3, surge=1, unavailable=1, image=image, group_identity=identity),
        role("decode", 2, image=image, group_identity=identity),
    )
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
        return sorted(
            f"{o['kind']}/{meta(o)['name']}"
            for o in self.cluster.store.all()
            if o["kind"] not in ("DisaggregatedSet", "LeaderWorkerSet")
            and any(r.get("uid") in uids for r in meta(o).get("ownerReferences") or [])
        )

    def orphan_delete(self) -> None:
        for uid in self.crs():
            cr = self.cluster.store.by_uid(uid)
            self.cluster.store.delete(cr["kind"], meta(cr)["namespace"], meta(cr)["name"], propagation="Orphan")
        self.cluster.settle()


def owner(cr: dict) -> dict:
    return {
        "apiVersion": cr["apiVersion"],
        "kind": cr["kind"],
        "name": meta(cr)["name"],
        "uid": meta(cr)["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def upstream_ds_fleet(identity: str | None = None, seed: int = 3) -> DSFleet:
    doc = manifest(identity=identity)
    spec = DS.parse(doc)
    rev8 = upstream_rev8(spec)
    cluster = SimCluster(seed=seed)
    ds_cr = cluster.create(
        {
            "apiVersion": DS.api_version,
            "kind": DS.kind,
            "metadata": {"name": spec.name, "namespace": spec.namespace},
            "spec": copy.deepcopy(doc["spec"]),
        }
    )
    children, child_crs = [], {}
    for r in spec.roles:
        child = upstream_child_lws(spec, r.name, 0, rev8, r.replicas)
        cr = cluster.create(
            {
                "apiVersion": LWS.api_version,
                "kind": LWS.kind,
                "metadata": {
                    "name": child.name,
                    "namespace": spec.namespace,
                    "labels": dict(child.metadata.labels),
                    "ownerReferences": [owner(ds_cr)],
                },
                "spec": child.spec.to_wire(),
            }
        )
        data = revision_data(child)
        lwt = data["spec"]["leaderWorkerTemplate"]
        for k in ("leaderTemplate", "workerTemplate"):
            if lwt.get(k) is not None:
                lwt[k] = with_null_timestamps(lwt[k])
        key = go_style_key(data)
        cluster.create(
            {
                "apiVersion": "apps/v1",
                "kind": "ControllerRevision",
                "metadata": {
                    "name": f"{child.name}-{key}-1",
                    "namespace": spec.namespace,
                    "labels": {L.NAME: child.name, L.TEMPLATE_REVISION_HASH: key},
                    "ownerReferences": [owner(cr)],
                },
                "data": data,
                "revision": 1,
            }
        )
        children.append(child)
        child_crs[child.name] = cr
    cluster.kubelet.config.instant = True
    try:  # the LWS controller's reconciles of each child (labels merged onto its workloads, as upstream)
        for _ in range(60):
            done, manifests, dependencies, todo = True, list(services(spec, [rev8], range(spec.slices))), {}, []
            for child in children:  # one apply per round: the upstream stack holds every child's objects
                # observe + reconcile through the one cycle; the apply is batched below (one stack)
                result = cycle(LWS, child, LWS.options(), cluster).reconciled
                manifests += [
                    dict(
                        m,
                        metadata={
                            **m["metadata"],
                            "labels": merged(m["metadata"].get("labels"), child.metadata.labels),
                        },
                    )
                    if m["kind"] in ("StatefulSet", "Deployment")
                    else m
                    for m in result.manifests
                ]
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
    own_by_leader_pods(cluster)  # upstream's worker StatefulSets: dependents of their leader Pod
    without_ownership_labels(cluster)  # and none of pulumi-lws's labels
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
