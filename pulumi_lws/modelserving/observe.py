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

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pulumi_lws.core.contract.ports import Scope, without_labels
from pulumi_lws.core.contract.snapshot import (
    Snapshot,
    annotations_of,
    is_deleting,
    labels_of,
    pod_running_and_ready,
)
from pulumi_lws.core.features.adoption import pruned
from pulumi_lws.core.k8s import keys as K
from pulumi_lws.modelserving import labels as L
from pulumi_lws.modelserving import names
from pulumi_lws.modelserving.api.modelserving import ModelServing
from pulumi_lws.modelserving.group_memo import group_memo, group_objects
from pulumi_lws.modelserving.groups import (
    CREATING,
    DELETING,
    RUNNING,
    GroupState,
    RoleReplicaState,
)
from pulumi_lws.modelserving.legacy import (
    LegacyReplica,
    is_legacy,
    legacy_replicas,
    upstream_pod_names,
)
from pulumi_lws.modelserving.replicas import ObservedReplicas, observed_replicas
from pulumi_lws.modelserving.revision import (
    RevisionCatalog,
    role_data,
    role_template_hash,
)

KINDS = ("StatefulSet", "Pod", "Service", "ControllerRevision", "PodGroup")

Obj = Mapping[str, Any]


def modelserving_scope(namespace: str, name: str, *, nodes: bool = False) -> Scope:
    """Every object of ModelServing ``name``: all carry ``modelserving.volcano.sh/name=<name>``;
    ControllerRevisions also without ``controller.kubernetes.io/hash``
    (:func:`~pulumi_lws.core.contract.ports.without_labels`): a role replica's StatefulSets keep
    revisions of their pod templates, labelled ``{name, revision}`` too, and nothing of a
    ModelServing reads them. ``build_catalog`` skips them again (a second guard)."""
    selector = {L.NAME: name}
    return Scope(
        namespace=namespace,
        selector=selector,
        kinds=KINDS,
        nodes=nodes,
        kind_selectors=(("ControllerRevision", without_labels(selector, K.STS_HISTORY_HASH)),),
    )


def deletion_cost(pods: Iterable[Obj]) -> int:
    total = 0
    for pod in pods:
        ann = annotations_of(pod)
        if K.POD_DELETION_COST not in ann:
            continue  # the default "0": adds nothing (most pods carry no cost)
        try:
            total += int(str(ann[K.POD_DELETION_COST]).strip())
        except ValueError:
            pass
    return total


def _worker_replicas(
    ms: ModelServing,
    catalog: RevisionCatalog,
    role: str,
    template_hash: str,
    group_revision: str,
    worker_sts: Obj | None,
) -> int:
    """W of a role replica: its template's (by hash), else its group revision's role, else the live
    spec's, else what its worker StatefulSet declares."""
    w = _catalog_worker_replicas(ms, catalog, role, template_hash, group_revision)
    return int(((worker_sts or {}).get("spec") or {}).get("replicas") or 0) if w is None else w


def _catalog_worker_replicas(
    ms: ModelServing, catalog: RevisionCatalog, role: str, template_hash: str, group_revision: str
) -> int | None:
    """:func:`_worker_replicas` from the catalog and the spec alone; None: only the worker
    StatefulSet can say (a role neither knows)."""
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
        return None


def _named(objs: Sequence[Obj], name: str) -> Obj | None:
    """The object called ``name`` (the last one, as a name-keyed map keeps it)."""
    found = None
    for o in objs:
        if o["metadata"]["name"] == name:
            found = o
    return found


class _Observer:
    """One observation's constants and memos (the catalog's answers per role, template hash and
    group revision: asked once per role replica, the same for most of them)."""

    def __init__(self, ms: ModelServing, catalog: RevisionCatalog) -> None:
        self.ms, self.catalog = ms, catalog
        self.workers: dict[tuple[str, str, str], int | None] = {}
        #: equal frozen states, one instance each (most replicas of a fleet are alike): fewer
        #: objects for the collector to track and traverse, the same values
        self.shared: dict[tuple[Any, ...], RoleReplicaState] = {}
        self.shared_roles: dict[tuple[int, ...], tuple[RoleReplicaState, ...]] = {}

    def state(self, role: str, r: int, template_hash: str, status: str, cost: int) -> RoleReplicaState:
        """``RoleReplicaState(role, r, template_hash, status, cost)``, one instance per value."""
        key = (role, r, template_hash, status, cost)
        try:
            found = self.shared.get(key)
        except TypeError:  # an unhashable label value (malformed input): not shared
            return RoleReplicaState(*key)
        if found is None:
            found = self.shared[key] = RoleReplicaState(*key)
        return found

    def roles(self, states: list[RoleReplicaState]) -> tuple[RoleReplicaState, ...]:
        """``tuple(states)``, one instance per sequence of states, keyed by identity: equality for
        shared states, and no identity is reused while the memo's tuple keeps its states alive."""
        key = tuple(map(id, states))
        found = self.shared_roles.get(key)
        if found is None:
            found = self.shared_roles[key] = tuple(states)
        return found

    def role_state(
        self, g: int, role: str, r: int, group_revision: str, sts: Sequence[Obj], pods: Sequence[Obj]
    ) -> tuple[RoleReplicaState, int]:
        """A role replica's state and its pods' deletion cost (module invariants); ``sts`` and
        ``pods`` are its objects in name order."""
        ms = self.ms
        cost = 0
        for p in pods:  # deletion_cost, inlined: per replica, and most pods carry no cost
            ann = annotations_of(p)
            if K.POD_DELETION_COST in ann:
                cost += deletion_cost((p,))
        if not sts and is_legacy(sts, pods):
            template_hash = _first_hash(sts, pods)
            return _legacy_state(
                ms,
                self.catalog,
                g,
                role,
                r,
                group_revision,
                {p["metadata"]["name"]: p for p in pods},
                template_hash,
                cost,
            ), cost
        base = names.entry_statefulset(ms.name, g, role, r)
        worker_name = f"{base}-{names.WORKER_SUFFIX}"
        entry = worker = None
        deleting = not sts
        for o in sts:  # _named of both names (the last of a name) and is_deleting, in one pass
            name = o["metadata"]["name"]
            if name == base:
                entry = o
            elif name == worker_name:
                worker = o
            deleting = deleting or is_deleting(o)
        template_hash = _first_hash((entry, worker), pods)
        if deleting:
            return self.state(role, r, template_hash, DELETING, cost), cost
        memo = (role, template_hash, group_revision)
        if memo not in self.workers:
            self.workers[memo] = _catalog_worker_replicas(ms, self.catalog, role, template_hash, group_revision)
        w = self.workers[memo]
        if w is None:
            w = _worker_replicas(ms, self.catalog, role, template_hash, group_revision, worker)
        ready = entry is not None and (w == 0 or worker is not None) and _all_ready(base, w, pods)
        return self.state(role, r, template_hash, RUNNING if ready else CREATING, cost), cost


def _first_hash(sts: Iterable[Obj | None], pods: Iterable[Obj]) -> str:
    """The first ``role-template-hash`` among ``sts`` (entry, worker; None: absent), then ``pods``
    (name order)."""
    for objs in (sts, pods):
        for o in objs:
            if o is None:
                continue
            h = labels_of(o).get(L.ROLE_TEMPLATE_HASH)
            if h:
                return h
    return ""


def _all_ready(base: str, w: int, pods: Sequence[Obj]) -> bool:
    """Whether the entry pod ``<base>-0`` and the worker pods ``<base>-w-1..W`` are all Running+Ready."""
    by_name = {p["metadata"]["name"]: p for p in pods}
    if not pod_running_and_ready(by_name.get(f"{base}-0")):
        return False
    prefix = f"{base}-{names.WORKER_SUFFIX}-"
    for i in range(1, w + 1):
        if not pod_running_and_ready(by_name.get(f"{prefix}{i}")):
            return False
    return True


def _legacy_state(
    ms: ModelServing,
    catalog: RevisionCatalog,
    g: int,
    role: str,
    r: int,
    group_revision: str,
    pods: Mapping[str, Obj],
    label_hash: str,
    cost: int,
) -> RoleReplicaState:
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


def legacy_worker_replicas(
    ms: ModelServing, catalog: RevisionCatalog, snapshot: Snapshot, replicas: ObservedReplicas | None = None
) -> dict[tuple[int, str, int], int]:
    """W of every legacy role replica of ``ms`` (its revision's role, as :func:`_legacy_state` reads it)."""
    out = {}
    for key, rep in legacy_replicas(ms.name, snapshot, replicas).items():
        revision = rep.revision
        h = _legacy_hash(ms, catalog, key[1], revision)
        out[key] = _worker_replicas(ms, catalog, key[1], h or "", revision, None)
    return out


def _group_revision(sts: Iterable[Sequence[Obj]], pods: Iterable[Sequence[Obj]]) -> str:
    """The most common ``revision`` label of the group's StatefulSets (ties: the smallest), else of
    its pods, else ``""``; ``sts`` and ``pods``: the group's objects, one sequence per replica."""
    for lists in (sts, pods):
        counts: dict[str, int] = {}
        for objs in lists:
            for o in objs:
                rev = labels_of(o).get(L.REVISION)
                if rev is not None and rev != "":
                    counts[rev] = counts.get(rev, 0) + 1
        if len(counts) == 1:
            return next(iter(counts))
        if counts:
            return min(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0]
    return ""


def spec_replicas_by_role(ms: ModelServing) -> dict[str, int]:
    """The live spec's ``replicas`` per role name (the first role of a name, as ``ms.role`` finds it)."""
    out: dict[str, int] = {}
    for r in ms.roles:
        out.setdefault(r.name, r.replicas)
    return out


def _group_running(
    ms: ModelServing,
    catalog: RevisionCatalog,
    revision: str,
    roles: Iterable[RoleReplicaState],
    wanted_of: Mapping[str, int] | None = None,
) -> bool:
    """Every role of the group's revision has its spec's count of Running replicas (by count, not
    by ordinal: a surge rollout can leave sparse role ordinals {1, 2}); a role the spec no longer
    has: every observed replica Running. ``wanted_of``: the spec's replicas per role, when known."""
    roles = tuple(roles)
    wanted_of = spec_replicas_by_role(ms) if wanted_of is None else wanted_of
    spec_roles = catalog.roles_of(revision) if revision in catalog else tuple(ms.roles)
    for role in spec_roles:
        name = role.name
        running = total = 0
        for r in roles:
            if r.role == name:
                total += 1
                running += r.status == RUNNING
        wanted = wanted_of.get(name)
        if wanted is None:  # a role the spec no longer has: every observed replica
            if running < total:
                return False
            wanted = total
        if running < wanted:
            return False
    return True


def observe_groups(
    snapshot: Snapshot, ms: ModelServing, catalog: RevisionCatalog, replicas: ObservedReplicas | None = None
) -> tuple[GroupState, ...]:
    """The ServingGroups of ``ms`` in ``snapshot`` (module invariants), ascending ordinal.
    ``replicas``: the reconcile's index of ``snapshot`` when the caller has it (same answer).
    A group whose objects are the very ones of the previous observation keeps its state
    (:mod:`pulumi_lws.modelserving.group_memo`, only under an observer's promise: same answer)."""
    replicas = replicas or observed_replicas(ms.name, snapshot)
    observer = _Observer(ms, catalog)
    wanted_of = spec_replicas_by_role(ms)
    memo = group_memo(snapshot, ms, catalog)
    out = []
    for g, keys in replicas.by_group():
        sts_lists = [replicas.statefulsets_of(k) for k in keys]
        pod_lists = [replicas.pods_of(k) for k in keys]
        pg = snapshot.get("PodGroup", names.podgroup(ms.name, g))
        if memo is None:
            out.append(_group_state(observer, wanted_of, g, keys, sts_lists, pod_lists, pg))
            continue
        objs = group_objects(sts_lists, pod_lists)
        state = memo.get(g, keys, objs, pg)
        if state is None:
            state = _group_state(observer, wanted_of, g, keys, sts_lists, pod_lists, pg)
        memo.put(g, keys, objs, pg, state)
        out.append(state)
    if memo is not None:
        memo.close()
    return tuple(out)


def _group_state(
    observer: _Observer,
    wanted_of: Mapping[str, int],
    g: int,
    keys: Sequence[tuple[int, str, int]],
    sts_lists: Sequence[Sequence[Obj]],
    pod_lists: Sequence[Sequence[Obj]],
    pg: Obj | None,
) -> GroupState:
    """Group ``g``'s state from its replicas' objects and its PodGroup (module invariants)."""
    ms, catalog = observer.ms, observer.catalog
    revision = _group_revision(sts_lists, pod_lists)
    roles = []
    cost = 0
    for (_, role, r), sts, pods in zip(keys, sts_lists, pod_lists):
        state, replica_cost = observer.role_state(g, role, r, revision, sts, pods)
        roles.append(state)
        cost += replica_cost
    if (pg is not None and is_deleting(pg)) or all(r.status == DELETING for r in roles):
        status = DELETING
    elif _group_running(ms, catalog, revision, roles, wanted_of):
        status = RUNNING
    else:
        status = CREATING
    return GroupState(g, revision, status, cost, observer.roles(roles))
