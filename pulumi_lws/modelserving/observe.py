"""Observed state of a ModelServing: its :class:`Scope` and snapshot -> :class:`GroupState` s
(docs/modelserving.md, "Observed state"). Pure: reads literal object dicts only.

Invariants:

* a ServingGroup exists while any StatefulSet or pod carries its ``group-name`` label
  ``<ms>-<g>`` (objects of another ModelServing, or with an unparsable ordinal, are ignored); its
  revision is the ``revision`` label of its StatefulSets (what was last declared; the most common
  value, ties to the smallest), else of its pods, else ``""``;
* a role replica ``<role>-<r>`` (labels ``role``, ``role-id``) has the ``role-template-hash`` of
  its entry StatefulSet, else its worker StatefulSet, else a pod, else ``""`` (unknown). Status:
  ``Deleting`` when one of its StatefulSets has a deletionTimestamp or pods remain with no
  StatefulSet (unless it is *legacy*: bare pods Kthena created, :mod:`pulumi_lws.modelserving.legacy`,
  Running when its upstream-named pods are Running+Ready); ``Running`` when its entry pod and the ``workerReplicas`` worker pods (1..W, W from
  its role template, resolved through the catalog by hash) are Running+Ready; else ``Creating``;
* a group is ``Deleting`` when its PodGroup is being deleted or every role replica is
  ``Deleting``; ``Running`` when every role of its own revision has at least ``n`` ``Running``
  replicas (``n`` = the live spec's replicas, counted whatever their ordinals: a surge rollout
  leaves sparse role ordinals; for a role the spec no longer has, every observed replica must be
  ``Running``); else ``Creating``;
* deletion costs are Σ ``controller.kubernetes.io/pod-deletion-cost`` over the pods (an
  invalid value counts 0); groups are returned by ascending ordinal.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from pulumi_lws.core import keys as K
from pulumi_lws.core.adoption import pruned
from pulumi_lws.core.ports import Scope
from pulumi_lws.core.snapshot import (
    Snapshot,
    annotations_of,
    is_deleting,
    labels_of,
    pod_running_and_ready,
)
from pulumi_lws.modelserving import labels as L
from pulumi_lws.modelserving import names
from pulumi_lws.modelserving.api.modelserving import ModelServing
from pulumi_lws.modelserving.groups import (
    CREATING,
    DELETING,
    RUNNING,
    GroupState,
    RoleReplicaState,
    by_ordinal,
    parse_ordinal,
)
from pulumi_lws.modelserving.legacy import (
    LegacyReplica,
    is_legacy,
    legacy_replicas,
    upstream_pod_names,
)
from pulumi_lws.modelserving.revision import (
    RevisionCatalog,
    role_data,
    role_template_hash,
)

KINDS = ("StatefulSet", "Pod", "Service", "ControllerRevision", "PodGroup")

Obj = Mapping[str, Any]


def modelserving_scope(namespace: str, name: str) -> Scope:
    """Every object of ModelServing ``name``: all carry ``modelserving.volcano.sh/name=<name>``."""
    return Scope(namespace=namespace, selector={L.NAME: name}, kinds=KINDS)


def deletion_cost(pods: Iterable[Obj]) -> int:
    total = 0
    for pod in pods:
        try:
            total += int(str(annotations_of(pod).get(K.POD_DELETION_COST, "0")).strip())
        except ValueError:
            pass
    return total


def _identity(ms: str, obj: Obj) -> tuple[int, str, int] | None:
    """(group ordinal, role, role ordinal) from an object's labels; None if not ours."""
    lbl = labels_of(obj)
    prefix, g = parse_ordinal(str(lbl.get(L.GROUP_NAME, "")))
    role = lbl.get(L.ROLE)
    role_prefix, r = parse_ordinal(str(lbl.get(L.ROLE_ID, "")))
    if prefix != ms or g < 0 or not role or role_prefix != role or r < 0:
        return None
    return g, role, r


def _by_name(objs: Iterable[Obj]) -> dict[str, Obj]:
    return {o["metadata"]["name"]: o for o in objs}


def _worker_replicas(ms: ModelServing, catalog: RevisionCatalog, role: str, template_hash: str, group_revision: str,
                     worker_sts: Obj | None) -> int:
    """W of a role replica: its template's (by hash), else its group revision's role, else the live
    spec's, else what its worker StatefulSet declares."""
    rev = catalog.revision_with_role_hash(role, template_hash, prefer=[group_revision]) if template_hash else None
    for key in (rev, group_revision):
        if key and key in catalog:
            try:
                return catalog.role(key, role).worker_replicas
            except KeyError:
                pass
    try:
        return ms.role(role).worker_replicas
    except KeyError:
        return int(((worker_sts or {}).get("spec") or {}).get("replicas") or 0)


def _role_state(ms: ModelServing, catalog: RevisionCatalog, g: int, role: str, r: int, group_revision: str,
                sts: Mapping[str, Obj], pods: Mapping[str, Obj]) -> RoleReplicaState:
    entry = sts.get(names.entry_statefulset(ms.name, g, role, r))
    worker = sts.get(names.worker_statefulset(ms.name, g, role, r))
    hashes = [labels_of(o).get(L.ROLE_TEMPLATE_HASH) for o in (entry, worker) if o is not None]
    hashes += [labels_of(p).get(L.ROLE_TEMPLATE_HASH) for _, p in sorted(pods.items())]
    template_hash = next((h for h in hashes if h), "")
    cost = deletion_cost(pods.values())
    if is_legacy(sts.values(), pods.values()):
        return _legacy_state(ms, catalog, g, role, r, group_revision, pods, template_hash, cost)
    if any(is_deleting(o) for o in sts.values()) or not sts:
        return RoleReplicaState(role, r, template_hash, DELETING, cost)
    w = _worker_replicas(ms, catalog, role, template_hash, group_revision, worker)
    wanted = [names.entry_pod(ms.name, g, role, r)] + [names.worker_pod(ms.name, g, role, r, i) for i in range(1, w + 1)]
    ready = entry is not None and (w == 0 or worker is not None) and all(pod_running_and_ready(pods.get(p)) for p in wanted)
    return RoleReplicaState(role, r, template_hash, RUNNING if ready else CREATING, cost)


def _legacy_state(ms: ModelServing, catalog: RevisionCatalog, g: int, role: str, r: int, group_revision: str,
                  pods: Mapping[str, Obj], label_hash: str, cost: int) -> RoleReplicaState:
    """A role replica of bare, Kthena-named pods (:mod:`pulumi_lws.modelserving.legacy`): its
    template hash is its revision's stored role's (upstream computed the label with its own hash)."""
    revision = LegacyReplica(g, role, r, tuple(pods.values())).revision
    template_hash = _legacy_hash(ms, catalog, role, revision) or label_hash
    if any(is_deleting(p) for p in pods.values()):
        return RoleReplicaState(role, r, template_hash, DELETING, cost)
    w = _worker_replicas(ms, catalog, role, template_hash, revision or group_revision, None)
    ready = all(pod_running_and_ready(pods.get(p)) for p in upstream_pod_names(ms.name, g, role, r, w))
    return RoleReplicaState(role, r, template_hash, RUNNING if ready else CREATING, cost)


def _legacy_hash(ms: ModelServing, catalog: RevisionCatalog, role: str, revision: str) -> str | None:
    """The pulumi-lws template hash of ``role`` in ``revision``: the live spec's role's when the
    stored role is the same content (a Go-serialised template keeps ``creationTimestamp: null``),
    else the stored role's; None when the revision or role is unknown."""
    stored = next((r for r in catalog.roles.get(revision, ()) if r.get("name") == role), None)
    if stored is None:
        return None
    try:
        spec_role = ms.role(role)
    except KeyError:
        return catalog.role_hash(revision, role)
    if pruned(dict(stored)) == pruned(role_data(spec_role)):
        return role_template_hash(spec_role)
    return catalog.role_hash(revision, role)


def legacy_worker_replicas(ms: ModelServing, catalog: RevisionCatalog, snapshot: Snapshot) -> dict[tuple[int, str, int], int]:
    """W of every legacy role replica of ``ms`` (its revision's role, as :func:`_legacy_state` reads it)."""
    out = {}
    for key, rep in legacy_replicas(ms.name, snapshot).items():
        revision = rep.revision
        h = _legacy_hash(ms, catalog, key[1], revision)
        out[key] = _worker_replicas(ms, catalog, key[1], h or "", revision, None)
    return out


def _group_revision(sts: Iterable[Obj], pods: Iterable[Obj]) -> str:
    for objs in (sts, pods):
        counts = Counter(labels_of(o).get(L.REVISION) for o in objs)
        counts.pop(None, None)
        counts.pop("", None)
        if counts:
            return min(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0]
    return ""


def _group_running(ms: ModelServing, catalog: RevisionCatalog, revision: str, roles: Iterable[RoleReplicaState]) -> bool:
    roles = tuple(roles)
    spec_roles = catalog.roles_of(revision) if revision in catalog else tuple(ms.roles)
    for role in spec_roles:
        mine = [r for r in roles if r.role == role.name]
        try:
            wanted = ms.role(role.name).replicas
        except KeyError:  # a role the spec no longer has: every observed replica
            wanted = len(mine)
            if any(r.status != RUNNING for r in mine):
                return False
        # by count, not by ordinal: a surge rollout can leave sparse role ordinals ({1, 2})
        if sum(1 for r in mine if r.status == RUNNING) < wanted:
            return False
    return True


def observe_groups(snapshot: Snapshot, ms: ModelServing, catalog: RevisionCatalog) -> tuple[GroupState, ...]:
    """The ServingGroups of ``ms`` in ``snapshot`` (module invariants), ascending ordinal."""
    sts_of: dict[int, dict[tuple[str, int], list[Obj]]] = defaultdict(lambda: defaultdict(list))
    pods_of: dict[int, dict[tuple[str, int], list[Obj]]] = defaultdict(lambda: defaultdict(list))
    for kind, into in (("StatefulSet", sts_of), ("Pod", pods_of)):
        for obj in snapshot.list(kind, **{L.NAME: ms.name}):
            ident = _identity(ms.name, obj)
            if ident is not None:
                into[ident[0]][(ident[1], ident[2])].append(obj)
    out = []
    for g in sorted(set(sts_of) | set(pods_of)):
        group_sts = [o for objs in sts_of[g].values() for o in objs]
        group_pods = [o for objs in pods_of[g].values() for o in objs]
        revision = _group_revision(group_sts, group_pods)
        roles = tuple(
            _role_state(ms, catalog, g, role, r, revision, _by_name(sts_of[g].get((role, r), ())),
                        _by_name(pods_of[g].get((role, r), ())))
            for role, r in sorted(set(sts_of[g]) | set(pods_of[g])))
        pg = snapshot.get("PodGroup", names.podgroup(ms.name, g))
        if (pg is not None and is_deleting(pg)) or all(r.status == DELETING for r in roles):
            status = DELETING
        elif _group_running(ms, catalog, revision, roles):
            status = RUNNING
        else:
            status = CREATING
        out.append(GroupState(g, revision, status, deletion_cost(group_pods), roles))
    return by_ordinal(out)
