"""pulumi-lws name budgets: every name the expansion generates fits Kubernetes' limits.

Invariant: checked for the largest ordinals a rollout can reach — ServingGroup
``replicas + maxSurge - 1`` (ServingGroupRollingUpdate) and role replica
``role.replicas + role maxSurge - 1`` (RoleRollingUpdate) — so no stage of any rollout can fail on
a name. Every failure names the generated object, the name, its length and the limit, with path
``metadata.name``. Per role only the binding (first failing) check is reported; the checks are
ordered from the strictest (a StatefulSet's ``controller-revision-hash`` pod label, 52 characters
for the name) to the loosest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pulumi_lws.modelserving import names as N
from pulumi_lws.modelserving.api.fields import Errors, err, scaled_or

if TYPE_CHECKING:
    from pulumi_lws.modelserving.api.modelserving import ModelServing, Role


def largest_group_ordinal(ms: ModelServing) -> int:
    """``replicas + maxSurge - 1`` (maxSurge only under ServingGroupRollingUpdate; unscalable = 0)."""
    surge = 0
    if ms.strategy == "ServingGroupRollingUpdate":
        surge = scaled_or(ms.rolling_update_configuration().max_surge, ms.replicas, True, 0)
    return max(ms.replicas + max(surge, 0) - 1, 0)


def largest_role_ordinal(ms: ModelServing, role: Role) -> int:
    """``role.replicas + role maxSurge - 1`` (role maxSurge only under RoleRollingUpdate)."""
    surge = scaled_or(role.max_surge, role.replicas, True, 0) if ms.strategy == "RoleRollingUpdate" else 0
    return max(role.replicas + max(surge, 0) - 1, 0)


MAX_INT32 = 2**31 - 1


def largest_fleet_pods(ms: ModelServing) -> int:
    """Pods of the largest fleet a rollout reaches: ``(replicas + maxSurge)`` ServingGroups, each
    with ``Σ_roles (role.replicas + role maxSurge) × (1 + workerReplicas)`` pods."""
    per_group = sum((largest_role_ordinal(ms, r) + 1) * (1 + max(r.worker_replicas, 0)) for r in ms.spec.template.roles)
    return (largest_group_ordinal(ms) + 1) * per_group


def fleet_fits_int32(ms: ModelServing) -> Errors:
    """pulumi-lws (as LeaderWorkerSet's ``replicas × size``): the pods of the largest fleet a
    rollout reaches fit an int32 — a ServingGroup's PodGroup counts its pods in the int32
    ``minMember``, and a fleet no int32 can count is refused at once instead of being rendered
    group by group (``maxSurge: 2147483647`` would ask for two billion surge groups)."""
    if any(r.replicas < 0 or r.worker_replicas < 0 for r in ms.spec.template.roles) or ms.replicas < 0:
        return []  # the webhook reports negative counts
    pods = largest_fleet_pods(ms)
    if pods <= MAX_INT32:
        return []
    return err(
        "spec.replicas",
        f"the pods of the largest fleet a rollout reaches ((replicas + maxSurge) x "
        f"Σ roles (replicas + maxSurge) x (workerReplicas + 1) = {pods}) must not exceed {MAX_INT32} "
        "(pulumi-lws)",
        ms.replicas,
    )


def _sts_message(what: str, sts: str, where: str) -> str:
    label_len = len(sts) + 1 + N.REVISION_HASH_MAX
    return (
        f'{what} "{sts}" ({where}) is {len(sts)} characters: its pods get the label controller-revision-hash '
        f'"{sts}-<{N.REVISION_HASH_MAX}-character hash>" ({label_len} characters) and a label value is at most '
        f"{N.LABEL_MAX}, so this name may have at most {N.STATEFULSET_MAX}; shorten metadata.name or the role "
        f"name by {len(sts) - N.STATEFULSET_MAX} (pulumi-lws name budget)"
    )


def _plain_message(what: str, name: str, where: str) -> str:
    return (
        f'{what} "{name}" ({where}) is {len(name)} characters but at most {N.LABEL_MAX} are allowed; '
        f"shorten metadata.name or the role name by {len(name) - N.LABEL_MAX} (pulumi-lws name budget)"
    )


def _role_budget(ms: ModelServing, role: Role, g: int) -> Errors:
    r = largest_role_ordinal(ms, role)
    where = f"ServingGroup {g}, role {role.name} replica {r}: the largest ordinals a rollout reaches"
    entry, worker = N.entry_statefulset(ms.name, g, role.name, r), N.worker_statefulset(ms.name, g, role.name, r)
    sts_checks = ([("worker StatefulSet", worker)] if role.worker_replicas > 0 else []) + [("entry StatefulSet", entry)]
    for what, sts in sts_checks:
        if len(sts) > N.STATEFULSET_MAX:
            return err("metadata.name", _sts_message(what, sts, where), ms.name)
    plain = [
        ("headless Service", N.service(ms.name, g, role.name, r)),
        ("entry pod", N.entry_pod(ms.name, g, role.name, r)),
        ("role-id label value", N.role_id(role.name, r)),
    ]
    if role.worker_replicas > 0:
        plain.insert(2, ("worker pod", N.worker_pod(ms.name, g, role.name, r, role.worker_replicas)))
    for what, name in plain:
        if len(name) > N.LABEL_MAX:
            return err("metadata.name", _plain_message(what, name, where), ms.name)
    return []


def name_budgets(ms: ModelServing) -> Errors:
    """Every generated name fits (roles first, then the ServingGroup's PodGroup and ControllerRevision)."""
    if not ms.name:
        return []
    g = largest_group_ordinal(ms)
    errs: Errors = []
    for role in ms.spec.template.roles:
        errs += _role_budget(ms, role, g)
    group = N.group_name(ms.name, g)
    if len(group) > N.LABEL_MAX:
        errs += err(
            "metadata.name",
            _plain_message(
                "PodGroup and group-name label value", group, f"ServingGroup {g}, the largest ordinal a rollout reaches"
            ),
            ms.name,
        )
    revision = N.controller_revision(ms.name, "x" * N.REVISION_HASH_MAX)
    if len(revision) > N.SUBDOMAIN_MAX:
        errs += err(
            "metadata.name",
            f'ControllerRevision "{ms.name}-<revision>" is {len(revision)} characters with a '
            f"{N.REVISION_HASH_MAX}-character revision but at most {N.SUBDOMAIN_MAX} are allowed; shorten "
            f"metadata.name by {len(revision) - N.SUBDOMAIN_MAX} (pulumi-lws name budget)",
            ms.name,
        )
    return errs
