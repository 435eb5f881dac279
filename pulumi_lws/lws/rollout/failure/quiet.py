"""Which groups failure handling must look at: the fast path of
:func:`pulumi_lws.lws.rollout.failure.ordinal.plan_failure_actions` (pure).

A pod is **quiet** when nothing failure handling or termination reads can make it act: it is
not deleting, carries no finalizer (retention's ``restart-budget`` among them), no container
restarted, and none of the failure annotations is set (``group-restart-pending``,
``previous-leader-uid``, ``group-restart-budget-exhausted``). A group whose pods are all quiet
gets nothing, whatever the stage: no failure signal (a signal needs a restart, a deleting
worker or the pending marker), no exhausted/recover/release handling (needs the exhausted
annotation or the finalizer), no termination action (needs a deleting leader or a marked
worker). So only the groups with a pod that is not quiet are planned per group; in a fleet
where nothing failed that is none, and the per-group work is one check per pod.

The check is stricter than the rules it stands for (any finalizer, any non-zero
``restartCount`` value), never looser: a pod it calls quiet is one the full rules ignore.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.rollout.failure.termination import PREVIOUS_LEADER_UID, ordinal_members

Pod = Mapping[str, Any]
Members = dict[int, tuple[Pod | None, list[Pod]]]

#: Leader annotation: a failure seen while recreation is deferred by backoff (value: what failed);
#: defined here because failure.ordinal (which re-exports it) imports this module
RESTART_PENDING = "pulumi-lws.io/group-restart-pending"
_FAILURE_ANNOTATIONS = (RESTART_PENDING, PREVIOUS_LEADER_UID, L.RESTART_BUDGET_EXHAUSTED)


def is_quiet(pod: Pod) -> bool:
    """Nothing failure handling or termination reads on ``pod`` can make it act (module doc)."""
    meta = pod.get("metadata") or {}
    if type(meta) is not dict or meta.get("deletionTimestamp") or meta.get("finalizers"):
        return False
    ann = meta.get("annotations")
    if ann:
        if type(ann) is not dict:
            return False  # malformed: the full rules decide (and report) it
        for key in _FAILURE_ANNOTATIONS:
            if key in ann:
                return False
    status = pod.get("status")
    if status:
        if type(status) is not dict:
            return False
        for s in status.get("containerStatuses") or ():
            if type(s) is not dict or s.get("restartCount"):
                return False
    return True


def loud_members(lws: LeaderWorkerSet, snapshot: Snapshot) -> Members:
    """``ordinal_members(lws, snapshot)`` restricted to the groups with a pod that is not quiet
    (``{}`` without reading any group when every pod of the LWS is quiet)."""
    pods = snapshot.list("Pod", **{L.NAME: lws.name})
    if all(map(is_quiet, pods)):
        return {}
    return {
        i: (leader, workers)
        for i, (leader, workers) in ordinal_members(lws, snapshot).items()
        if not ((leader is None or is_quiet(leader)) and all(map(is_quiet, workers)))
    }


def leader_count_keys(lws: LeaderWorkerSet, snapshot: Snapshot, replicas: int) -> set[str]:
    """The restart-count keys (``"<leader revision>/<ordinal>"``) of every observed leader below
    ``replicas`` — what the full pass adds to the live keys per group."""
    from pulumi_lws.lws.observe import revision_of
    from pulumi_lws.lws.rollout.failure.restart_budget import count_key
    from pulumi_lws.lws.rollout.failure.termination import ordinal_leaders

    return {
        count_key(revision_of(leader), str(i)) for i, leader in ordinal_leaders(lws, snapshot).items() if i < replicas
    }
