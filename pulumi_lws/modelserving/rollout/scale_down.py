"""upstream binpack scale-down: ``scaleDownServingGroups`` (l.2507, ``calculateServingGroupScore``)
and ``scaleDownRoles``.

Score = (priority: 1 if Running else 0, Σ pod-deletion-cost, ordinal); candidates are sorted by
(priority asc, cost asc, ordinal desc) and deleted in that order, non-protected first, protected
(partition) last.
"""

from __future__ import annotations

from collections.abc import Sequence

from pulumi_lws.modelserving.groups import (
    GroupState,
    RoleReplicaState,
    by_ordinal,
    is_deleting,
    is_running,
)
from pulumi_lws.modelserving.rollout.budgets import split_protected


def binpack_key(x: GroupState | RoleReplicaState) -> tuple[int, int, int]:
    """Deletion order key: not-ready first, then cheapest, then highest ordinal."""
    return (1 if is_running(x) else 0, x.deletion_cost, -x.ordinal)


def scale_down_servinggroups(
    groups: Sequence[GroupState], expected_count: int, partition: int = 0, mode: str = "ordinal"
) -> list[int]:
    """Ordinals to delete (in deletion order) to bring ``len(groups)`` down to ``expected_count``.

    Deleting groups are candidates (priority 0) and count as deletions. ``mode="ordinal"`` is
    PR #1626 (protected = ordinal < P); ``"position"`` is main (the first P entries).
    """
    ordered = by_ordinal(groups)
    total = len(ordered) - expected_count
    if total <= 0:
        return []
    protected, rest = split_protected(ordered, [g.ordinal for g in ordered], partition, mode)
    out = [g.ordinal for g in sorted(rest, key=binpack_key)[:total]]
    if len(out) < total:
        out += [g.ordinal for g in sorted(protected, key=binpack_key)[: total - len(out)]]
    return out


def scale_down_roles(
    replicas: Sequence[RoleReplicaState], expected_count: int, partition: int = 0, mode: str = "position"
) -> list[str]:
    """Role ids to delete (in order) so that the non-Deleting replicas number ``expected_count``.

    Deleting replicas are skipped entirely (neither counted nor re-deleted). Protection:
    ``"position"`` = the first P entries of the full list (upstream), ``"ordinal"`` = ordinal < P.
    """
    ordered = sorted(replicas, key=lambda r: r.ordinal)
    protected, rest = split_protected(ordered, [r.ordinal for r in ordered], partition, mode)
    protected = [r for r in protected if not is_deleting(r)]
    rest = [r for r in rest if not is_deleting(r)]
    total = len(protected) + len(rest) - expected_count
    if total <= 0:
        return []
    out = [r.id for r in sorted(rest, key=binpack_key)[:total]]
    if len(out) < total:
        out += [r.id for r in sorted(protected, key=binpack_key)[: total - len(out)]]
    return out
