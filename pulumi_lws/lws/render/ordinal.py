"""Ordinal-mode renderer: (LWS, Stage, RevisionCatalog) -> manifest dicts. Pure and deterministic.

Output order (stable; also a sensible apply order): ControllerRevisions (by revision number),
the shared headless Service, per-group Services (UniquePerReplica, by ordinal), the leader
StatefulSet, worker StatefulSets (by ordinal).

Invariants:
* The leader StatefulSet template is the TARGET revision; its ``replicas``/``partition`` are the
  stage's. Kubernetes itself recreates leader pods below the partition from the StatefulSet's
  current revision.
* Worker StatefulSet ``<lws>-<i>`` takes EVERY revision-covered field (template, size,
  subGroupPolicy, networkConfig, volume claims) from ``stage.group_revisions[str(i)]`` (target
  when absent), and exists only for i < stage.replicas with that revision's size > 1.
* A ControllerRevision is emitted for the target and for every revision a group is rendered on.
* No ownerReferences; every object is namespaced ``lws.namespace``.
* Apply order (``Reconciled.dependencies``, built from :func:`workload_dependencies` and
  :func:`ordinal_dependencies`): every worker StatefulSet after the leader StatefulSet; every
  workload after its Service and its revision's ControllerRevision. The output order above lists
  every dependency before its dependents.
See docs/rendering.md for the full object table and the known differences from upstream.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pulumi_lws.core.contract.dependencies import Ref, ref_of
from pulumi_lws.core.contract.stage import Stage
from pulumi_lws.core.k8s.manifests import headless_service, merged, metadata
from pulumi_lws.lws import labels as L
from pulumi_lws.lws import names
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.group_shape import container_requests_tpus, requests_tpus, static_worker_subgroup
from pulumi_lws.lws.render.admission import LEADER_EXCLUDED, admission_objects, uses_admission_policy
from pulumi_lws.lws.render.admission_pods import (
    add_worker_tpu_env,
    leader_subgroup_tpu_hosts,
    subgroup_key_table,
    worker_tpu_containers,
)
from pulumi_lws.lws.render.common import controller_revision, workload_annotations
from pulumi_lws.lws.render.pod import (
    LEADER_NAME_REF,
    add_key_exclusive_affinity,
    add_leader_exclusive_affinity,
    add_tpu_env,
    decorated,
    group_annotations,
    leader_lws_env,
    pin_to_domain,
    prepend_env,
    worker_lws_env,
)
from pulumi_lws.lws.render.worker_memo import worker_statefulsets
from pulumi_lws.lws.revision import RevisionCatalog

UNIQUE_PER_REPLICA = "UniquePerReplica"


def render_ordinal(
    lws: LeaderWorkerSet,
    stage: Stage,
    catalog: RevisionCatalog,
    options: Any = None,
    *,
    group_domains: Mapping[Any, str] | None = None,
    worker_groups: Collection[int] | None = None,
    live_replicas: int = 0,
) -> list[dict[str, Any]]:
    """Every object the Ordinal stage declares.

    ``group_domains``: ``{ordinal: value}`` of the exclusive-topology label on the node of each
    group's leader; workers of a listed group get ``nodeSelector {<topologyKey>: value}``.
    Default none (no nodeSelector). ``worker_groups``: ordinals whose worker StatefulSet may be
    declared (e.g. LeaderReady: groups with a Ready leader or an existing worker StatefulSet);
    default all. ``options`` (ReconcileOptions) is accepted for signature parity; unused here.
    ``live_replicas``: the observed leader StatefulSet's replicas (per-pod values admission-policy:
    its group keys cover ordinals below ``max(stage.replicas, live_replicas)``).
    """
    domains = {int(k): v for k, v in (group_domains or {}).items()}
    keys = {i: group_revision(stage, catalog, i) for i in range(stage.replicas)}
    by_key = {key: catalog.lws_at(lws, key) for key in sorted(set(keys.values()))}
    group_lws = {i: by_key[key] for i, key in keys.items()}
    out = controller_revisions(lws, stage, catalog)
    out += services(lws, group_lws)
    out.append(leader_statefulset(lws, stage, catalog))
    tpus = {key: template_tpus(at) for key, at in by_key.items()}  # once per revision, not per group
    # every worker_statefulset(lws, at, i, keys[i], domains.get(i), tpus=...), those whose inputs
    # are unchanged since the last render of this LWS reused (render/worker_memo.py)
    out += worker_statefulsets(lws, group_lws, keys, domains, tpus, worker_groups, worker_statefulset)
    if uses_admission_policy(lws):  # declared first: every StatefulSet depends on them
        ordinals = range(max(stage.replicas, live_replicas))
        out = admission_objects(lws, ordinals, worker_tpu_containers(by_key.values())) + out
    return out


def template_tpus(at: LeaderWorkerSet) -> tuple[bool, bool]:
    """(leader template requests TPUs, worker template requests TPUs) of revision ``at``: what
    :func:`worker_template` asks of every group (resources are never changed by rendering)."""
    lwt = at.spec.leader_worker_template
    leader = requests_tpus(lwt.leader_pod_template().get("spec") or {})
    return leader, requests_tpus((lwt.worker_template or {}).get("spec") or {})


def group_revision(stage: Stage, catalog: RevisionCatalog, group: int) -> str:
    """The revision key group ``group`` is rendered on (target when the planner gave none)."""
    return stage.group_revisions.get(str(group), catalog.target.key)


def controller_revisions(lws: LeaderWorkerSet, stage: Stage, catalog: RevisionCatalog) -> list[dict[str, Any]]:
    """CRs for the target, every revision a group is rendered on and every revision the stage keeps
    (``stage.kept_revisions``: still run by pods or recreatable by the leader StatefulSet),
    ordered by revision number then key."""
    keys = {catalog.target.key, *stage.group_revisions.values(), *stage.kept_revisions}
    revs = []
    for key in keys:
        rev = catalog.get(key)
        if rev is None:
            raise KeyError(f"revision {key!r} of LeaderWorkerSet {lws.name!r} is not stored in any ControllerRevision")
        revs.append(rev)
    revs.sort(key=lambda r: (r.number, r.key))
    return [controller_revision(lws.name, lws.namespace, r) for r in revs]


def is_unique_per_replica(lws: LeaderWorkerSet) -> bool:
    return lws.spec.network_config.subdomain_policy == UNIQUE_PER_REPLICA


def services(lws: LeaderWorkerSet, group_lws: Mapping[int, LeaderWorkerSet]) -> list[dict[str, Any]]:
    """Shared Service ``<lws>`` (always: the leader StatefulSet's serviceName, so every leader
    resolves as ``<lws>-<i>.<lws>``) plus ``<lws>-<i>`` for each group whose revision is
    UniquePerReplica (selects that group's workers, the subdomain of its worker StatefulSet)."""
    name, ns = lws.name, lws.namespace
    out = [headless_service(names.shared_service(name), ns, {L.NAME: name}, {L.NAME: name})]
    for i, at in sorted(group_lws.items()):
        if is_unique_per_replica(at):
            sel = {L.NAME: name, L.GROUP_INDEX: str(i)}
            out.append(headless_service(names.replica_service(name, i), ns, sel, sel))
    return out


def _volume_claims(lws: LeaderWorkerSet) -> dict[str, Any]:
    lwt = lws.spec.leader_worker_template
    out: dict[str, Any] = {}
    if lwt.volume_claim_templates:
        out["volumeClaimTemplates"] = copy.deepcopy(lwt.volume_claim_templates)
    if lwt.persistent_volume_claim_retention_policy:
        out["persistentVolumeClaimRetentionPolicy"] = dict(lwt.persistent_volume_claim_retention_policy)
    return out


@dataclass(frozen=True)
class LeaderEnv:
    """How one leader pod template (shared by every leader of the controller) names its own group.

    ``env`` is inserted first in every container; ``tpu_env`` (helper variables the TPU values
    reference) right after it, only when TPU variables are added. The other fields may use
    ``$(VAR)`` of those variables (Kubernetes expands only variables defined earlier).
    """

    env: tuple[dict[str, Any], ...]
    host: str  # this leader's resolvable host: first entry of TPU_WORKER_HOSTNAMES
    worker_prefix: str  # worker j's pod name is f"{worker_prefix}-{j}"
    worker_subdomain: str  # the workers' subdomain (their StatefulSet's serviceName)
    name: str  # the leader pod's name (TPU_NAME)
    tpu_env: tuple[dict[str, Any], ...] = ()


def ordinal_leader_env(lws: LeaderWorkerSet) -> LeaderEnv:
    """Ordinal leaders: ``LWS_LEADER_NAME`` (Downward API) + ``$(LWS_LEADER_NAME).<lws>.<ns>``;
    workers are ``$(LWS_LEADER_NAME)-<j>`` under ``<lws>`` (UniquePerReplica: the leader's name)."""
    name = lws.name
    return LeaderEnv(
        env=tuple(leader_lws_env(names.leader_sts(name), lws.namespace, lws.size)),
        host=names.pod_address(LEADER_NAME_REF, name),
        worker_prefix=LEADER_NAME_REF,
        worker_subdomain=LEADER_NAME_REF if is_unique_per_replica(lws) else name,
        name=LEADER_NAME_REF,
    )


def leader_template(lws: LeaderWorkerSet, key: str, *, leader_env: LeaderEnv | None = None) -> dict[str, Any]:
    """The leader pod template at ``lws``'s revision ``key`` with everything static added.

    ``leader_env``: the LWS variables and self-references (default: Ordinal's,
    :func:`ordinal_leader_env`; Hash passes its own)."""
    refs = leader_env or ordinal_leader_env(lws)
    lwt = lws.spec.leader_worker_template
    sgp = lwt.sub_group_policy
    labels = {L.WORKER_INDEX: "0", L.NAME: lws.name, L.TEMPLATE_REVISION_HASH: key}
    if sgp is not None and sgp.sub_group_policy_type == "LeaderWorker":
        labels[L.SUBGROUP_INDEX] = "0"
    annotations = group_annotations(lws.size, lws.metadata.annotations, sgp)
    if is_unique_per_replica(lws):
        annotations[L.SUBDOMAIN_POLICY] = UNIQUE_PER_REPLICA
    template = decorated(lwt.leader_pod_template(), labels, annotations)
    spec = template["spec"]
    admission = uses_admission_policy(lws)
    # admission mode: a leader of subgroup 0 gets its (static) subgroup TPU variables too
    sg_tpu = admission and sgp is not None and sgp.sub_group_policy_type != LEADER_EXCLUDED and bool(sgp.sub_group_size)
    tpu = (sgp is None or sg_tpu) and requests_tpus(spec)
    prepend_env(spec, list(refs.env) + (list(refs.tpu_env) if tpu else []))
    topology = lws.metadata.annotations.get(L.EXCLUSIVE_TOPOLOGY)
    if topology and not admission:  # admission mode: upstream's group-key terms, set by the policy
        add_leader_exclusive_affinity(spec, topology)
    if tpu:

        def worker_host(j: int) -> str:
            return names.pod_address(f"{refs.worker_prefix}-{j}", refs.worker_subdomain)

        if sgp is not None and sgp.sub_group_size:
            hosts = leader_subgroup_tpu_hosts(refs.host, worker_host, sgp.sub_group_size)
        else:
            hosts = [refs.host] + [worker_host(j) for j in range(1, lws.size)]
        add_tpu_env(spec, hosts, refs.name, first_id=0)
    return template


def leader_statefulset(lws: LeaderWorkerSet, stage: Stage, catalog: RevisionCatalog) -> dict[str, Any]:
    """§1.3 leader StatefulSet: target template, stage replicas/partition, max(1, MU+MS)."""
    name, key = lws.name, catalog.target.key
    spec: dict[str, Any] = {
        "replicas": stage.replicas,
        "serviceName": names.shared_service(name),
        "podManagementPolicy": "Parallel",
        "selector": {"matchLabels": {L.NAME: name, L.WORKER_INDEX: "0"}},
        "template": leader_template(lws, key),
        "updateStrategy": {
            "type": "RollingUpdate",
            "rollingUpdate": {
                "partition": int(stage.partition or 0),
                "maxUnavailable": max(1, lws.max_unavailable() + lws.max_surge()),
            },
        },
        **_volume_claims(lws),
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": metadata(
            names.leader_sts(name),
            lws.namespace,
            merged(lws.metadata.labels, {L.NAME: name, L.TEMPLATE_REVISION_HASH: key}),
            workload_annotations(lws.metadata.annotations, {L.REPLICAS: str(lws.replicas)}),
        ),
        "spec": spec,
    }


@dataclass(frozen=True)
class GroupNames:
    """Names and addresses of one group's pods, as its worker objects need them.

    Ordinal: from the ordinal (:func:`ordinal_group_names`); Hash: from the group key and the
    observed leader pod (``render.lws_hash.hash_group_names``).
    """

    index: str  # group-index label (ordinal, or the key)
    key: str  # group-key label
    leader: str  # the leader pod's name
    leader_address: str  # LWS_LEADER_ADDRESS of the workers
    leader_host: str  # the leader's TPU host
    worker_prefix: str  # the worker StatefulSet's name; worker j's pod is f"{worker_prefix}-{j}"
    subdomain: str  # the workers' serviceName
    key_affinity: bool = False  # exclusive topology: follow the leader by group-key pod affinity (no nodeSelector)


def ordinal_group_names(live: LeaderWorkerSet, at: LeaderWorkerSet, group: int) -> GroupNames:
    """Group ``group`` of an Ordinal LWS (``at`` = its revision, for the subdomain policy)."""
    name, ns = live.name, live.namespace
    leader = names.leader_pod(name, group)
    return GroupNames(
        index=str(group),
        key=names.group_key(ns, name, group),
        leader=leader,
        leader_address=names.pod_address(leader, names.shared_service(name), ns),
        leader_host=names.pod_address(leader, names.shared_service(name)),
        worker_prefix=names.worker_sts(name, group),
        subdomain=names.replica_service(name, group) if is_unique_per_replica(at) else names.shared_service(name),
    )


def worker_template(
    live: LeaderWorkerSet,
    at: LeaderWorkerSet,
    group: int | GroupNames,
    key: str,
    domain: str | None = None,
    tpus: tuple[bool, bool] | None = None,
) -> dict[str, Any]:
    """Worker pod template of ``group`` (an ordinal, or its :class:`GroupNames`) from revision
    ``at`` (``live`` supplies metadata annotations such as exclusive topology, which revisions
    don't cover)."""
    g = group if isinstance(group, GroupNames) else ordinal_group_names(live, at, group)
    name = live.name
    lwt = at.spec.leader_worker_template
    sgp = lwt.sub_group_policy
    leader = g.leader
    labels = {L.GROUP_INDEX: g.index, L.NAME: name, L.GROUP_KEY: g.key, L.TEMPLATE_REVISION_HASH: key}
    annotations = group_annotations(at.size, live.metadata.annotations, sgp)
    annotations[L.LEADER_NAME] = leader
    leader_tpus, worker_tpus = tpus if tpus is not None else template_tpus(at)
    if leader_tpus:
        annotations[L.LEADER_REQUESTS_TPUS] = "true"
    admission = uses_admission_policy(live)  # the policy sets every subgroup label and term
    sg_size = sgp.sub_group_size if sgp else None
    sg_index = static_worker_subgroup(at.size, sg_size) if sg_size and not admission else None
    if sg_index is not None:
        labels[L.SUBGROUP_INDEX] = str(sg_index)
        labels[L.SUBGROUP_KEY] = names.subgroup_key(leader, sg_index)
    if admission and sg_size:
        annotations.update(subgroup_key_table(leader, at.size, sg_size))
    template = decorated(lwt.worker_template, labels, annotations)
    spec = template["spec"]
    prepend_env(spec, worker_lws_env(g.leader_address, at.size))
    sg_topology = live.metadata.annotations.get(L.SUBGROUP_EXCLUSIVE_TOPOLOGY)
    if sg_index is not None and sg_topology:
        add_key_exclusive_affinity(spec, L.SUBGROUP_KEY, labels[L.SUBGROUP_KEY], sg_topology)
    topology = live.metadata.annotations.get(L.EXCLUSIVE_TOPOLOGY)
    if topology and domain:
        pin_to_domain(spec, topology, domain)
    elif topology and g.key_affinity:  # with the leader (it carries the group-key label), apart from other groups
        add_key_exclusive_affinity(spec, L.GROUP_KEY, g.key, topology)
    if admission and worker_tpus:
        worker_host = lambda j: names.pod_address(f"{g.worker_prefix}-{j}", g.subdomain)  # noqa: E731
        tables = add_worker_tpu_env(
            spec,
            g.leader_host,
            worker_host,
            size=at.size,
            subgroup_size=sg_size,
            leader_tpus=leader_tpus,
            tpu_name=leader,
        )
        template["metadata"]["annotations"] = {**template["metadata"].get("annotations", {}), **tables}
    elif sgp is None and worker_tpus:
        hosts = [g.leader_host] if leader_tpus else []
        hosts += [names.pod_address(f"{g.worker_prefix}-{j}", g.subdomain) for j in range(1, at.size)]
        n_tpu = sum(1 for c in spec.get("containers") or [] if container_requests_tpus(c))
        add_tpu_env(spec, hosts, leader, first_id=None, id_from_pod_index=leader_tpus and n_tpu == 1)
    return template


def worker_statefulset(
    live: LeaderWorkerSet,
    at: LeaderWorkerSet,
    group: int | GroupNames,
    key: str,
    domain: str | None = None,
    tpus: tuple[bool, bool] | None = None,
) -> dict[str, Any]:
    """§3.3 worker StatefulSet ``<lws>-<group>`` (Hash: ``<lws>-<key8>``) on revision ``key``
    (``at`` = LWS at that key).

    ``maxUnavailable: 100%`` + Parallel: when Pulumi updates it (only once the group is
    admitted), all workers are replaced at once, together with their leader.
    """
    g = group if isinstance(group, GroupNames) else ordinal_group_names(live, at, group)
    name, ns = live.name, live.namespace
    selector = {L.GROUP_INDEX: g.index, L.NAME: name, L.GROUP_KEY: g.key}
    spec: dict[str, Any] = {
        "replicas": at.size - 1,
        "ordinals": {"start": 1},
        "serviceName": g.subdomain,
        "podManagementPolicy": "Parallel",
        "selector": {"matchLabels": selector},
        "template": worker_template(live, at, g, key, domain, tpus),
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "100%"}},
        **_volume_claims(at),
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": metadata(
            g.worker_prefix,
            ns,
            merged(live.metadata.labels, {**selector, L.TEMPLATE_REVISION_HASH: key}),
            workload_annotations(live.metadata.annotations),
        ),
        "spec": spec,
    }


# ---- apply-order dependencies (data for the component's ``depends_on`` and the simulator) -------


POD_BEARING_KINDS = ("StatefulSet", "Deployment")


def _pod_template(manifest: Mapping[str, Any]) -> Mapping[str, Any]:
    return ((manifest.get("spec") or {}).get("template") or {}) if manifest.get("kind") in POD_BEARING_KINDS else {}


def workload_dependencies(manifests: Iterable[Mapping[str, Any]]) -> dict[Ref, list[Ref]]:
    """Every StatefulSet/Deployment after what its pods need from the same apply: the Service
    named by ``spec.serviceName`` (or the pod template's ``subdomain``) and the ControllerRevision
    of the revision its template carries (``template-revision-hash``), when those are declared.

    So a pod never runs a revision whose ControllerRevision does not exist (a later reconcile can
    always render that group again) and never starts before the Service that resolves it."""
    manifests = list(manifests)
    crs = {
        (m["metadata"].get("labels") or {}).get(L.TEMPLATE_REVISION_HASH): ref_of(m)
        for m in manifests
        if m.get("kind") == "ControllerRevision"
    }
    out: dict[Ref, list[Ref]] = {}
    for m in manifests:
        template = _pod_template(m)
        if not template:
            continue
        service = (m.get("spec") or {}).get("serviceName") or (template.get("spec") or {}).get("subdomain")
        key = ((template.get("metadata") or {}).get("labels") or {}).get(L.TEMPLATE_REVISION_HASH)
        deps = [("Service", service)] if service else []
        if key in crs:
            deps.append(crs[key])
        out[ref_of(m)] = deps
    return out


def is_worker_statefulset(lws_name: str, manifest: Mapping[str, Any]) -> bool:
    """A group's worker StatefulSet: a StatefulSet carrying a ``group-index`` label, other than the
    leader StatefulSet ``<lws>``."""
    return (
        manifest.get("kind") == "StatefulSet"
        and manifest["metadata"]["name"] != names.leader_sts(lws_name)
        and L.GROUP_INDEX in (manifest["metadata"].get("labels") or {})
    )


def ordinal_dependencies(lws_name: str, manifests: Iterable[Mapping[str, Any]]) -> dict[Ref, list[Ref]]:
    """Ordinal: every worker StatefulSet after the leader StatefulSet (lws#225).

    A worker StatefulSet is rendered on the target only when the stage's partition admits its
    group. Applying it after the leader StatefulSet means that whenever a worker StatefulSet
    receives a new template, the leader StatefulSet carrying the partition that admits the group
    was applied first in the same run — also when the run crashes half-way (the dependent is then
    simply not applied). Per-group Services and PodGroups need no such order: they carry no pod
    template and revision-specific ones are new objects, not updates of the group's old ones."""
    leader = ("StatefulSet", names.leader_sts(lws_name))
    manifests = list(manifests)
    if leader not in {ref_of(m) for m in manifests}:
        return {}
    return {ref_of(m): [leader] for m in manifests if is_worker_statefulset(lws_name, m)}
