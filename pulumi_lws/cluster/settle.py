"""Whether an action's effect is already visible on the object as re-read from the API server.

The live actuator asks this after a write whose outcome is unknown (a timeout after the request
was sent, a 500/504: :func:`pulumi_lws.cluster.resilience.outcome_unknown`) before it retries:
the write may have landed, and re-sending a guarded JSON patch that already applied would fail
its own ``test`` op. ``obj`` is the plain object as read now (None: it no longer exists).

Each predicate states the post-condition of its verb (:class:`pulumi_lws.core.contract.stage.Action`).
A verb without one here is simply retried (its handler must then be idempotent).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pulumi_lws.core.contract.stage import Action

Obj = Mapping[str, Any] | None


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _same_object(action: Action, obj: Obj) -> bool:
    return obj is not None and (not action.uid or _meta(obj).get("uid") == action.uid)


def _metadata_map_applied(field: str) -> Callable[[Action, Obj], bool]:
    def applied(action: Action, obj: Obj) -> bool:
        have = _meta(obj).get(field) or {} if obj is not None else {}
        want = action.params.get(field) or {}
        return _same_object(action, obj) and all(have.get(k) == v for k, v in want.items())

    return applied


def _ungated(action: Action, obj: Obj) -> bool:
    gate = action.params.get("gate")  # every ungate names its gate (core.stage.Action: {"gate": name})
    gates = [g.get("name") for g in ((obj or {}).get("spec") or {}).get("schedulingGates") or []]
    return _same_object(action, obj) and gate not in gates


def _condition_set(action: Action, obj: Obj) -> bool:
    conditions = ((obj or {}).get("status") or {}).get("conditions") or []
    current = next((c for c in conditions if c.get("type") == action.params.get("type")), None)
    return (
        _same_object(action, obj)
        and current is not None
        and all(current.get(k) == v for k, v in action.params.items() if k in ("status", "reason", "message"))
    )


def _finalized(action: Action, obj: Obj) -> bool:
    have = set(_meta(obj).get("finalizers") or []) if obj is not None else set()
    return (
        _same_object(action, obj)
        and set(action.params.get("add") or ()) <= have
        and not have & set(action.params.get("remove") or ())
    )


def _deleted(action: Action, obj: Obj) -> bool:
    """Gone, recreated under another uid, or terminating (finalizers hold it): the delete landed."""
    return obj is None or not _same_object(action, obj) or bool(_meta(obj).get("deletionTimestamp"))


def _status_patched(action: Action, obj: Obj) -> bool:
    have = (obj or {}).get("status") or {}
    return _same_object(action, obj) and all(have.get(k) == v for k, v in (action.params.get("status") or {}).items())


def _disowned(action: Action, obj: Obj) -> bool:
    refs = {r.get("uid") for r in _meta(obj).get("ownerReferences") or []} if obj is not None else set()
    return _same_object(action, obj) and not refs & set(action.params.get("owners") or ())


#: verb -> "the effect of this action is visible on the re-read object"
APPLIED: dict[str, Callable[[Action, Obj], bool]] = {
    "label": _metadata_map_applied("labels"),
    "annotate": _metadata_map_applied("annotations"),
    "ungate": _ungated,
    "set-condition": _condition_set,
    "finalize": _finalized,
    "delete": _deleted,
    "patch-status": _status_patched,
    "disown": _disowned,
}


def effect_visible(action: Action, obj: Obj) -> bool | None:
    """True/False whether ``action`` already took effect on ``obj``; None: this verb has no
    post-condition here (retry it as is)."""
    check = APPLIED.get(action.verb)
    return None if check is None else check(action, obj)
