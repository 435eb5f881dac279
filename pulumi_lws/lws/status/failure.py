"""LWS status conditions from failure handling: ``Degraded`` and ``GroupUnschedulable`` (pure).

Re-exported by :mod:`pulumi_lws.lws.rollout.failure.ordinal` (``merge_failure_status``,
``failure_conditions``). Works for Ordinal and Hash groups: it reads only leader pods.

Invariants: a function of (spec, snapshot); inputs are never mutated; a retained (deleting)
exhausted leader still counts as exhausted until its object is gone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_lws.core.contract.snapshot import Snapshot, annotations_of, is_deleting, labels_of, pod_unschedulable
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet

BUDGET_EXCEEDED, UNSCHEDULABLE, DEGRADED = "ReplicaRestartBudgetExceeded", "GroupUnschedulable", "Degraded"

Pod = Mapping[str, Any]


def is_exhausted(leader: Pod) -> bool:
    return str(annotations_of(leader).get(L.RESTART_BUDGET_EXHAUSTED, "")).lower() == "true"


def leader_pods(lws: LeaderWorkerSet, snapshot: Snapshot) -> list[Pod]:
    """Every leader pod of the LWS (``worker-index: "0"``), Ordinal or Hash."""
    return snapshot.list("Pod", **{L.NAME: lws.name, L.WORKER_INDEX: "0"})


def group_label(lws: LeaderWorkerSet, leader: Pod) -> str:
    """The group as users see it: the ordinal, or the first 8 characters of a Hash key."""
    name = str((leader.get("metadata") or {}).get("name") or "")
    idx = labels_of(leader).get(L.GROUP_INDEX)
    if idx and lws.spec.group_identity == "Hash":
        return str(idx)[:8]
    return str(idx or name[len(lws.name) + 1 :] or name)


def failure_conditions(lws: LeaderWorkerSet, snapshot: Snapshot) -> dict[str, dict[str, str]]:
    """Conditions to merge into the LWS status, by type: ``Degraded`` (True with reason
    ``ReplicaRestartBudgetExceeded`` while any leader carries the exhausted annotation; False
    when maxGroupRestarts is set and none does) and ``Progressing`` (reason
    ``GroupUnschedulable`` while any live leader cannot be scheduled)."""
    leaders = leader_pods(lws, snapshot)
    out: dict[str, dict[str, str]] = {}
    exhausted = [group_label(lws, p) for p in leaders if is_exhausted(p)]
    if exhausted:
        out[DEGRADED] = {
            "type": DEGRADED,
            "status": "True",
            "reason": BUDGET_EXCEEDED,
            "message": f"groups {', '.join(exhausted)} exhausted their restart budget; annotate the "
            f"retained leader pod {L.RECOVER}=true to recover",
        }
    elif lws.spec.leader_worker_template.max_group_restarts is not None:
        out[DEGRADED] = {
            "type": DEGRADED,
            "status": "False",
            "reason": "RestartBudgetAvailable",
            "message": "no group has exhausted its restart budget",
        }
    unsched = [p for p in leaders if not is_deleting(p) and pod_unschedulable(p)]
    if unsched:
        out["Progressing"] = {
            "type": "Progressing",
            "status": "True",
            "reason": UNSCHEDULABLE,
            "message": f"{len(unsched)} replicas cannot be scheduled",
        }
    return out


def merge_failure_status(status: Mapping[str, Any], lws: LeaderWorkerSet, snapshot: Snapshot) -> dict[str, Any]:
    """``status`` (e.g. ``rollout.status.ordinal_status``) with :func:`failure_conditions`
    replacing conditions of the same type (appended when absent). Input is not mutated."""
    extra = failure_conditions(lws, snapshot)
    conds = [dict(extra.pop(c.get("type"), c)) for c in status.get("conditions") or []]
    return {**dict(status), "conditions": conds + list(extra.values())}
