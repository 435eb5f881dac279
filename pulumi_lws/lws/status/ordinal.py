"""LWS status for Ordinal mode: counts and conditions (upstream ``updateStatus``/``updateConditions``, §1.8).

Pure: computed from observed :class:`GroupView` s (every leader pod found, surge included), the
observed leader StatefulSet and the spec. Returns a plain dict in wire format (camelCase) that
components export as the LWS ``status`` output.

Rules:
* ``readyReplicas`` / ``updatedReplicas``: over all observed groups (legend: ``U``+``o`` /
  ``U``+``u``); ``replicas`` = leader StatefulSet ``status.replicas``.
* ``UpdateInProgress`` (+ ``Progressing``) when, among non-surge groups in ``[P_user, R)``, fewer
  are updated than exist; else ``Available`` when all R groups are ready and every group in
  ``[P_user, R)`` is updated and ready; else ``Progressing``. Available excludes the other two.
* ``updateDone`` = ``P_user == 0`` and all R groups are updated and ready (revision truncation).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_lws.core.contract.stage import GroupView
from pulumi_lws.core.k8s.conditions import condition as _wire_condition
from pulumi_lws.lws import labels as L

AVAILABLE, PROGRESSING, UPDATE_IN_PROGRESS = "Available", "Progressing", "UpdateInProgress"


def group_counts(chars: str) -> tuple[int, int]:
    """(readyReplicas, updatedReplicas) from legend characters: ``U``+``o`` and ``U``+``u``."""
    return sum(c in "Uo" for c in chars), sum(c in "Uu" for c in chars)


def condition_state(groups: Sequence[GroupView], replicas: int, user_partition: int) -> str:
    """Which exclusive condition holds: ``UpdateInProgress``, ``Available`` or ``Progressing``."""
    in_range = [g for g in groups if g.exists and g.index is not None and user_partition <= g.index < replicas]
    updated = sum(1 for g in in_range if g.updated)
    if updated < len(in_range):
        return UPDATE_IN_PROGRESS
    by_index = {g.index: g for g in groups}
    all_ready = all(by_index.get(i) is not None and by_index[i].ready for i in range(replicas))
    all_done = all(
        by_index.get(i) is not None and by_index[i].ready and by_index[i].updated
        for i in range(user_partition, replicas)
    )
    return AVAILABLE if all_ready and all_done else PROGRESSING


def conditions(state: str) -> list[dict[str, Any]]:
    if state == UPDATE_IN_PROGRESS:
        return [
            _wire_condition(AVAILABLE, False, "GroupsUpdating", "Rolling Upgrade is in progress"),
            _wire_condition(PROGRESSING, True, "GroupsUpdating", "Rolling Upgrade is in progress"),
            _wire_condition(UPDATE_IN_PROGRESS, True, "GroupsUpdating", "Rolling Upgrade is in progress"),
        ]
    if state == AVAILABLE:
        return [
            _wire_condition(AVAILABLE, True, "AllGroupsReady", "All replicas are ready"),
            _wire_condition(PROGRESSING, False, "AllGroupsReady", "All replicas are ready"),
            _wire_condition(UPDATE_IN_PROGRESS, False, "AllGroupsReady", "All replicas are ready"),
        ]
    return [
        _wire_condition(AVAILABLE, False, "GroupsProgressing", "Replicas are progressing"),
        _wire_condition(PROGRESSING, True, "GroupsProgressing", "Replicas are progressing"),
        _wire_condition(UPDATE_IN_PROGRESS, False, "GroupsProgressing", "Replicas are progressing"),
    ]


def ordinal_status(
    lws_name: str, groups: Sequence[GroupView], replicas: int, user_partition: int, leader_sts: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The LWS ``status`` dict for Ordinal mode (see module docstring)."""
    chars = "".join(g.char for g in groups)
    ready, updated = group_counts(chars)
    by_index = {g.index: g for g in groups}
    done = user_partition == 0 and all(
        by_index.get(i) is not None and by_index[i].ready and by_index[i].updated for i in range(replicas)
    )
    state = condition_state(groups, replicas, user_partition)
    return {
        "replicas": int(((leader_sts or {}).get("status") or {}).get("replicas") or 0),
        "readyReplicas": ready,
        "updatedReplicas": updated,
        "hpaPodSelector": f"{L.NAME}={lws_name},{L.WORKER_INDEX}=0",
        "conditions": conditions(state),
        "updateDone": done,
    }
