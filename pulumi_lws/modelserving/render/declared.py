"""What the stage planner declares: which ServingGroups exist, on which revision, and (for
RoleRollingUpdate) which role replicas exist with which role template. Plain frozen values.

* :class:`DeclaredGroup` ``(ordinal, revision, roles=None)``: ServingGroup ``<ms>-<ordinal>`` whose
  own revision is ``revision`` (the ``revision`` label of its StatefulSets, the roles its PodGroup
  is computed from). ``roles=None`` = every role of that revision, each with the live spec's
  ``replicas`` (a role the live spec no longer has: 1, the CRD default -- pass ``roles``
  explicitly to keep an observed count), every replica on the group's revision.
* :class:`DeclaredRole` ``(role, ordinal, revision)``: role replica ``<role>-<ordinal>``; its pod
  templates and ``workerReplicas`` come from role ``role`` of revision ``revision`` (the pod label
  ``revision``). Keep the revision a replica was created on while its template hash is current: a
  different revision with the same hash still changes the pod label and so replaces the pods.

Invariant: :func:`role_replicas` is a pure function of (spec, declaration, catalog), sorted by
(role position in the group's revision, role name, ordinal), without duplicates.
"""

from __future__ import annotations

from dataclasses import dataclass

from pulumi_lws.modelserving.api.modelserving import ModelServing
from pulumi_lws.modelserving.revision import RevisionCatalog


@dataclass(frozen=True)
class DeclaredRole:
    role: str
    ordinal: int
    revision: str  # the revision whose roles[] holds this replica's template


@dataclass(frozen=True)
class DeclaredGroup:
    ordinal: int
    revision: str
    roles: tuple[DeclaredRole, ...] | None = None  # None: every role replica of `revision`


def spec_replicas(ms: ModelServing, role: str, default: int = 1) -> int:
    """The live spec's ``replicas`` of ``role`` (``default`` when the spec has no such role)."""
    try:
        return ms.role(role).replicas
    except KeyError:
        return default


def role_replicas(ms: ModelServing, group: DeclaredGroup, catalog: RevisionCatalog) -> tuple[DeclaredRole, ...]:
    """The role replicas of ``group``: as declared, or expanded from its revision (see module doc)."""
    order = {r.name: n for n, r in enumerate(catalog.roles_of(group.revision))}
    if group.roles is None:
        out = [DeclaredRole(name, r, group.revision) for name in order for r in range(spec_replicas(ms, name))]
    else:
        out = list({(d.role, d.ordinal): d for d in group.roles}.values())
    return tuple(sorted(out, key=lambda d: (order.get(d.role, len(order)), d.role, d.ordinal)))


def declare_all(ms: ModelServing, catalog: RevisionCatalog) -> tuple[DeclaredGroup, ...]:
    """The steady state: groups ``0..replicas-1`` on the target revision (creation, ``render`` CLI)."""
    return tuple(DeclaredGroup(g, catalog.target) for g in range(ms.replicas))
