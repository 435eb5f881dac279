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
* :func:`modelserving_dependencies`: every StatefulSet after the ControllerRevisions of its
  group's and its template's revisions, its Service and its group's PodGroup.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pulumi_lws.core.dependencies import Ref, merge_dependencies, ref_of
from pulumi_lws.modelserving import labels as L
from pulumi_lws.modelserving import names
from pulumi_lws.modelserving.api.modelserving import ModelServing
from pulumi_lws.modelserving.render.declared import (
    DeclaredGroup,
    DeclaredRole,
    declare_all,
    role_replicas,
    spec_replicas,
)
from pulumi_lws.modelserving.render.podgroup import podgroup
from pulumi_lws.modelserving.render.statefulsets import role_replica_objects
from pulumi_lws.modelserving.revision import (
    RevisionCatalog,
    controller_revision,
    role_template_hash,
)

__all__ = ["DeclaredGroup", "DeclaredRole", "declare_all", "modelserving_dependencies", "render_modelserving",
           "revisions_in_use"]


def revisions_in_use(ms: ModelServing, declared: Sequence[DeclaredGroup], catalog: RevisionCatalog) -> list[str]:
    """Group revisions and role template revisions of ``declared``, plus the target; sorted."""
    keys = {catalog.target}
    for group in declared:
        keys.add(group.revision)
        keys.update(d.revision for d in role_replicas(ms, group, catalog))
    return sorted(keys)


def render_modelserving(ms: ModelServing, declared: Sequence[DeclaredGroup], catalog: RevisionCatalog,
                        namespace: str | None = None, *, keep_revisions: Iterable[str] = ()) -> list[dict[str, Any]]:
    """Every object the declaration needs (module invariants). ``namespace`` defaults to the spec's."""
    ns = namespace or ms.namespace
    scheduler = ms.spec.scheduler_name
    out = [controller_revision(ms.name, ns, key, catalog.roles[key])
           for key in sorted({*revisions_in_use(ms, declared, catalog), *keep_revisions})
           if _known(catalog, key)]
    seen: set[int] = set()
    hashes: dict[tuple[str, str], str] = {}  # (revision, role) -> role template hash: once, not per group
    for group in sorted(declared, key=lambda d: d.ordinal):
        if group.ordinal in seen:
            raise ValueError(f"ServingGroup {names.group_name(ms.name, group.ordinal)} is declared twice")
        seen.add(group.ordinal)
        replicas = role_replicas(ms, group, catalog)
        if scheduler == L.VOLCANO_SCHEDULER:
            counts = {r.name: spec_replicas(ms, r.name, sum(1 for d in replicas if d.role == r.name))
                      for r in catalog.roles_of(group.revision)}
            out.append(podgroup(ms, ns, group.ordinal, catalog.roles_of(group.revision), counts))
        for d in replicas:
            role = catalog.role(d.revision, d.role)
            key = (d.revision, d.role)
            if key not in hashes:
                hashes[key] = role_template_hash(role)
            out += role_replica_objects(ms.name, ns, scheduler, group.ordinal, group.revision,
                                        role, d.ordinal, d.revision, hashes[key])
    return out


def _known(catalog: RevisionCatalog, key: str) -> bool:
    if key not in catalog:
        raise KeyError(f"revision {key!r} is not stored in any ControllerRevision")
    return True


def modelserving_dependencies(manifests: Sequence[Mapping[str, Any]]) -> dict[Ref, tuple[Ref, ...]]:
    """Apply order: each StatefulSet after its revisions' ControllerRevisions, its Service and its
    PodGroup (read back from the manifests' labels and pod annotations, so any subset works)."""
    rules: dict[Ref, list[Ref]] = {}
    for m in manifests:
        if m.get("kind") != "StatefulSet":
            continue
        meta = m["metadata"]
        ms = meta["labels"][L.NAME]
        template = m["spec"]["template"]
        revisions = dict.fromkeys([meta["labels"].get(L.REVISION), template["metadata"]["labels"].get(L.REVISION)])
        deps = [("ControllerRevision", names.controller_revision(ms, rev)) for rev in revisions if rev]
        deps.append(("Service", m["spec"]["serviceName"]))
        deps.append(("PodGroup", meta["labels"][L.GROUP_NAME]))  # the PodGroup is named like its group
        rules[ref_of(m)] = deps
    return merge_dependencies(manifests, rules)
