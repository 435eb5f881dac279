"""The JSON patches of the live actuator's guarded verbs (pure: observed state in, patch out).

Every patch starts with a ``test`` of ``/metadata/uid`` when the action has a uid (a recreated
object fails it: 422, which the actuator skips), and every index it writes to is guarded by a
``test`` of the entry at that index, so a list that moved meanwhile fails the patch instead of
changing the wrong entry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def ungate_patch(index: int, gate: str, uid: str | None = None) -> list[dict[str, Any]]:
    """JSON patch removing exactly gate ``index`` (the ``test`` op fails it if the list moved)."""
    ops: list[dict[str, Any]] = [{"op": "test", "path": "/metadata/uid", "value": uid}] if uid else []
    return ops + [
        {"op": "test", "path": f"/spec/schedulingGates/{index}/name", "value": gate},
        {"op": "remove", "path": f"/spec/schedulingGates/{index}"},
    ]


def finalizer_patch(
    current: Sequence[str] | None, add: Sequence[str] = (), remove: Sequence[str] = (), uid: str | None = None
) -> list[dict[str, Any]]:
    """JSON patch adding the missing ``add`` finalizers and removing the present ``remove`` ones
    from ``metadata.finalizers`` (as observed in ``current``). Each removal is guarded by a
    ``test`` of the entry at that index (highest index first), so a list that changed meanwhile
    fails the patch (422) instead of removing the wrong entry; the uid ``test`` fails it for a
    recreated object. Only ``test`` ops: nothing to change."""
    ops: list[dict[str, Any]] = [{"op": "test", "path": "/metadata/uid", "value": uid}] if uid else []
    have = list(current or [])
    for i in sorted((i for i, f in enumerate(have) if f in set(remove)), reverse=True):
        ops += [
            {"op": "test", "path": f"/metadata/finalizers/{i}", "value": have[i]},
            {"op": "remove", "path": f"/metadata/finalizers/{i}"},
        ]
    kept = [f for f in have if f not in set(remove)]
    missing = [f for f in dict.fromkeys(add) if f not in kept]
    if missing and current is None:
        ops.append({"op": "add", "path": "/metadata/finalizers", "value": missing})
    else:
        ops += [{"op": "add", "path": "/metadata/finalizers/-", "value": f} for f in missing]
    return ops


def disown_patch(
    refs: Sequence[Mapping[str, Any]] | None, owners: Sequence[str], uid: str | None = None
) -> list[dict[str, Any]]:
    """JSON patch removing the ownerReferences whose uid is in ``owners`` (each guarded by a
    ``test`` of its uid, highest index first, so a list that moved fails with 422)."""
    ops: list[dict[str, Any]] = [{"op": "test", "path": "/metadata/uid", "value": uid}] if uid else []
    listed = refs or ()
    for i in sorted((i for i, r in enumerate(listed) if r.get("uid") in set(owners)), reverse=True):
        ops += [
            {"op": "test", "path": f"/metadata/ownerReferences/{i}/uid", "value": listed[i]["uid"]},
            {"op": "remove", "path": f"/metadata/ownerReferences/{i}"},
        ]
    return ops


def status_patch(
    current: Mapping[str, Any] | None, status: Mapping[str, Any], uid: str | None = None
) -> list[dict[str, Any]]:
    """JSON patch of the ``/status`` subresource setting each top-level key of ``status`` (the
    others kept; ``add`` replaces an existing member), guarded by a uid ``test``."""
    ops: list[dict[str, Any]] = [{"op": "test", "path": "/metadata/uid", "value": uid}] if uid else []
    if current is None:
        return ops + [{"op": "add", "path": "/status", "value": dict(status)}]
    return ops + [
        {"op": "add", "path": f"/status/{k.replace('~', '~0').replace('/', '~1')}", "value": v}
        for k, v in status.items()
    ]


def condition_patch(
    conditions: Sequence[Mapping[str, Any]] | None, condition: Mapping[str, Any], uid: str | None = None
) -> list[dict[str, Any]]:
    """JSON patch setting one pod condition by type, leaving the others untouched."""
    ops: list[dict[str, Any]] = [{"op": "test", "path": "/metadata/uid", "value": uid}] if uid else []
    if not conditions:
        return ops + [{"op": "add", "path": "/status/conditions", "value": [dict(condition)]}]
    types = [c.get("type") for c in conditions]
    if condition["type"] not in types:
        return ops + [{"op": "add", "path": "/status/conditions/-", "value": dict(condition)}]
    i = types.index(condition["type"])
    old = conditions[i]
    merged = dict(condition)
    if old.get("status") == condition.get("status") and old.get("lastTransitionTime"):
        merged["lastTransitionTime"] = old["lastTransitionTime"]  # no transition
    return ops + [
        {"op": "test", "path": f"/status/conditions/{i}/type", "value": condition["type"]},
        {"op": "replace", "path": f"/status/conditions/{i}", "value": merged},
    ]
