"""What the RoleRollingUpdate stage planner returns: a :class:`PlannedReplica` per role replica, a
:class:`RolePlan` per stage.

Plain frozen values, apart from :mod:`~pulumi_lws.modelserving.rollout.role_planner` so that
module holds only the decisions: nothing here decides, it only derives. A
:class:`PlannedReplica`'s ``change`` is :data:`CREATE`, :data:`REPLACE`, :data:`DELETE` or empty
(kept as observed); one whose status is Deleting is not ``declared``. A ServingGroup is *ready*
when every spec role has at least ``role.replicas`` declared Running replicas, and *updated* when
every declared replica is on its role's template (a replica without the template label counts as
updated) and none is being deleted; the ``old|new`` lanes count replicas the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pulumi_lws.core.contract.stage import Blocker, Lane, PredictedStage
from pulumi_lws.modelserving.groups import DELETING, RUNNING, RoleReplicaState
from pulumi_lws.modelserving.rollout.role import RoleSpec

CREATE, REPLACE, DELETE = "create", "replace", "delete"


@dataclass(frozen=True)
class PlannedReplica:
    group: int
    role: str
    ordinal: int
    template_hash: str
    status: str
    change: str = ""
    observed: bool = True
    #: Σ pod-deletion-cost of the observed replica's pods (kept while they are); 0 once created or
    #: replaced (new pods). ``scaleDownRoles`` deletes the cheapest Running replica first
    deletion_cost: int = 0

    @property
    def declared(self) -> bool:
        return self.status != DELETING

    @property
    def key(self) -> str:
        """The Stage encoding: ``"<group>/<role>/<ordinal>"``."""
        return f"{self.group}/{self.role}/{self.ordinal}"

    def state(self) -> RoleReplicaState:
        return RoleReplicaState(self.role, self.ordinal, self.template_hash, self.status, self.deletion_cost)


@dataclass(frozen=True)
class RolePlan:
    update_revision: str
    specs: tuple[RoleSpec, ...]
    replicas: int
    group_revisions: Mapping[int, str]
    observed_group_revisions: Mapping[int, str]
    roles: tuple[PlannedReplica, ...]
    blocker: Blocker | None = None
    complete: bool = False
    remaining: tuple[PredictedStage, ...] = ()
    warnings: tuple[str, ...] = ()
    deferred: tuple[int, ...] = ()  # groups held back by max_groups_in_flight
    new_groups: tuple[int, ...] = ()
    deleted_groups: tuple[int, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.new_groups or self.deleted_groups) or any(r.change for r in self.roles)

    @property
    def desired(self) -> dict[str, str]:
        """``"g/role/r"`` -> template hash of every declared role replica."""
        return {r.key: r.template_hash for r in self.roles if r.declared}

    def group_ready(self, g: int) -> bool:
        return group_ready(self.roles, g, self.specs)

    def group_updated(self, g: int) -> bool:
        return group_updated(self.roles, g, self.specs)

    def role_lanes(self) -> tuple[Lane, ...]:
        """Per spec role, its declared replicas in every group on an old template | on the role's
        template (a replica without the label counts as updated, as :func:`group_updated`), and
        how many of each are Running: the ``old|new`` lanes of a RoleRollingUpdate stage table."""
        by = {s.name: s.template_hash for s in self.specs}
        return role_lanes(
            (
                (r.role, r.template_hash in ("", by[r.role]), r.status == RUNNING)
                for r in self.roles
                if r.declared and r.role in by
            ),
            order=tuple(by),
        )

    def chars(self) -> str:
        out = []
        for g in sorted(self.group_revisions):
            upd, ready = self.group_updated(g), self.group_ready(g)
            out.append(("U" if ready else "u") if upd else ("o" if ready else "x"))
        return "".join(out)


def role_lanes(replicas: Iterable[tuple[str, bool, bool]], order: Sequence[str] = ()) -> tuple[Lane, ...]:
    """``(role, updated, ready)`` per live role replica -> one :class:`Lane` (unit ``replicas``) per role: the roles
    of ``order`` first (the spec's, a lane even when empty), then others in first-seen order."""
    counts: dict[str, list[int]] = {name: [0, 0, 0, 0] for name in order}
    for role, updated, ready in replicas:
        c = counts.setdefault(role, [0, 0, 0, 0])
        k = 1 if updated else 0
        c[k] += 1
        c[k + 2] += 1 if ready else 0
    return tuple(Lane(name, c[0], c[1], c[2], c[3], unit="replicas") for name, c in counts.items())


def group_ready(roles: Sequence[PlannedReplica], g: int, specs: Sequence[RoleSpec]) -> bool:
    return all(
        sum(1 for r in roles if r.group == g and r.role == s.name and r.declared and r.status == RUNNING) >= s.replicas
        for s in specs
    )


def group_updated(roles: Sequence[PlannedReplica], g: int, specs: Sequence[RoleSpec]) -> bool:
    by = {s.name: s.template_hash for s in specs}
    mine = [r for r in roles if r.group == g]
    return all(r.role in by and r.template_hash in ("", by[r.role]) for r in mine if r.declared) and not any(
        not r.declared for r in mine
    )


def group_updated_declared(mine: Sequence[PlannedReplica], specs: Sequence[RoleSpec]) -> bool:
    """No declared replica left on an outdated known hash (upstream ``UpdateServingGroupRevision``)."""
    by = {s.name: s.template_hash for s in specs}
    return all(r.role in by and r.template_hash in ("", by[r.role]) for r in mine if r.declared)
