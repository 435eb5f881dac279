"""A fleet shaped as the upstream controller leaves it, on the embedded cluster, and the
operator-free takeover of it (docs/modes.md, "Adoption").

:func:`upstream_fleet` builds what the upstream controller leaves behind: its custom resource,
a ControllerRevision written with *upstream's* serialisation (Go's field order, ``metadata:
{creationTimestamp: null}`` in the pod templates) and therefore keyed by a hash that is not
pulumi-lws's, the native objects rendered on that key (the project's expansion mirrors
upstream's names and labels), upstream's controller ownerReferences to the CR on every object the
CR owns and, Ordinal, to the leader Pod on each worker StatefulSet (:func:`own_by_leader_pods`),
and the controller's own field manager stack (``upstream``) that the adopting stack never sees. :class:`Takeover` then runs ``pulumi up`` as a fresh stack (no state: what
``pulumi import`` / the provider's upsert start from) and records what the pods went through.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pulumi_lws.core.contract.driver import cycle
from pulumi_lws.core.k8s import keys as K
from pulumi_lws.core.k8s.hashing import fnv32a, safe_encode
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.revision import revision_data
from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.sim.cluster.store import meta, owner_ref

UPSTREAM_STACK, ADOPTING_STACK = "upstream-controller", "adopted"


def go_style_key(data: Any) -> str:
    """A revision key the way upstream computes one: FNV over the JSON bytes *as serialised*
    (insertion order, nulls kept), not over pulumi-lws's canonical JSON."""
    return safe_encode(str(fnv32a(json.dumps(data, separators=(",", ":")).encode())))


def with_null_timestamps(template: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A pod template as Go's json.Marshal writes it (``metadata.creationTimestamp: null``)."""
    if template is None:
        return None
    out = copy.deepcopy(dict(template))
    out["metadata"] = {"creationTimestamp": None, **dict(out.get("metadata") or {})}
    return out


@dataclass
class Takeover:
    cluster: SimCluster
    workload: Any
    manifest: dict[str, Any]
    cr_uid: str
    upstream_key: str
    log: list[str] = field(default_factory=list)

    @property
    def spec(self) -> Any:
        return self.workload.parse(self.manifest)

    def up(self, stack: str = ADOPTING_STACK, *, actions: Callable[[Any], bool] = lambda a: True):
        def act(namespace: str, stage: Any) -> list[str]:
            todo = [a for a in stage.actions if actions(a)]
            return self.cluster.execute(namespace, todo) if todo else []

        done = cycle(
            self.workload,
            self.spec,
            self.workload.options(),
            self.cluster,
            act=act,
            nodes=bool(self.cluster.store.list("Node")),
            apply=lambda c: self.cluster.apply(
                c.reconciled.manifests, stack_id=stack, dependencies=c.reconciled.dependencies
            ),
        )
        result, applied, executed = done.reconciled, done.applied, list(done.executed)
        self.log.append(f"t={self.cluster.clock.now:g} {result.stage.summary()} applied={applied.lines()}")
        return result, applied, executed

    def converge(
        self, stack: str = ADOPTING_STACK, rounds: int = 120, *, actions: Callable[[Any], bool] = lambda a: True
    ):
        for _ in range(rounds):
            result, _, _ = self.up(stack, actions=actions)
            if (
                result.stage.complete
                and result.stage.blocker is None
                and not any(a.verb != "label" and actions(a) for a in result.stage.actions)
            ):
                return result
            self.cluster.step(self.cluster.clock.now + 1.0)
        raise AssertionError("did not converge:\n" + "\n".join(self.log[-6:]))

    def pods(self) -> dict[str, tuple[str, int]]:
        """Every pod of the namespace: name -> (uid, total container restarts)."""
        out = {}
        for pod in self.cluster.list("Pod", self.spec.namespace):
            restarts = sum(
                int(c.get("restartCount") or 0) for c in (pod.get("status") or {}).get("containerStatuses") or []
            )
            out[meta(pod)["name"]] = (meta(pod)["uid"], restarts)
        return out

    def templates(self) -> dict[str, Any]:
        """Pod template (labels included) of every StatefulSet and Deployment."""
        return {
            f"{kind}/{meta(o)['name']}": copy.deepcopy(o["spec"]["template"])
            for kind in ("StatefulSet", "Deployment")
            for o in self.cluster.list(kind, self.spec.namespace)
        }

    def upstream_owned(self) -> list[str]:
        """Objects that still carry an ownerReference to the upstream CR."""
        return sorted(
            f"{o['kind']}/{meta(o)['name']}"
            for o in self.cluster.store.all()
            if any(r.get("uid") == self.cr_uid for r in meta(o).get("ownerReferences") or [])
        )


def upstream_fleet(
    workload: Any,
    manifest: Mapping[str, Any],
    revision: Callable[[Any], tuple[str, dict[str, Any]]],
    *,
    owned_kinds: tuple[str, ...],
    seed: int = 1,
) -> Takeover:
    """The converged fleet the upstream controller leaves for ``manifest``.

    ``revision(spec)`` -> (upstream's revision key, the ControllerRevision object as upstream writes it). Every
    object of ``owned_kinds`` gets upstream's controller ownerReference to the CR (upstream sets
    it on what the CR owns directly: leader StatefulSet/Deployment, Services, revisions)."""
    cluster = SimCluster(seed=seed)
    doc = copy.deepcopy(dict(manifest))
    cr = cluster.create(
        {
            "apiVersion": workload.api_version,
            "kind": workload.kind,
            "metadata": {"name": doc["metadata"]["name"], "namespace": doc["metadata"].get("namespace", "default")},
            "spec": copy.deepcopy(doc["spec"]),
        }
    )
    uid = meta(cr)["uid"]
    owner = {
        "apiVersion": workload.api_version,
        "kind": workload.kind,
        "name": meta(cr)["name"],
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }
    spec = workload.parse(doc)
    key, revision_obj = revision(spec)
    revision_obj["metadata"]["ownerReferences"] = [dict(owner)]
    cluster.create(revision_obj)
    fleet = Takeover(cluster, workload, doc, uid, key)
    cluster.kubelet.config.instant = True
    try:  # the controller's own reconciles: no takeover actions (it owns what it made)
        fleet.converge(UPSTREAM_STACK, actions=lambda a: a.verb != "disown")
    finally:
        cluster.kubelet.config.instant = False
    own_by_leader_pods(cluster)
    without_ownership_labels(cluster)
    for obj in list(cluster.store.all()):
        if obj["kind"] in owned_kinds and not meta(obj).get("ownerReferences"):
            meta(obj)["ownerReferences"] = [dict(owner)]
            cluster.store._index_owners(obj)
            cluster.store.touch(obj)
    cluster.settle()
    return fleet


def without_ownership_labels(cluster: SimCluster) -> None:
    """Upstream's objects carry none of pulumi-lws's ownership labels (``pulumi-lws.io/managed``,
    ``app.kubernetes.io/managed-by: pulumi-lws``): the project's expansion, which builds the
    fleet, sets them; they come with the adopting apply."""
    for obj in list(cluster.store.all()):
        labels = meta(obj).get("labels") or {}
        if labels.get(K.OWNERSHIP) or labels.get(K.MANAGED_BY) == K.MANAGED_BY_VALUE:
            labels.pop(K.OWNERSHIP, None)
            if labels.get(K.MANAGED_BY) == K.MANAGED_BY_VALUE:
                labels.pop(K.MANAGED_BY)
            cluster.store.touch(obj)


def own_by_leader_pods(cluster: SimCluster) -> list[str]:
    """Upstream LWS's pod controller makes each Ordinal worker StatefulSet ``<lws>-<i>`` a
    controller dependent of its leader Pod of the same name (``blockOwnerDeletion``: it is
    garbage-collected with that pod). The project renders them without owners; this puts
    upstream's reference on every such StatefulSet (Hash ones already name their leader pod).
    Returns the StatefulSets it changed."""
    changed = []
    for sts in list(cluster.store.list("StatefulSet")):
        m = meta(sts)
        if L.GROUP_INDEX not in (m.get("labels") or {}) or m.get("ownerReferences"):
            continue
        leader = cluster.store.get("Pod", m["namespace"], m["name"])
        if leader is None:
            continue
        m["ownerReferences"] = [owner_ref(leader, controller=True, block=True)]
        cluster.store._index_owners(sts)
        cluster.store.touch(sts)
        changed.append(m["name"])
    return changed


def orphan_delete(fleet: Takeover) -> None:
    """``kubectl delete <cr> --cascade=orphan``: the CR goes, its dependents stay (ownerRefs dropped)."""
    cr = fleet.cluster.store.by_uid(fleet.cr_uid)
    fleet.cluster.store.delete(cr["kind"], meta(cr)["namespace"], meta(cr)["name"], propagation="Orphan")
    fleet.cluster.settle()


def lws_upstream_revision(spec: Any) -> tuple[str, dict[str, Any]]:
    """The ControllerRevision upstream LeaderWorkerSet writes: getPatch's data as Go serialises it, FNV of those bytes."""
    data = revision_data(spec)
    lwt = data["spec"]["leaderWorkerTemplate"]
    for key in ("leaderTemplate", "workerTemplate"):
        if lwt.get(key) is not None:
            lwt[key] = with_null_timestamps(lwt[key])
    key = go_style_key(data)
    return key, {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": f"{spec.name}-{key}-1",
            "namespace": spec.namespace,
            "labels": {L.NAME: spec.name, L.TEMPLATE_REVISION_HASH: key},
        },
        "data": data,
        "revision": 1,
    }
