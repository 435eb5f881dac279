"""Hash-mode renderer: (LWS, Stage, RevisionCatalog) -> manifest dicts. Pure and deterministic.

Output order: ControllerRevisions (by number), the shared headless Service ``<lws>``, one
headless Service ``<lws>-<key8>`` per live leader (by id), the leader Deployment ``<lws>``,
worker StatefulSets ``<lws>-<key8>`` (by id).

Invariants
- The Deployment template is the TARGET revision's leader template, decorated exactly like the
  Ordinal leader (:func:`pulumi_lws.render.lws.leader_template`) plus what upstream's pod webhook
  adds to every Hash leader at admission: annotation ``group-identity: Hash``, the
  ``group-replacement`` scheduling gate, ``pod-deletion-cost: "-100"`` (every leader is born
  gated), ``spec.subdomain: <lws>`` and, for size > 1, the ``group-ready`` readiness gate.
- ``rollingUpdate.maxUnavailable``/``maxSurge`` are the LWS IntOrString values, unchanged.
- A worker StatefulSet exists only for groups the planner marked ``workers`` (admitted leaders),
  rendered from ``catalog.lws_at(lws, group revision)``, and is owned by its leader pod (so the
  garbage collector removes the workers as soon as the ReplicaSet deletes the leader).
- Every object has ``metadata.namespace`` and ``app.kubernetes.io/managed-by: pulumi-lws``;
  the Deployment and StatefulSets carry ``pulumi.com/skipAwait: "true"``.
"""
from __future__ import annotations

from typing import Any, Mapping

from pulumi_lws import labels as L
from pulumi_lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.render import names
from pulumi_lws.render.common import controller_revision, headless_service, metadata, workload_annotations
from pulumi_lws.render.lws import leader_template
from pulumi_lws.render.pod import (LWS_GROUP_SIZE, LWS_LEADER_ADDRESS, LWS_WORKER_INDEX, add_key_exclusive_affinity,
                                   decorated, field_env, group_annotations, merged, prepend_env, requests_tpus,
                                   static_worker_subgroup, value_env, worker_lws_env)
from pulumi_lws.revision import RevisionCatalog
from pulumi_lws.rollout.hash import group_host, leader_address
from pulumi_lws.rollout.hash_admission import GATED_DELETION_COST
from pulumi_lws.rollout.stage import GroupView, Stage

HASH = "Hash"


def render_hash(lws: LeaderWorkerSet, stage: Stage, catalog: RevisionCatalog, options: Any = None) -> list[dict[str, Any]]:
    """Every object the Hash stage declares (``options`` accepted for signature parity)."""
    live = sorted((g for g in stage.groups if is_live(g)), key=lambda g: g.id)
    out = controller_revisions(lws, stage, catalog)
    out.append(headless_service(names.shared_service(lws.name), lws.namespace, {L.NAME: lws.name}, {L.NAME: lws.name}))
    out += [leader_service(lws, g) for g in live]
    out.append(leader_deployment(lws, catalog))
    for g in live:
        if g.workers and g.revision:
            out.append(worker_statefulset(lws, catalog.lws_at(lws, g.revision), g))
    return out


def is_live(group: GroupView) -> bool:
    """A group with an observed leader that is neither deleting nor exhausted."""
    return bool(group.key and group.leader) and group.phase not in ("terminating", "exhausted")


def controller_revisions(lws: LeaderWorkerSet, stage: Stage, catalog: RevisionCatalog) -> list[dict[str, Any]]:
    """CRs for the target and every stored revision a group is on (unknown keys are skipped:
    their groups get no worker objects, see the planner's notes)."""
    keys = {catalog.target.key, *stage.group_revisions.values()}
    revs = sorted((r for r in (catalog.get(k) for k in keys) if r is not None), key=lambda r: (r.number, r.key))
    return [controller_revision(lws.name, lws.namespace, r) for r in revs]


# ---- leaders ------------------------------------------------------------------------------------

def hash_leader_env(size: int) -> list[dict[str, Any]]:
    """LWS env of a Hash leader (one template for all leaders): the address comes from the pod's
    ``leader-address`` annotation, which the planner sets before it ungates the pod."""
    return [
        field_env(LWS_LEADER_ADDRESS, f"metadata.annotations['{L.LEADER_ADDRESS}']"),
        value_env(LWS_GROUP_SIZE, str(size)),
        value_env(LWS_WORKER_INDEX, "0"),
    ]


def hash_leader_template(lws: LeaderWorkerSet, key: str) -> dict[str, Any]:
    """The Ordinal leader template at ``key`` plus the Hash admission-time additions."""
    template = leader_template(lws, key)
    template["metadata"]["annotations"] = merged(template["metadata"].get("annotations"),
                                                 {L.GROUP_IDENTITY: HASH, L.POD_DELETION_COST: GATED_DELETION_COST})
    spec = template["spec"]
    prepend_env(spec, hash_leader_env(lws.size))
    spec["subdomain"] = names.shared_service(lws.name)
    if lws.size > 1:
        _append_unique(spec, "readinessGates", {"conditionType": L.GROUP_READY_CONDITION})
    _append_unique(spec, "schedulingGates", {"name": L.GROUP_REPLACEMENT_GATE})
    return template


def _append_unique(spec: dict[str, Any], field: str, item: Mapping[str, str]) -> None:
    items = list(spec.get(field) or [])
    if dict(item) not in items:
        items.append(dict(item))
    spec[field] = items


def leader_deployment(lws: LeaderWorkerSet, catalog: RevisionCatalog) -> dict[str, Any]:
    """§2.2 leader Deployment ``<lws>``: replicas = spec.replicas, strategy passed through."""
    name, key = lws.name, catalog.target.key
    cfg = lws.spec.rollout_strategy.rolling_update_configuration
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": metadata(name, lws.namespace,
                             merged(lws.metadata.labels, {L.NAME: name, L.TEMPLATE_REVISION_HASH: key}),
                             workload_annotations(lws.metadata.annotations)),
        "spec": {
            "replicas": lws.replicas,
            "selector": {"matchLabels": {L.NAME: name, L.WORKER_INDEX: "0"}},
            "strategy": {"type": "RollingUpdate",
                         "rollingUpdate": {"maxUnavailable": cfg.max_unavailable, "maxSurge": cfg.max_surge}},
            "template": hash_leader_template(lws, key),
        },
    }


def _owner(group: GroupView) -> list[dict[str, Any]]:
    """The leader pod as controller owner (omitted when the observed pod has no uid)."""
    if not group.leader_uid:
        return []
    return [{"apiVersion": "v1", "kind": "Pod", "name": group.leader, "uid": group.leader_uid, "controller": True}]


def leader_service(lws: LeaderWorkerSet, group: GroupView) -> dict[str, Any]:
    """Headless Service ``<lws>-<key8>`` selecting only this group's leader: the DNS name
    ``<lws>-<key8>.<ns>`` workers use as ``LWS_LEADER_ADDRESS`` (published while not ready)."""
    assert group.key
    selector = {L.NAME: lws.name, L.WORKER_INDEX: "0", L.GROUP_KEY: group.key}
    svc = headless_service(group_host(lws.name, group.key), lws.namespace, {L.NAME: lws.name, L.GROUP_KEY: group.key}, selector)
    owners = _owner(group)
    if owners:
        svc["metadata"]["ownerReferences"] = owners
    return svc


# ---- workers ------------------------------------------------------------------------------------

def worker_template(live: LeaderWorkerSet, at: LeaderWorkerSet, group: GroupView) -> dict[str, Any]:
    """Worker pod template of ``group`` from revision ``at`` (``live`` supplies metadata
    annotations, which revisions don't cover)."""
    assert group.key and group.leader and group.revision
    lwt = at.spec.leader_worker_template
    sgp = lwt.sub_group_policy
    labels = {L.NAME: live.name, L.GROUP_INDEX: group.key, L.GROUP_KEY: group.key, L.TEMPLATE_REVISION_HASH: group.revision}
    annotations = group_annotations(at.size, live.metadata.annotations, sgp)
    annotations[L.LEADER_NAME] = group.leader
    if requests_tpus(lwt.leader_pod_template().get("spec") or {}):
        annotations[L.LEADER_REQUESTS_TPUS] = "true"
    sg_index = static_worker_subgroup(at.size, sgp.sub_group_size) if sgp and sgp.sub_group_size else None
    if sg_index is not None:
        labels[L.SUBGROUP_INDEX] = str(sg_index)
        labels[L.SUBGROUP_KEY] = names.subgroup_key(group.leader, sg_index)
    template = decorated(lwt.worker_template, labels, annotations)
    spec = template["spec"]
    prepend_env(spec, worker_lws_env(leader_address(live.name, live.namespace, group.key), at.size))
    topology = live.metadata.annotations.get(L.EXCLUSIVE_TOPOLOGY)
    if topology:  # with the leader (it carries the group-key label), apart from other groups
        add_key_exclusive_affinity(spec, L.GROUP_KEY, group.key, topology)
    sg_topology = live.metadata.annotations.get(L.SUBGROUP_EXCLUSIVE_TOPOLOGY)
    if sg_index is not None and sg_topology:
        add_key_exclusive_affinity(spec, L.SUBGROUP_KEY, labels[L.SUBGROUP_KEY], sg_topology)
    return template


def worker_statefulset(live: LeaderWorkerSet, at: LeaderWorkerSet, group: GroupView) -> dict[str, Any]:
    """§3.3 worker StatefulSet ``<lws>-<key8>`` on the leader's revision: size-1 replicas,
    ordinals from 1, Parallel, serviceName ``<lws>`` (workers resolve as
    ``<lws>-<key8>-<j>.<lws>.<ns>``)."""
    assert group.key and group.revision
    selector = {L.NAME: live.name, L.GROUP_INDEX: group.key, L.GROUP_KEY: group.key}
    meta = metadata(group_host(live.name, group.key), live.namespace,
                    merged(live.metadata.labels, {**selector, L.TEMPLATE_REVISION_HASH: group.revision}),
                    workload_annotations(live.metadata.annotations))
    owners = _owner(group)
    if owners:
        meta["ownerReferences"] = owners
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": meta,
        "spec": {
            "replicas": at.size - 1,
            "ordinals": {"start": 1},
            "serviceName": names.shared_service(live.name),
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": selector},
            "template": worker_template(live, at, group),
        },
    }
