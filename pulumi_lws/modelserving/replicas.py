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
  sorted by ``(role, ordinal)`` — the union of the replicas that have a StatefulSet or a Pod;
* under an observer's promise (:attr:`Snapshot.reuse <pulumi_lws.core.contract.snapshot.Snapshot.reuse>`:
  an object identical to one it handed out before is unchanged) an object the last index of the
  same ModelServing read keeps the replica key found then — a function of its labels and ``ms``
  alone, so the index is the same (tests/modelserving/test_group_memo.py). Memory: per
  ModelServing the objects of its last index (alive anyway in the observer), for at most
  :data:`LIMIT` ModelServings; without the promise nothing is kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.modelserving import labels as L
from pulumi_lws.modelserving.groups import parse_ordinal

Obj = Mapping[str, Any]
Key = tuple[int, str, int]  # (group ordinal, role, role replica ordinal)
_EMPTY: tuple[Obj, ...] = ()
#: id(object) -> (the object, held so the id is not reused; its replica key or None)
Known = dict[int, tuple[Obj, Key | None]]


class ObservedReplicas:
    """The StatefulSets and Pods of ModelServing ``ms`` by role replica (module invariants).
    Read-only after construction (``memo`` holds what readers derive from it, once).

    Each kind is one flat list, grouped by replica, plus ``key -> (start, stop)``: no list per
    replica (tens of thousands of them, all long-lived enough for the cyclic collector to track
    and traverse), a slice when a reader asks."""

    __slots__ = ("_groups", "_pod_ranges", "_pods", "_sts", "_sts_ranges", "memo", "ms")

    def __init__(
        self,
        ms: str,
        statefulsets: tuple[list[Obj], dict[Key, tuple[int, int]]],
        pods: tuple[list[Obj], dict[Key, tuple[int, int]]],
    ) -> None:
        self.ms = ms
        self._sts, self._sts_ranges = statefulsets
        self._pods, self._pod_ranges = pods
        #: views derived from the index by its readers (e.g. the legacy replicas), computed once
        self.memo: dict[str, Any] = {}
        self._groups: dict[int, list[Key]] | None = None

    def statefulsets_of(self, key: Key) -> Sequence[Obj]:
        span = self._sts_ranges.get(key)
        return self._sts[span[0] : span[1]] if span is not None else _EMPTY

    def pods_of(self, key: Key) -> Sequence[Obj]:
        span = self._pod_ranges.get(key)
        return self._pods[span[0] : span[1]] if span is not None else _EMPTY

    def has_statefulsets(self, key: Key) -> bool:
        return key in self._sts_ranges

    def pod_keys(self) -> Iterable[Key]:
        """The replicas that have a Pod."""
        return self._pod_ranges.keys()

    def replica_keys(self) -> list[Key]:
        """Every replica with a StatefulSet or a Pod, ascending ``(g, role, r)``."""
        return sorted(self._sts_ranges.keys() | self._pod_ranges.keys())

    def by_group(self) -> Iterator[tuple[int, list[Key]]]:
        """``(g, replica keys of g)`` by ascending ``g``; keys sorted by ``(role, r)``."""
        keys = self.replica_keys()
        start = 0
        for n in range(1, len(keys) + 1):
            if n == len(keys) or keys[n][0] != keys[start][0]:
                yield keys[start][0], keys[start:n]
                start = n

    def group_pods(self, g: int) -> list[Obj]:
        """Every Pod of group ``g`` (any replica)."""
        if self._groups is None:
            self._groups = {}
            for key in self._pod_ranges:
                self._groups.setdefault(key[0], []).append(key)
        return [p for key in self._groups.get(g, ()) for p in self.pods_of(key)]


#: ModelServings whose last index's object keys are remembered, per observer (module docstring)
LIMIT = 64


def observed_replicas(ms: str, snapshot: Snapshot) -> ObservedReplicas:
    """Index the StatefulSets and Pods of ModelServing ``ms`` in ``snapshot`` (one pass per kind)."""
    memo: dict[tuple[Any, Any, Any], Key | None] = {}  # the label triple -> its key (parsed once per value)
    reuse = snapshot.reuse
    known: Known | None = None
    previous: Known = {}
    if reuse is not None:  # the observer's promise: an object seen by the last index has its key
        kept = reuse.memo(__name__)
        previous, known = kept.pop(ms, None) or {}, {}
    # every object of the kind, the ``name`` label checked here (where the labels are read anyway):
    # the same objects as ``snapshot.list(kind, name=ms)``, without a label index built for one reader
    index = ObservedReplicas(
        ms,
        _grouped(ms, snapshot.list("StatefulSet"), memo, previous, known),
        _grouped(ms, snapshot.list("Pod"), memo, previous, known),
    )
    if reuse is not None and known is not None:
        kept[ms] = known
        while len(kept) > LIMIT:
            del kept[next(iter(kept))]
    return index


def _grouped(
    ms: str,
    objs: list[Obj],
    memo: dict[tuple[Any, Any, Any], Key | None],
    previous: Known,
    known: Known | None,
) -> tuple[list[Obj], dict[Key, tuple[int, int]]]:
    """The objects of ``objs`` labelled ``name=<ms>`` that belong to one of its replicas, as one list
    grouped by replica (name order within each, the replicas in first-seen order), and each
    replica's span in it. ``previous``: the key of each object the last index of ``ms`` read
    (under the observer's promise, else empty); ``known`` (when not None) gets this one's."""
    keys: list[Key | None] = []
    counts: dict[Key, int] = {}
    for obj in objs:
        hit = previous.get(id(obj))
        if hit is not None and hit[0] is obj:  # held by ``previous``: its id is not reused
            key = hit[1]
        else:
            lbl = (obj.get("metadata") or {}).get("labels") or {}
            if lbl.get(L.NAME) != ms:
                key = None
            else:
                triple = (lbl.get(L.GROUP_NAME), lbl.get(L.ROLE), lbl.get(L.ROLE_ID))
                try:
                    key = memo[triple]
                except KeyError:
                    key = memo[triple] = replica_key(ms, *triple)
                except TypeError:  # an unhashable label value (malformed input): not ours
                    key = None
            hit = (obj, key)
        if known is not None:
            known[id(obj)] = hit
        keys.append(key)
        if key is not None:
            counts[key] = counts.get(key, 0) + 1
    spans: dict[Key, tuple[int, int]] = {}
    free: dict[Key, int] = {}
    end = 0
    for key, n in counts.items():
        spans[key] = (end, end + n)
        free[key] = end
        end += n
    flat: list[Any] = [None] * end
    for obj, key in zip(objs, keys):
        if key is not None:
            i = free[key]
            flat[i] = obj
            free[key] = i + 1
    return flat, spans


def replica_key(ms: str, group_label: Any, role: Any, role_id_label: Any) -> Key | None:
    """``(g, role, r)`` from the ``group-name``, ``role`` and ``role-id`` label values; None if not
    a role replica of ``ms``."""
    prefix, g = parse_ordinal(str(group_label or ""))
    role_prefix, r = parse_ordinal(str(role_id_label or ""))
    if prefix != ms or g < 0 or not role or role_prefix != role or r < 0:
        return None
    return g, role, r
