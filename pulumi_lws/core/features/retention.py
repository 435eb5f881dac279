"""The project's own finalizer on retained pods, and releasing them (pure; every API's).

A group whose restart budget is exhausted keeps its pod objects with :data:`RETAIN_FINALIZER`
(LeaderWorkerSet's ``maxGroupRestarts``: :mod:`pulumi_lws.lws.rollout.failure.retention` retains
them); a release removes it so the objects go away. ``pulumi destroy``'s delete hook releases
every pod of a workload carrying it (``Workload.release_retained``), whatever the API.

Invariants: every action is uid-guarded; release touches only pods carrying the finalizer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pulumi_lws.core.contract.stage import Action

#: Cleanup finalizer on the pods of a group whose restart budget is exhausted.
RETAIN_FINALIZER = "pulumi-lws.io/restart-budget"

Pod = Mapping[str, Any]


def metadata_of(pod: Pod) -> Mapping[str, Any]:
    return pod.get("metadata") or {}


def finalizers_of(pod: Pod) -> list[str]:
    return list(metadata_of(pod).get("finalizers") or [])


def has_retain_finalizer(pod: Pod) -> bool:
    return RETAIN_FINALIZER in finalizers_of(pod)


def finalize_action(pod: Pod, op: str, reason: str) -> Action:
    """``finalize`` with ``{"add"|"remove": [RETAIN_FINALIZER]}`` on ``pod`` (uid-guarded)."""
    assert op in ("add", "remove")
    return Action(
        "finalize",
        "Pod",
        str(metadata_of(pod).get("name") or ""),
        {op: [RETAIN_FINALIZER]},
        uid=metadata_of(pod).get("uid"),
        reason=reason,
    )


def release_actions(pods: Iterable[Pod], reason: str) -> tuple[Action, ...]:
    """Remove :data:`RETAIN_FINALIZER` from every pod carrying it (the objects then go away)."""
    return tuple(finalize_action(p, "remove", reason) for p in pods if has_retain_finalizer(p))
