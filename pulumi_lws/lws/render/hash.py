"""Hash-mode renderer: (LWS, Stage, RevisionCatalog) -> manifest dicts. Pure and deterministic.

Output order: ControllerRevisions (by number), the shared headless Service ``<lws>``, one
headless Service ``<lws>-<key8>`` per live leader (by id), the leader Deployment ``<lws>``,
worker StatefulSets ``<lws>-<key8>`` (by id).

Invariants
- The Deployment template is the TARGET revision's leader template, built by the Ordinal
  :func:`pulumi_lws.lws.render.ordinal.leader_template` with the Hash :class:`LeaderEnv`
  (:func:`hash_leader_env`: address from the ``leader-address`` annotation, no
  ``LWS_LEADER_NAME`` unless TPU variables need it) plus what upstream's pod webhook
  adds to every Hash leader at admission: annotation ``group-identity: Hash``, the
  ``group-replacement`` scheduling gate, ``pod-deletion-cost: "-100"`` (every leader is born
  gated), ``spec.subdomain: <lws>`` and, for size > 1, the ``group-ready`` readiness gate.
- ``rollingUpdate.maxUnavailable``/``maxSurge`` are the LWS IntOrString values, unchanged.
- A worker StatefulSet exists only for groups the planner marked ``workers`` (admitted leaders),
  rendered from ``catalog.lws_at(lws, group revision)`` by the Ordinal worker builders with the
  group's Hash :class:`GroupNames` (:func:`hash_group_names`), and is owned by its leader pod (so
  the garbage collector removes the workers as soon as the ReplicaSet deletes the leader).
- The leader address in the planner's ``leader-address`` annotation and in the workers' env is
  the same function (:func:`pulumi_lws.lws.rollout.hash.planner.group_leader_address`).
- Every object has ``metadata.namespace`` and the ownership labels
  (:func:`pulumi_lws.core.k8s.manifests.owned_labels`); the Deployment and StatefulSets carry
  ``pulumi.com/skipAwait: "true"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_lws.core.contract.stage import GroupView, Stage
from pulumi_lws.core.k8s.manifests import headless_service, merged, metadata
from pulumi_lws.lws import labels as L
from pulumi_lws.lws import names
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.render import ordinal
from pulumi_lws.lws.render.common import controller_revision, workload_annotations
from pulumi_lws.lws.render.ordinal import GroupNames, LeaderEnv, leader_template
from pulumi_lws.lws.render.pod import (
    LWS_GROUP_SIZE,
    LWS_LEADER_ADDRESS,
    LWS_LEADER_NAME,
    LWS_WORKER_INDEX,
    field_env,
    value_env,
)
from pulumi_lws.lws.revision import RevisionCatalog
from pulumi_lws.lws.rollout.hash.admission import GATED_DELETION_COST
from pulumi_lws.lws.rollout.hash.planner import (
    GROUP_HOST_ANNOTATION,
    group_host,
    group_leader_address,
    is_unique_per_replica,
)

HASH = "Hash"


def render_hash(
    lws: LeaderWorkerSet, stage: Stage, catalog: RevisionCatalog, options: Any = None
) -> list[dict[str, Any]]:
    """Every object the Hash stage declares (``options`` accepted for signature parity)."""
    live = sorted((g for g in stage.groups if is_live(g)), key=lambda g: g.id)
    out = controller_revisions(lws, stage, catalog)
    out.append(headless_service(names.shared_service(lws.name), lws.namespace, {L.NAME: lws.name}, {L.NAME: lws.name}))
    out += [leader_service(lws, g, group_lws(lws, catalog, g)) for g in live]
    out.append(leader_deployment(lws, catalog))
    for g in live:
        if g.workers and g.revision:
            out.append(worker_statefulset(lws, group_lws(lws, catalog, g), g))
    return out


def group_lws(lws: LeaderWorkerSet, catalog: RevisionCatalog, group: GroupView) -> LeaderWorkerSet:
    """The LWS at the group's revision (the live spec when that revision is not stored)."""
    if group.revision and catalog.get(group.revision) is not None:
        return catalog.lws_at(lws, group.revision)
    return lws


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

#: pulumi-lws helper variable of a Hash leader with TPU variables: its group host ``<lws>-<key8>``.
LWS_GROUP_HOST = "LWS_GROUP_HOST"


def hash_leader_env(lws: LeaderWorkerSet) -> LeaderEnv:
    """LWS env of a Hash leader (one template for all leaders). The address comes from the pod's
    ``leader-address`` annotation, set by the planner before it ungates the pod. TPU values refer
    to the leader by that address, to its workers as ``$(LWS_GROUP_HOST)-<j>`` (``LWS_GROUP_HOST``
    from the planner's ``group-host`` annotation) and to its name (``TPU_NAME``) by the pod name."""
    env = (
        field_env(LWS_LEADER_ADDRESS, f"metadata.annotations['{L.LEADER_ADDRESS}']"),
        value_env(LWS_GROUP_SIZE, str(lws.size)),
        value_env(LWS_WORKER_INDEX, "0"),
    )
    host_ref = f"$({LWS_GROUP_HOST})"
    return LeaderEnv(
        env=env,
        host=f"$({LWS_LEADER_ADDRESS})",
        worker_prefix=host_ref,
        worker_subdomain=host_ref if is_unique_per_replica(lws) else names.shared_service(lws.name),
        name=f"$({LWS_LEADER_NAME})",
        tpu_env=(
            field_env(LWS_LEADER_NAME, "metadata.name"),
            field_env(LWS_GROUP_HOST, f"metadata.annotations['{GROUP_HOST_ANNOTATION}']"),
        ),
    )


def hash_leader_template(lws: LeaderWorkerSet, key: str) -> dict[str, Any]:
    """The Ordinal leader template at ``key`` (with the Hash env) plus the Hash admission-time
    additions."""
    template = leader_template(lws, key, leader_env=hash_leader_env(lws))
    template["metadata"]["annotations"] = merged(
        template["metadata"].get("annotations"), {L.GROUP_IDENTITY: HASH, L.POD_DELETION_COST: GATED_DELETION_COST}
    )
    spec = template["spec"]
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
        "metadata": metadata(
            name,
            lws.namespace,
            merged(lws.metadata.labels, {L.NAME: name, L.TEMPLATE_REVISION_HASH: key}),
            workload_annotations(lws.metadata.annotations),
        ),
        "spec": {
            "replicas": lws.replicas,
            "selector": {"matchLabels": {L.NAME: name, L.WORKER_INDEX: "0"}},
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxUnavailable": cfg.max_unavailable, "maxSurge": cfg.max_surge},
            },
            "template": hash_leader_template(lws, key),
        },
    }


def _owner(group: GroupView) -> list[dict[str, Any]]:
    """The leader pod as controller owner (omitted when the observed pod has no uid)."""
    if not group.leader_uid:
        return []
    return [{"apiVersion": "v1", "kind": "Pod", "name": group.leader, "uid": group.leader_uid, "controller": True}]


def leader_service(lws: LeaderWorkerSet, group: GroupView, at: LeaderWorkerSet | None = None) -> dict[str, Any]:
    """Headless Service ``<lws>-<key8>`` of one group (``at``: the group's revision, default
    ``lws``). Shared: selects only the group's leader, so ``<lws>-<key8>.<ns>`` is the leader's
    address. UniquePerReplica: selects the whole group (upstream's per-replica Service, named
    after the leader hostname): the workers' subdomain. Published while not ready."""
    assert group.key
    if is_unique_per_replica(at or lws):
        selector = {L.NAME: lws.name, L.GROUP_INDEX: group.key}
    else:
        selector = {L.NAME: lws.name, L.WORKER_INDEX: "0", L.GROUP_KEY: group.key}
    svc = headless_service(
        group_host(lws.name, group.key), lws.namespace, {L.NAME: lws.name, L.GROUP_KEY: group.key}, selector
    )
    owners = _owner(group)
    if owners:
        svc["metadata"]["ownerReferences"] = owners
    return svc


# ---- workers ------------------------------------------------------------------------------------


def hash_group_names(live: LeaderWorkerSet, at: LeaderWorkerSet, group: GroupView) -> GroupNames:
    """Names of a Hash group: index = key = the group key; workers ``<lws>-<key8>-<j>`` under
    ``<lws>`` (UniquePerReplica: ``<lws>-<key8>``); the leader's address and TPU host are
    :func:`pulumi_lws.lws.rollout.hash.planner.group_leader_address`; workers follow the leader by group-key
    affinity under exclusive topology (the leader's node is not needed)."""
    assert group.key and group.leader
    host = group_host(live.name, group.key)
    address = group_leader_address(at, group.key, group.leader)
    return GroupNames(
        index=group.key,
        key=group.key,
        leader=group.leader,
        leader_address=address,
        leader_host=address,
        worker_prefix=host,
        subdomain=host if is_unique_per_replica(at) else names.shared_service(live.name),
        key_affinity=True,
    )


def worker_template(live: LeaderWorkerSet, at: LeaderWorkerSet, group: GroupView) -> dict[str, Any]:
    """Worker pod template of ``group`` from revision ``at``: the Ordinal worker template
    (:func:`pulumi_lws.lws.render.ordinal.worker_template`) with the group's Hash names."""
    assert group.revision
    return ordinal.worker_template(live, at, hash_group_names(live, at, group), group.revision)


def worker_statefulset(live: LeaderWorkerSet, at: LeaderWorkerSet, group: GroupView) -> dict[str, Any]:
    """§3.3 worker StatefulSet ``<lws>-<key8>`` on the leader's revision (the Ordinal worker
    StatefulSet with the group's Hash names), owned by the leader pod: size-1 replicas, ordinals
    from 1, Parallel, serviceName ``<lws>`` (UniquePerReplica ``<lws>-<key8>``)."""
    assert group.revision
    sts = ordinal.worker_statefulset(live, at, hash_group_names(live, at, group), group.revision)
    owners = _owner(group)
    if owners:
        sts["metadata"]["ownerReferences"] = owners
    return sts
