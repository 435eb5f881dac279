"""ServingGroup replica sync and rolling deletion (upstream ``syncServingGroupReplicas`` l.650,
``hasUpdateableOutdatedServingGroup`` l.706, ``manageRollingUpdate`` l.1374 ->
``deleteOutdatedServingGroups`` l.1474), one pass each, pure.

``choices`` (:mod:`.budgets`) selects upstream's positional partition and unclamped budget
(:data:`UPSTREAM`, the conformance vectors) or pulumi-lws's (:data:`PULUMI_LWS`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pulumi_lws.modelserving.groups import GroupState, by_ordinal, is_running
from pulumi_lws.modelserving.rollout.budgets import (
    UPSTREAM,
    Choices,
    ServingGroupBudget,
    max_scale_down,
    select_outdated_to_delete,
    split_protected,
)
from pulumi_lws.modelserving.rollout.scale_down import scale_down_servinggroups
from pulumi_lws.modelserving.rollout.scale_up import Creation, scale_up_servinggroups


def is_outdated(g: GroupState, update_revision: str) -> bool:
    """upstream: datastore revision != the update revision (``isServingGroupOutdated`` is dead code)."""
    return g.revision != update_revision


def eligible_groups(groups: Sequence[GroupState], partition: int, mode: str) -> list[GroupState]:
    """The groups the partition does not protect, ascending ordinal (Deleting entries included)."""
    ordered = by_ordinal(groups)
    return split_protected(ordered, [g.ordinal for g in ordered], partition, mode)[1]


def protected_groups(groups: Sequence[GroupState], partition: int, mode: str) -> list[GroupState]:
    ordered = by_ordinal(groups)
    return split_protected(ordered, [g.ordinal for g in ordered], partition, mode)[0]


def has_updateable_outdated_servinggroup(
    groups: Sequence[GroupState], update_revision: str, partition: int, mode: str = "position"
) -> bool:
    """Any outdated group (any status, Deleting included) the partition does not protect.

    The trigger for adding maxSurge to the expected count. Upstream is positional (vector
    SG-SURGE-82: ``{2:old, 5:new}``, P=1 -> False); pulumi-lws is ordinal (-> True: ordinal 2 >= 1).
    """
    return any(is_outdated(g, update_revision) for g in eligible_groups(groups, partition, mode))


def expected_servinggroup_count(
    groups: Sequence[GroupState],
    budget: ServingGroupBudget,
    update_revision: str,
    mode: str = "position",
    strategy_is_servinggroup: bool = True,
) -> int:
    """``replicas`` (+ ``maxSurge`` while an updateable outdated group exists)."""
    expected = budget.replicas
    if (
        strategy_is_servinggroup
        and budget.max_surge > 0
        and has_updateable_outdated_servinggroup(groups, update_revision, budget.partition, mode)
    ):
        expected += budget.max_surge
    return expected


@dataclass(frozen=True)
class SyncResult:
    action: str  # "none" | "up" | "down"
    expected: int
    created: tuple[Creation, ...] = ()
    deleted: tuple[int, ...] = ()
    error: str | None = None


def sync_servinggroup_replicas(
    groups: Sequence[GroupState],
    budget: ServingGroupBudget,
    update_revision: str,
    *,
    current_revision: str | None = None,
    controller_revisions: Collection[str] | Mapping[str, Any] = (),
    controller_revision_create_fails: bool = False,
    choices: Choices = UPSTREAM,
    strategy_is_servinggroup: bool = True,
) -> SyncResult:
    """One ``syncServingGroupReplicas``: scale up (hole-filling) or binpack scale down to the expected count.

    Scale-down protection is ordinal-based in both modes (PR #1626); the surge trigger follows
    ``choices.partition``.
    """
    expected = expected_servinggroup_count(groups, budget, update_revision, choices.partition, strategy_is_servinggroup)
    if len(groups) < expected:
        r = scale_up_servinggroups(
            [g.ordinal for g in groups],
            expected,
            update_revision,
            partition=budget.partition,
            current_revision=current_revision,
            controller_revisions=controller_revisions,
            controller_revision_create_fails=controller_revision_create_fails,
        )
        return SyncResult("up", expected, r.created, (), r.error)
    if len(groups) > expected:
        return SyncResult(
            "down", expected, (), tuple(scale_down_servinggroups(groups, expected, budget.partition, "ordinal"))
        )
    return SyncResult("none", expected)


@dataclass(frozen=True)
class RollingDeletion:
    """One rolling-deletion pass: the budget and the groups picked, in deletion order."""

    budget: int
    deleted: tuple[int, ...] = ()
    #: groups picked that were already Deleting (idempotent; each still used one unit of budget)
    repicked: tuple[int, ...] = ()


def servinggroup_rolling_deletion(
    groups: Sequence[GroupState], budget: ServingGroupBudget, update_revision: str, choices: Choices = UPSTREAM
) -> RollingDeletion:
    """``manageRollingUpdate`` -> ``deleteOutdatedServingGroups`` for ServingGroupRollingUpdate.

    Budget ``len(groups) - (replicas - maxUnavailable) - newUnavailable`` (``len`` counts every
    group: protected, surge, Deleting); candidates: unhealthy outdated first, then Running
    outdated, highest ordinal first within each; already-Deleting groups are re-picked and count.
    """
    ordered = by_ordinal(groups)
    if choices.partition == "position" and budget.partition >= len(ordered):
        return RollingDeletion(0)
    after = eligible_groups(ordered, budget.partition, choices.partition)
    prot = protected_groups(ordered, budget.partition, choices.partition)
    new_unavailable = sum(1 for g in after if not is_running(g) and not is_outdated(g, update_revision))
    not_running_outdated = [g for g in after if not is_running(g) and is_outdated(g, update_revision)]
    running_outdated = [g for g in after if is_running(g) and is_outdated(g, update_revision)]
    protected_unavailable = sum(1 for g in prot if not is_running(g))
    k = max_scale_down(
        len(ordered), budget.replicas, budget.max_unavailable, new_unavailable, protected_unavailable, choices
    )
    if k <= 0:
        return RollingDeletion(k)
    picked = select_outdated_to_delete(running_outdated, not_running_outdated, k)
    return RollingDeletion(
        k, tuple(g.ordinal for g in picked), tuple(g.ordinal for g in picked if g.status == "Deleting")
    )
