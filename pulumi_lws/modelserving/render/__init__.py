"""ModelServing renderer (layer 4): (spec, declaration, RevisionCatalog) -> manifest dicts. Pure
and deterministic; docs/modelserving.md "Expansion" and "Rendering".

Input: ``declared`` -- a sequence of :class:`DeclaredGroup` (``ordinal``, ``revision``, optional
``roles``: :class:`DeclaredRole` ``(role, ordinal, revision)``), see
:mod:`pulumi_lws.modelserving.render.declared`. :func:`declare_all` gives the steady state.

Output order (every dependency before its dependents): ControllerRevisions (sorted by key), then
per group by ordinal: its PodGroup (``schedulerName == volcano``), then per role replica: its
Service, entry StatefulSet, worker StatefulSet.

Invariants:

* one ControllerRevision ``<ms>-<rev>`` per revision in use (group revisions, role template
  revisions), plus the target and ``keep_revisions`` (e.g. a revision a protected ordinal may be
  refilled from); a revision the catalog does not hold raises ``KeyError``;
* a group's role shape, templates, ``workerReplicas`` and PodGroup come from its own revision
  (role replicas: from their template revision); scheduling fields from the live spec;
* every object has ``metadata.namespace`` and the label ``modelserving.volcano.sh/name`` (the
  Scope's selector), group objects also ``group-name``; no ownerReferences;
* a role replica's objects are those of the previous render of the same ModelServing when
  every input is equal (:mod:`.replica_memo`), and objects share parts (:mod:`.shared`):
  rendered manifests are read-only for every consumer;
* :func:`modelserving_dependencies`: every StatefulSet after the ControllerRevisions of its
  group's and its template's revisions, its Service and its group's PodGroup.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

from pulumi_lws.core.contract.dependencies import Ref
from pulumi_lws.modelserving import labels as L
from pulumi_lws.modelserving import names
from pulumi_lws.modelserving.api.modelserving import ModelServing, Role
from pulumi_lws.modelserving.render import replica_memo
from pulumi_lws.modelserving.render.declared import (
    DeclaredGroup,
    DeclaredRole,
    declare_all,
    role_replicas,
    spec_replicas,
)
from pulumi_lws.modelserving.render.podgroup import podgroup, podgroup_spec
from pulumi_lws.modelserving.render.shared import SharedParts
from pulumi_lws.modelserving.render.statefulsets import role_replica_objects
from pulumi_lws.modelserving.revision import (
    RevisionCatalog,
    controller_revision,
    role_template_hash,
)

__all__ = [
    "DeclaredGroup",
    "DeclaredRole",
    "declare_all",
    "modelserving_dependencies",
    "render_modelserving",
    "revisions_in_use",
]


def revisions_in_use(
    ms: ModelServing,
    declared: Sequence[DeclaredGroup],
    catalog: RevisionCatalog,
    expanded: dict[str, tuple[DeclaredRole, ...]] | None = None,
) -> list[str]:
    """Group revisions and role template revisions of ``declared``, plus the target; sorted.
    ``expanded``: a memo of :func:`_role_replicas` to share with the caller."""
    keys = {catalog.target}
    expanded = {} if expanded is None else expanded
    for group in declared:
        keys.add(group.revision)
        keys.update(d.revision for d in _role_replicas(ms, group, catalog, expanded))
    return sorted(keys)


def _role_replicas(
    ms: ModelServing, group: DeclaredGroup, catalog: RevisionCatalog, expanded: dict[str, tuple[DeclaredRole, ...]]
) -> tuple[DeclaredRole, ...]:
    """:func:`role_replicas`; a group declared without roles expands from its revision alone, so
    that expansion (frozen values) is computed once per revision and shared."""
    if group.roles is not None:
        return role_replicas(ms, group, catalog)
    if group.revision not in expanded:
        expanded[group.revision] = role_replicas(ms, group, catalog)
    return expanded[group.revision]


def render_modelserving(
    ms: ModelServing,
    declared: Sequence[DeclaredGroup],
    catalog: RevisionCatalog,
    namespace: str | None = None,
    *,
    keep_revisions: Iterable[str] = (),
) -> list[dict[str, Any]]:
    """Every object the declaration needs (module invariants). ``namespace`` defaults to the spec's."""
    ns = namespace or ms.namespace
    scheduler = ms.spec.scheduler_name
    expanded: dict[
        str, tuple[DeclaredRole, ...]
    ] = {}  # revision -> the role replicas of a group declared without roles
    out = [
        controller_revision(ms.name, ns, key, catalog.roles[key])
        for key in sorted({*revisions_in_use(ms, declared, catalog, expanded), *keep_revisions})
        if _known(catalog, key)
    ]
    seen: set[int] = set()
    # per (revision, role), once, not per group: the role, its template hash, its memo context
    roles_by_key: dict[tuple[str, str], Role] = {}
    hashes: dict[tuple[str, str], str] = {}
    contexts: dict[tuple[str, str], Hashable] = {}
    memo = replica_memo.ReplicaMemo(ns, ms.name)  # the previous render's replicas (render/replica_memo.py)
    parts = SharedParts()  # the parts every group's objects share (render/shared.py)
    for group in sorted(declared, key=lambda d: d.ordinal):
        if group.ordinal in seen:
            raise ValueError(f"ServingGroup {names.group_name(ms.name, group.ordinal)} is declared twice")
        seen.add(group.ordinal)
        replicas = _role_replicas(ms, group, catalog, expanded)
        if scheduler == L.VOLCANO_SCHEDULER:
            roles = catalog.roles_of(group.revision)
            counts = {r.name: spec_replicas(ms, r.name, sum(1 for d in replicas if d.role == r.name)) for r in roles}
            key = ("podgroup", group.revision, *counts.items())
            spec = parts.part(key, functools.partial(podgroup_spec, ms, roles, counts))
            name = parts.group_name(ms.name, group.ordinal)
            out.append(podgroup(ms, ns, group.ordinal, roles, counts, spec=spec, name=name))
        for d in replicas:
            key = (d.revision, d.role)
            if key not in contexts:
                role = roles_by_key[key] = catalog.role(d.revision, d.role)
                hashes[key] = role_template_hash(role)
                contexts[key] = replica_memo.context(scheduler, role, hashes[key])
            out += memo.objects(
                contexts[key],
                group.ordinal,
                group.revision,
                d.ordinal,
                d.revision,
                functools.partial(
                    role_replica_objects,
                    ms.name,
                    ns,
                    scheduler,
                    group.ordinal,
                    group.revision,
                    roles_by_key[key],
                    d.ordinal,
                    d.revision,
                    hashes[key],
                    parts,
                ),
            )
    memo.close()
    return out


def _known(catalog: RevisionCatalog, key: str) -> bool:
    if key not in catalog:
        raise KeyError(f"revision {key!r} is not stored in any ControllerRevision")
    return True


def modelserving_dependencies(
    manifests: Sequence[Mapping[str, Any]], *, check_order: bool = False
) -> dict[Ref, tuple[Ref, ...]]:
    """Apply order: each StatefulSet after its revisions' ControllerRevisions, its Service and its
    PodGroup (read back from the manifests' labels and pod annotations, so any subset works).

    Same contract as :func:`~pulumi_lws.core.contract.dependencies.merge_dependencies` of those rules:
    declared objects only, none on itself, first-seen order, StatefulSets with no dependency left
    out. ``check_order``: also raise ``ValueError`` as
    :func:`~pulumi_lws.core.contract.dependencies.check_dependency_order` does when a dependency comes
    after its dependent (one pass for both)."""
    # positions of the dependencies only (no StatefulSet is one): a StatefulSet's own position is
    # its index below, its last one when its ref repeats (``_last_position``, on the error path)
    position: dict[Ref, int] = {}
    shared: dict[Ref, Ref] = {}  # one tuple per dependency, shared by every StatefulSet naming it
    for n, m in enumerate(manifests):
        kind = m["kind"]
        if kind != "StatefulSet":
            ref = (kind, m["metadata"]["name"])
            position[ref] = n
            shared[ref] = ref
    out: dict[Ref, tuple[Ref, ...]] = {}
    # the ControllerRevisions of (ms, group revision, template revision), and their last position:
    # a handful of combinations, met by every StatefulSet
    revisions: dict[tuple[Any, ...], tuple[tuple[Ref, ...], int]] = {}
    # (inputs, deps, their last position) of the previous StatefulSet: a replica's two share them
    last: tuple[Any, ...] = ()
    for n, m in enumerate(manifests):
        if m.get("kind") != "StatefulSet":
            continue
        meta = m["metadata"]
        labels = meta["labels"]
        spec = m["spec"]
        inputs = (
            labels[L.NAME],
            labels.get(L.REVISION),
            spec["template"]["metadata"]["labels"].get(L.REVISION),
            spec["serviceName"],
            labels[L.GROUP_NAME],
        )
        ref = ("StatefulSet", meta["name"])
        if last and last[0] == inputs:
            deps, at = last[1], last[2]
        else:
            combo = inputs[:3]
            known = revisions.get(combo)
            if known is None:
                ms = inputs[0]
                wanted = [
                    ("ControllerRevision", names.controller_revision(ms, rev))
                    for rev in dict.fromkeys(combo[1:])
                    if rev
                ]
                found = tuple(dict.fromkeys(shared[d] for d in wanted if d in shared))
                known = revisions[combo] = (found, max((position[d] for d in found), default=-1))
            deps, at = known
            # then the Service and the PodGroup (named like its group): other kinds, so no repeat
            for wanted_ref in (("Service", inputs[3]), ("PodGroup", inputs[4])):
                dep = shared.get(wanted_ref)
                if dep is not None:
                    deps += (dep,)
                    at = max(at, position[dep])
            last = (inputs, deps, at)
        # never on itself: every dependency is of another kind than StatefulSet
        if not deps:
            out.pop(ref, None)
            continue
        if check_order and at >= n:
            at = _last_position(manifests, ref, n)
            late = [d for d in deps if position[d] >= at]
            if late:
                raise ValueError(f"{ref} is declared before its dependencies {late}")
        out[ref] = deps
    return out


def _last_position(manifests: Sequence[Mapping[str, Any]], ref: Ref, n: int) -> int:
    """The position of ``ref``'s last occurrence at or after ``n`` (``check_dependency_order`` reads
    a ref's position from its last occurrence)."""
    for k in range(len(manifests) - 1, n, -1):
        m = manifests[k]
        if (m["kind"], m["metadata"]["name"]) == ref:
            return k
    return n
