"""RoleRollingUpdate pieces, per (ServingGroup, role): upstream ``rolesToDeleteForRoleRollingUpdate``
(l.1541, ``outdatedRoles`` l.1630, ``calMaxScaleDown`` l.3045), ``hasUpdateableOutdatedRole``,
``scaleUpRoles`` (l.1005), ``scaleDownRoles`` and ``manageRoleReplicasPerGroup`` (l.1114), pure.

Outdatedness is per role replica, by template hash: a replica's hash is its
``role-template-hash`` label, or (legacy, label missing) the hash of the role in its group's
ControllerRevision (``legacy_hash``); unknown -> skipped, never restarted.

``choices.partition`` = ``"position"`` is upstream (the first P entries of the ordinal-sorted list,
Deleting included; vector ROLE-RU-105); ``"ordinal"`` is pulumi-lws (ordinal < P).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from pulumi_lws.modelserving.groups import (
    RoleReplicaState,
    is_deleting,
    is_running,
    role_id,
)
from pulumi_lws.modelserving.rollout.budgets import (
    UPSTREAM,
    Choices,
    RoleBudget,
    split_protected,
)
from pulumi_lws.modelserving.rollout.ordinals import for_each_missing_ordinal
from pulumi_lws.modelserving.rollout.scale_down import scale_down_roles


def known_hash(r: RoleReplicaState, legacy_hash: str | None = None) -> str:
    """The replica's template hash: its label, else the legacy ControllerRevision hash, else ""."""
    return r.template_hash or legacy_hash or ""


def _split(
    replicas: Sequence[RoleReplicaState], partition: int, mode: str
) -> tuple[list[RoleReplicaState], list[RoleReplicaState], list[RoleReplicaState]]:
    ordered = sorted(replicas, key=lambda r: r.ordinal)
    prot, rest = split_protected(ordered, [r.ordinal for r in ordered], partition, mode)
    return ordered, prot, rest


@dataclass(frozen=True)
class RoleDeletion:
    to_delete: tuple[str, ...] = ()  # role ids in deletion order
    has_outdated: bool = False
    budget: int | None = None  # None: maxUnavailable not configured (all outdated)


def role_replicas_to_delete(
    replicas: Sequence[RoleReplicaState],
    expected_hash: str,
    budget: RoleBudget,
    *,
    legacy_hash: str | None = None,
    choices: Choices = UPSTREAM,
) -> RoleDeletion:
    """One role of one ServingGroup: the outdated replicas to delete within the per-role budget.

    Budget ``k = max(0, |list| - max(0, replicas - maxUnavailable) - newUnavailable)``, where Deleting
    replicas and not-Running replicas of the current hash are new-unavailable; candidates:
    non-Running first, then highest ordinal; protected replicas are never candidates. With
    ``choices.subtract_protected_unavailable``, not-Running protected replicas also consume budget.
    """
    ordered, prot, _ = _split(replicas, budget.partition, choices.partition)
    prot_ids = {r.ordinal for r in prot}
    outdated: list[RoleReplicaState] = []
    new_unavailable = 0
    for r in ordered:
        if is_deleting(r):
            new_unavailable += 1
            continue
        h = known_hash(r, legacy_hash)
        if not h:
            continue
        if h != expected_hash:
            outdated.append(r)
        elif not is_running(r):
            new_unavailable += 1
    outdated.sort(key=lambda r: (is_running(r), -r.ordinal))
    candidates = [r for r in outdated if r.ordinal not in prot_ids]
    if not candidates:
        has = any(not is_deleting(r) and known_hash(r, legacy_hash) not in ("", expected_hash) for r in prot)
        return RoleDeletion((), has, 0)
    if budget.max_unavailable is None:
        return RoleDeletion(tuple(r.id for r in candidates), True, None)
    if budget.invalid:
        return RoleDeletion((), True, 0)
    floor = max(0, budget.replicas - budget.max_unavailable)  # upstream clamps here (calMaxScaleDown)
    k = len(ordered) - floor - new_unavailable
    if choices.subtract_protected_unavailable:
        k -= sum(1 for r in prot if not is_running(r) and not is_deleting(r))
    k = max(0, k)
    return RoleDeletion(tuple(r.id for r in candidates[:k]), True, k)


@dataclass(frozen=True)
class RoleSpec:
    """A role of the current spec, as the decisions need it (plain values)."""

    name: str
    replicas: int
    template_hash: str  # CalRoleTemplateHash of the current spec's role
    budget: RoleBudget


def roles_to_delete_for_role_rolling_update(
    roles: Sequence[RoleReplicaState],
    specs: Sequence[RoleSpec],
    *,
    legacy_hashes: Mapping[str, str] | None = None,
    choices: Choices = UPSTREAM,
) -> RoleDeletion:
    """``rolesToDeleteForRoleRollingUpdate`` for one ServingGroup: every spec role's picks (spec
    order), then every non-Deleting replica of a role no longer in the spec, by (role name, ordinal)
    — deterministic where upstream iterates a map."""
    legacy = legacy_hashes or {}
    out: list[str] = []
    has = False
    names = {s.name for s in specs}
    for s in specs:
        d = role_replicas_to_delete(
            [r for r in roles if r.role == s.name],
            s.template_hash,
            s.budget,
            legacy_hash=legacy.get(s.name),
            choices=choices,
        )
        out += d.to_delete
        has |= d.has_outdated
    removed = sorted(
        (r for r in roles if r.role not in names and not is_deleting(r)), key=lambda r: (r.role, r.ordinal)
    )
    if removed:
        has = True
        out += [r.id for r in removed]
    return RoleDeletion(tuple(out), has)


def has_updateable_outdated_role(
    replicas: Sequence[RoleReplicaState],
    expected_hash: str,
    partition: int,
    *,
    legacy_hash: str | None = None,
    mode: str = "position",
) -> bool:
    """A non-Deleting replica the role partition does not protect, with a known hash != current
    (the trigger for adding the role's maxSurge)."""
    _, _, rest = _split(replicas, partition, mode)
    return any(not is_deleting(r) and known_hash(r, legacy_hash) not in ("", expected_hash) for r in rest)


@dataclass(frozen=True)
class RoleCreation:
    ordinal: int
    revision: str
    template_hash: str
    protected: bool = False


def scale_up_roles(
    existing_ordinals: Collection[int],
    expected_count: int,
    *,
    update_revision: str = "",
    template_hash: str = "",
    partition: int = 0,
    protected_revision: str | None = None,
    protected_hash: str | None = None,
) -> tuple[RoleCreation, ...]:
    """``scaleUpRoles``: missing ordinals of ``[0, expected)``, at most ``expected - len(list)``
    (Deleting ordinals stay reserved: they are in ``existing_ordinals``). An ordinal ``< partition``
    takes the protected revision and its role template (``status.currentRevision`` or the first
    other ControllerRevision, resolved by the caller); others the update revision and current hash."""
    existing = list(existing_ordinals)
    out = []
    for o in for_each_missing_ordinal(expected_count, existing, expected_count - len(existing)):
        if o < partition and protected_revision is not None:
            out.append(RoleCreation(o, protected_revision, protected_hash or template_hash, True))
        else:
            out.append(RoleCreation(o, update_revision, template_hash))
    return tuple(out)


@dataclass(frozen=True)
class RoleReplicaSync:
    expected_count: int
    created: tuple[RoleCreation, ...] = ()
    deleted: tuple[str, ...] = ()
    #: existing replicas with missing pods, recreated from this template hash (upstream: the current
    #: template unless partition-protected)
    repaired: tuple[tuple[str, str], ...] = ()


def expected_role_count(
    replicas: Sequence[RoleReplicaState],
    spec: RoleSpec,
    *,
    role_rolling_update: bool = True,
    legacy_hash: str | None = None,
    mode: str = "position",
) -> int:
    expected = spec.replicas
    if (
        role_rolling_update
        and spec.budget.max_surge > 0
        and has_updateable_outdated_role(
            replicas, spec.template_hash, spec.budget.partition, legacy_hash=legacy_hash, mode=mode
        )
    ):
        expected += spec.budget.max_surge
    return expected


def manage_role_replicas_per_group(
    replicas: Sequence[RoleReplicaState],
    spec: RoleSpec,
    update_revision: str,
    *,
    missing_pods: Collection[int] = (),
    role_rolling_update: bool = True,
    legacy_hash: str | None = None,
    protected_revision: str | None = None,
    protected_hash: str | None = None,
    choices: Choices = UPSTREAM,
) -> RoleReplicaSync:
    """``manageRoleReplicasPerGroup``: the role's expected count (``replicas`` + role ``maxSurge``
    while an updateable outdated replica exists), pod repair, then scale up or binpack down."""
    expected = expected_role_count(
        replicas, spec, role_rolling_update=role_rolling_update, legacy_hash=legacy_hash, mode=choices.partition
    )
    _, prot, _ = _split(replicas, spec.budget.partition, choices.partition)
    prot_ids = {r.ordinal for r in prot}
    repaired = tuple(
        (r.id, (r.template_hash or spec.template_hash) if r.ordinal in prot_ids else spec.template_hash)
        for r in sorted(replicas, key=lambda r: r.ordinal)
        if r.ordinal in missing_pods and not is_deleting(r)
    )
    if len(replicas) < expected:
        created = scale_up_roles(
            [r.ordinal for r in replicas],
            expected,
            update_revision=update_revision,
            template_hash=spec.template_hash,
            partition=spec.budget.partition,
            protected_revision=protected_revision,
            protected_hash=protected_hash,
        )
        return RoleReplicaSync(expected, created, (), repaired)
    if len(replicas) > expected:
        return RoleReplicaSync(
            expected,
            (),
            tuple(scale_down_roles(replicas, expected, spec.budget.partition, choices.partition)),
            repaired,
        )
    return RoleReplicaSync(expected, (), (), repaired)


__all__ = [
    "RoleCreation",
    "RoleDeletion",
    "RoleReplicaSync",
    "RoleSpec",
    "expected_role_count",
    "has_updateable_outdated_role",
    "known_hash",
    "manage_role_replicas_per_group",
    "role_id",
    "role_replicas_to_delete",
    "roles_to_delete_for_role_rolling_update",
    "scale_up_roles",
]
