"""Adoption takes field ownership (``core.features.adoption.with_field_ownership``): upstream's
controller applies with server-side apply as ``lws`` (force), so after adoption the fields it
wrote have two managers and the first apply changing one is a conflict unless forced. Every
declared object the snapshot shows still adopted gets ``pulumi.com/patchForce: "true"``:
without pulumi-lws's ownership label, with an upstream or Pod owner (Ordinal), or — what the live
observer reads in ``metadata.managedFields`` — with a field manager that is not Pulumi's,
pulumi-lws's or Kubernetes' own. Objects created by this apply and objects pulumi-lws owns alone
are applied as before."""

from __future__ import annotations

from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.core.contract.stage import Stage
from pulumi_lws.core.contract.workload import Reconciled
from pulumi_lws.core.features.adoption import foreign_field_managers, with_field_ownership
from pulumi_lws.core.k8s import keys as K
from pulumi_lws.lws.workload import WORKLOAD as LWS

OURS = {K.OWNERSHIP: K.OWNERSHIP_VALUE}


def obj(name: str, *managers: str, labels=OURS, owners=(), subresource: str | None = None) -> dict:
    meta: dict = {"name": name, "namespace": "ns", "labels": dict(labels), "uid": f"uid-{name}"}
    if managers:
        meta["managedFields"] = [
            {"manager": m, "operation": "Apply", **({"subresource": subresource} if subresource else {})}
            for m in managers
        ]
    if owners:
        meta["ownerReferences"] = list(owners)
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta, "spec": {}}


def declared(name: str, **annotations: str) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": "ns", "labels": dict(OURS), "annotations": dict(annotations)},
        "spec": {},
    }


def forced(result: Reconciled) -> list[str]:
    return sorted(
        m["metadata"]["name"]
        for m in result.manifests
        if (m["metadata"].get("annotations") or {}).get(K.PATCH_FORCE) == "true"
    )


def test_foreign_managers_are_neither_pulumis_nor_ours_nor_kubernetes():
    assert foreign_field_managers(obj("a", "pulumi-kubernetes-3f2a", "pulumi-lws", "kube-controller-manager")) == []
    assert foreign_field_managers(obj("a", "lws", "pulumi-kubernetes-3f2a")) == ["lws"]
    assert foreign_field_managers(obj("a", "manager", "kubectl-edit")) == ["manager", "kubectl-edit"]
    assert foreign_field_managers(obj("a", "lws", subresource="status")) == []  # status is never declared
    mine = declared("a", **{"pulumi.com/patchFieldManager": "platform"})
    assert foreign_field_managers(obj("a", "platform"), mine) == []  # the program's own chosen manager


def test_adopted_objects_are_forced_and_the_rest_left_alone():
    pod = {"apiVersion": "v1", "kind": "Pod", "name": "w-0", "uid": "p", "controller": True}
    cr = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet", "name": "w", "uid": "c"}
    snapshot = Snapshot.of(
        [
            obj("upstream-labels", "lws", labels={"leaderworkerset.sigs.k8s.io/name": "w"}),
            obj("lws-managed", "pulumi-kubernetes-1", "lws"),
            obj("pod-owned", "pulumi-kubernetes-1", owners=[pod]),
            obj("cr-owned", "pulumi-kubernetes-1", owners=[cr]),
            obj("ours-alone", "pulumi-kubernetes-1", "kube-controller-manager"),
            obj("no-fields"),
        ]
    )
    names = ["upstream-labels", "lws-managed", "pod-owned", "cr-owned", "ours-alone", "no-fields", "new"]
    result = Reconciled(
        Stage(policy="t", target_revision="r", replicas=1, partition=0, group_revisions={}),
        tuple(declared(n) for n in names),
    )
    out = with_field_ownership(result, snapshot, (LWS.upstream,))
    assert forced(out) == ["cr-owned", "lws-managed", "pod-owned", "upstream-labels"]
    assert with_field_ownership(result, Snapshot.of([obj("ours-alone", "pulumi-kubernetes-1")])) is result
    assert result.manifests[1]["metadata"]["annotations"] == {}  # the input is not changed
