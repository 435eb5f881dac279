"""The objects of each role replica of one ModelServing render, reusing those the previous render
of the same ModelServing built from the same inputs (a memo; output unchanged).

A reconcile renders every role replica of every declared group
(:func:`~pulumi_lws.modelserving.render.statefulsets.role_replica_objects`: Service, entry
StatefulSet, worker StatefulSet), and between two reconciles of a rollout almost none changes:
only the replicas of the groups the stage moves (issue 27). The memo keeps, per ModelServing
``(namespace, name)``, the objects its last render returned for each replica, keyed by
everything ``role_replica_objects`` reads:

* the ModelServing's name and namespace (the memo's identity), the scheduler name;
* the **role** as stored in the replica's template revision, by content: its ``repr`` (equal
  reprs of this plain-data model — strings, numbers, booleans, lists and dicts in key order —
  mean equal values, types and key order), never by its 10-character ``role-template-hash``
  (a hash may collide; the hash itself is in the key too, as the labels carry it);
* the group's **ordinal** and **revision**, the replica's **ordinal** and **template revision**;

and hands back the very dicts when the whole key is equal. Invariants:

* the result equals, element for element and in key order, what ``role_replica_objects``
  returns for the same arguments (tests/modelserving/render/test_replica_memo.py compares
  every render of a rollout with an unmemoised one);
* a reused object is shared with the previous render's result (and with the parts that render
  shared, :mod:`.shared`): rendered manifests are read-only for every consumer (the simulator's
  apply and the store copy what they write or keep, ``hold`` copies, the CLI and the components
  serialise or copy them);
* memory: per ModelServing only what its last render returned (alive anyway while applied), for
  at most :data:`LIMIT` ModelServings (the least recently rendered dropped first).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from pulumi_lws.modelserving.api.modelserving import Role

#: ModelServings whose last render is remembered
LIMIT = 64

Objects = list[dict[str, Any]]
_last: dict[tuple[str, str], dict[Hashable, Objects]] = {}


def context(scheduler: str, role: Role, template_hash: str) -> Hashable:
    """What the objects of any replica of ``role`` (as one revision stores it) read besides the
    ModelServing's identity and the group and replica (module docstring)."""
    return (scheduler, repr(role), template_hash)


class ReplicaMemo:
    """One render's use of the memo: :meth:`objects` per replica, then :meth:`close` (what the
    render did not ask for is forgotten)."""

    def __init__(self, namespace: str, ms: str) -> None:
        self._ident = (namespace, ms)
        self._previous = _last.pop(self._ident, {})
        self._kept: dict[Hashable, Objects] = {}

    def objects(
        self, ctx: Hashable, g: int, group_revision: str, r: int, template_revision: str, build: Callable[[], Objects]
    ) -> Objects:
        """``build()`` (``role_replica_objects`` of these inputs), or the previous render's result
        for the same key (module docstring). The list is the memo's: callers copy it, never extend it."""
        key = (ctx, g, group_revision, r, template_revision)
        hit = self._previous.get(key)
        if hit is None:
            hit = build()
        self._kept[key] = hit
        return hit

    def close(self) -> None:
        """Remember this render's objects (the previous render's are dropped)."""
        _last[self._ident] = self._kept
        while len(_last) > LIMIT:
            del _last[next(iter(_last))]


def clear() -> None:
    """Forget every remembered render (tests compare against renders without the memo)."""
    _last.clear()
