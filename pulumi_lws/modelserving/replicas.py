"""Every StatefulSet and Pod of one ModelServing by role replica, read from the snapshot once (pure).

Observation (:mod:`pulumi_lws.modelserving.observe`), adoption of Kthena's bare pods
(:mod:`pulumi_lws.modelserving.legacy`) and recovery (:mod:`pulumi_lws.modelserving.recovery`) all
read the same thing: the objects of each role replica ``(group ordinal, role, role ordinal)``. One
:class:`ObservedReplicas` per reconcile answers all three, so the labels of every object are parsed
once, not once per reader (a memo on the immutable snapshot, dropped with the reconcile).

Invariants:

* an object belongs to replica ``(g, role, r)`` when its labels carry ``name=<ms>``,
  ``group-name=<ms>-<g>``, ``role=<role>`` and ``role-id=<role>-<r>`` (``g``, ``r`` >= 0,
  upstream's ``GetParentNameAndOrdinal``); any other object is ignored;
* each replica's StatefulSets and Pods are in name order (``Snapshot.list`` order);
* :meth:`ObservedReplicas.by_group` yields groups by ascending ordinal, each with its replicas
  sorted by ``(role, ordinal)`` — the union of the replicas that have a StatefulSet or a Pod.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pulumi_lws.core.snapshot import Snapshot
from pulumi_lws.modelserving import labels as L
from pulumi_lws.modelserving.groups import parse_ordinal

Obj = Mapping[str, Any]
Key = tuple[int, str, int]  # (group ordinal, role, role replica ordinal)
_EMPTY: tuple[Obj, ...] = ()


class ObservedReplicas:
    """The StatefulSets and Pods of ModelServing ``ms`` by role replica (module invariants).
    Read-only after construction (``memo`` holds what readers derive from it, once)."""

    __slots__ = ("_groups", "memo", "ms", "pods", "statefulsets")

    def __init__(self, ms: str, statefulsets: dict[Key, list[Obj]], pods: dict[Key, list[Obj]]) -> None:
        self.ms = ms
        self.statefulsets = statefulsets
        self.pods = pods
        #: views derived from the index by its readers (e.g. the legacy replicas), computed once
        self.memo: dict[str, Any] = {}
        self._groups: dict[int, list[Key]] | None = None

    def statefulsets_of(self, key: Key) -> Sequence[Obj]:
        return self.statefulsets.get(key, _EMPTY)

    def pods_of(self, key: Key) -> Sequence[Obj]:
        return self.pods.get(key, _EMPTY)

    def keys(self) -> list[Key]:
        """Every replica with a StatefulSet or a Pod, ascending ``(g, role, r)``."""
        return sorted(self.statefulsets.keys() | self.pods.keys())

    def by_group(self) -> Iterator[tuple[int, list[Key]]]:
        """``(g, replica keys of g)`` by ascending ``g``; keys sorted by ``(role, r)``."""
        keys = self.keys()
        start = 0
        for n in range(1, len(keys) + 1):
            if n == len(keys) or keys[n][0] != keys[start][0]:
                yield keys[start][0], keys[start:n]
                start = n

    def group_pods(self, g: int) -> list[Obj]:
        """Every Pod of group ``g`` (any replica)."""
        if self._groups is None:
            self._groups = {}
            for key in self.pods:
                self._groups.setdefault(key[0], []).append(key)
        return [p for key in self._groups.get(g, ()) for p in self.pods[key]]


def observed_replicas(ms: str, snapshot: Snapshot) -> ObservedReplicas:
    """Index the StatefulSets and Pods of ModelServing ``ms`` in ``snapshot`` (one pass per kind)."""
    keys: dict[tuple[Any, Any, Any], Key | None] = {}  # the label triple -> its key (parsed once per value)
    out: list[dict[Key, list[Obj]]] = []
    for kind in ("StatefulSet", "Pod"):
        into: dict[Key, list[Obj]] = {}
        for obj in snapshot.list(kind, **{L.NAME: ms}):
            lbl = (obj.get("metadata") or {}).get("labels") or {}
            triple = (lbl.get(L.GROUP_NAME), lbl.get(L.ROLE), lbl.get(L.ROLE_ID))
            try:
                key = keys[triple]
            except KeyError:
                key = keys[triple] = replica_key(ms, *triple)
            except TypeError:  # an unhashable label value (malformed input): not ours
                continue
            if key is not None:
                objs = into.get(key)
                if objs is None:
                    into[key] = [obj]
                else:
                    objs.append(obj)
        out.append(into)
    return ObservedReplicas(ms, out[0], out[1])


def replica_key(ms: str, group_label: Any, role: Any, role_id_label: Any) -> Key | None:
    """``(g, role, r)`` from the ``group-name``, ``role`` and ``role-id`` label values; None if not
    a role replica of ``ms``."""
    prefix, g = parse_ordinal(str(group_label or ""))
    role_prefix, r = parse_ordinal(str(role_id_label or ""))
    if prefix != ms or g < 0 or not role or role_prefix != role or r < 0:
        return None
    return g, role, r
