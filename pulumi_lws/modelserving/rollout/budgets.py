"""Budgets (upstream ``getPartition``, ``utils.GetMaxUnavailable``, ``utils.GetMaxSurge``,
``calMaxScaleDown``) and the project's documented departures from upstream, as named flags.

:class:`Choices` selects, per decision, upstream's behaviour or pulumi-lws's:

* ``partition``: ``"position"`` (upstream ``manageRollingUpdate`` / ``hasUpdateableOutdated*`` /
  role partition: the first P entries of the ordinal-sorted list, Deleting entries included) or
  ``"ordinal"`` (ordinal ``< P`` is protected — pulumi-lws everywhere, kthena#1797);
* ``subtract_protected_unavailable``: an unavailable protected group consumes availability budget
  (upstream does not: vector SG-RU-PROT drops below ``replicas - maxUnavailable``);
* ``clamp_min_available``: ``minAvailable = max(0, replicas - maxUnavailable)`` (upstream: not clamped).

:data:`UPSTREAM` reproduces PR #1626 exactly; :data:`PULUMI_LWS` is what the planners apply.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from pulumi_lws.core.k8s.model import IntOrString
from pulumi_lws.core.k8s.scaling import percent_scaling_fails, scaled_value

T = TypeVar("T")


@dataclass(frozen=True)
class Choices:
    partition: str = "ordinal"  # "ordinal" | "position"
    subtract_protected_unavailable: bool = True
    clamp_min_available: bool = True


UPSTREAM = Choices(partition="position", subtract_protected_unavailable=False, clamp_min_available=False)
PULUMI_LWS = Choices()


@dataclass(frozen=True)
class ServingGroupBudget:
    """Resolved ServingGroupRollingUpdate numbers: partition P, maxUnavailable U, maxSurge S."""

    replicas: int
    partition: int = 0
    max_unavailable: int = 1
    max_surge: int = 0


def scale_servinggroup_budget(
    replicas: int,
    max_unavailable: IntOrString | None = None,
    max_surge: IntOrString | None = None,
    partition: IntOrString | None = None,
) -> ServingGroupBudget:
    """P rounds up, U (default 1) rounds down, S (default 0) rounds up, all of ``replicas``.

    An unscalable partition counts as 0 (upstream logs and defaults); unscalable U/S raise
    (the webhook rejects them before anything runs).
    """
    p = 0 if partition is None or percent_scaling_fails(partition) else scaled_value(partition, replicas, True)
    u = scaled_value(1 if max_unavailable is None else max_unavailable, replicas, False)
    s = scaled_value(0 if max_surge is None else max_surge, replicas, True)
    return ServingGroupBudget(replicas, max(0, p), u, max(0, s))


@dataclass(frozen=True)
class RoleBudget:
    """Resolved per-role numbers. ``max_unavailable`` None = not configured (delete every outdated
    replica, upstream's branch; the CRD default makes it 1); ``invalid`` = it does not scale
    (upstream then deletes nothing)."""

    replicas: int
    partition: int = 0
    max_unavailable: int | None = 1
    max_surge: int = 0
    invalid: bool = False


def scale_role_budget(
    replicas: int,
    max_unavailable: IntOrString | None = 1,
    max_surge: IntOrString | None = None,
    partition: IntOrString | None = None,
    role_rolling_update: bool = True,
) -> RoleBudget:
    """Role partition only applies under RoleRollingUpdate (upstream ``rolePartition``)."""
    p = 0
    if role_rolling_update and partition is not None and not percent_scaling_fails(partition):
        p = max(0, scaled_value(partition, replicas, True))
    s = 0
    if role_rolling_update and max_surge is not None and not percent_scaling_fails(max_surge):
        s = max(0, scaled_value(max_surge, replicas, True))
    if max_unavailable is None:
        return RoleBudget(replicas, p, None, s)
    if percent_scaling_fails(max_unavailable):
        return RoleBudget(replicas, p, 0, s, invalid=True)
    return RoleBudget(replicas, p, scaled_value(max_unavailable, replicas, False), s)


def min_available(replicas: int, max_unavailable: int, clamp: bool) -> int:
    """``replicas - maxUnavailable``; upstream does not clamp (PR #1429 review), pulumi-lws clamps at 0."""
    m = replicas - max_unavailable
    return max(0, m) if clamp else m


def max_scale_down(
    live: int,
    replicas: int,
    max_unavailable: int,
    new_unavailable: int,
    protected_unavailable: int = 0,
    choices: Choices = UPSTREAM,
) -> int:
    """upstream ``len(groups) - minAvailable - newUnavailable`` (Deployment ``rolling.go`` style).

    With ``choices.subtract_protected_unavailable`` the not-ready protected units are subtracted
    too: they can never be replaced by the rollout, so they must not lend it budget.
    """
    budget = live - min_available(replicas, max_unavailable, choices.clamp_min_available) - new_unavailable
    if choices.subtract_protected_unavailable:
        budget -= protected_unavailable
    return budget


def split_protected(items: Sequence[T], ordinals: Sequence[int], partition: int, mode: str) -> tuple[list[T], list[T]]:
    """(protected, eligible) for ``items`` in ascending ordinal order.

    ``"position"``: the first ``partition`` entries; ``"ordinal"``: ordinal ``< partition``.
    """
    if mode == "position":
        return list(items[:partition]), list(items[partition:])
    if mode != "ordinal":
        raise ValueError(f"unknown partition mode {mode!r}")
    prot = [x for x, o in zip(items, ordinals) if 0 <= o < partition]
    rest = [x for x, o in zip(items, ordinals) if not 0 <= o < partition]
    return prot, rest


def select_outdated_to_delete(running_outdated: Sequence[T], not_running_outdated: Sequence[T], budget: int) -> list[T]:
    """upstream deletion order: ``reversed(runningOutdated ++ notRunningOutdated)``, first ``budget``.

    That is: unhealthy outdated first (highest ordinal first), then Running outdated (highest
    first). ``deleteOutdatedResourcesForRollingUpdate`` counts one unit per pick.
    """
    if budget <= 0:
        return []
    return list(reversed(list(running_outdated) + list(not_running_outdated)))[:budget]
