"""Observed ServingGroup / role-replica state, as plain frozen values (layer 0: imports only core).

The decision functions in :mod:`pulumi_lws.modelserving.rollout` and :mod:`pulumi_lws.modelserving.status`
take these, never the API model: a :class:`GroupState` is upstream's datastore ``ServingGroup``
(ordinal, revision, status) plus the summed pod-deletion cost; a :class:`RoleReplicaState` is one
datastore ``Role`` entry (``<role>-<ordinal>``) with its ``role-template-hash`` label.

Statuses are upstream's datastore statuses (``Running`` = ready/available; every other status is
"not ready"). ``template_hash == ""`` means the label is missing (unknown).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from operator import attrgetter

RUNNING = "Running"
CREATING = "Creating"
SCALING = "Scaling"
DELETING = "Deleting"
NOT_FOUND = "NotFound"
GROUP_STATUSES = (RUNNING, CREATING, SCALING, DELETING, NOT_FOUND)
ROLE_STATUSES = (RUNNING, CREATING, DELETING, NOT_FOUND)

#: upstream ``utils.servingGroupRegex`` (also used for role ids ``<role>-<n>``)
ORDINAL_RE = re.compile(r"(.*)-([0-9]+)$")


@dataclass(frozen=True)
class RoleReplicaState:
    """One role replica ``<role>-<ordinal>`` of a ServingGroup, as observed."""

    role: str
    ordinal: int
    template_hash: str = ""  # "" = the role-template-hash label is missing
    status: str = CREATING
    deletion_cost: int = 0

    @property
    def id(self) -> str:
        return role_id(self.role, self.ordinal)


@dataclass(frozen=True)
class GroupState:
    """One ServingGroup ``<ms>-<ordinal>``, as observed."""

    ordinal: int
    revision: str
    status: str = CREATING
    deletion_cost: int = 0
    roles: tuple[RoleReplicaState, ...] = ()

    def with_status(self, status: str) -> GroupState:
        return replace(self, status=status)

    def role_replicas(self, role: str) -> tuple[RoleReplicaState, ...]:
        """This group's replicas of ``role``, ascending ordinal (Deleting ones included)."""
        return tuple(sorted((r for r in self.roles if r.role == role), key=lambda r: r.ordinal))


def is_running(x: GroupState | RoleReplicaState) -> bool:
    return x.status == RUNNING


def is_deleting(x: GroupState | RoleReplicaState) -> bool:
    return x.status == DELETING


def parse_ordinal(name: str) -> tuple[str, int]:
    """upstream ``GetParentNameAndOrdinal``: ``("vllm-sample", 0)`` for ``vllm-sample-0``; ``("", -1)`` if no match."""
    m = ORDINAL_RE.match(name)
    if not m:
        return "", -1
    return m.group(1), int(m.group(2))


def group_name(ms: str, ordinal: int) -> str:
    return f"{ms}-{ordinal}"


def role_id(role: str, ordinal: int) -> str:
    return f"{role}-{ordinal}"


_ORDINAL = attrgetter("ordinal")


def by_ordinal(items: Iterable[GroupState]) -> tuple[GroupState, ...]:
    """Upstream's datastore order: ascending ordinal."""
    return tuple(sorted(items, key=_ORDINAL))
