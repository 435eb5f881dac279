"""Observed cluster state, shared by every policy and every backend (simulator, live cluster).

A :class:`Snapshot` is a read-only bag of Kubernetes-shaped object dicts (with ``status``) for one
namespace, keyed by ``(kind, name)``. Observers produce it; planners only read it through the
pure helpers below, never through a client type. That keeps planners testable with literal dicts
and lets the simulator and a live API server be swapped freely.
"""

from __future__ import annotations

import builtins
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pulumi_lws.core.contract.reuse import Reuse


@dataclass(frozen=True)
class NodeCapacity:
    """What a capacity check reads of the whole cluster (:mod:`pulumi_lws.core.features.fit`),
    observed only when a workload opts in (:attr:`pulumi_lws.core.contract.ports.Scope.capacity`).

    ``nodes``: every Node as read (labels, ``spec.taints``, ``spec.unschedulable``,
    ``status.allocatable``, ``status.conditions``); ``pods``: every pod of any namespace bound to a
    node (``spec.nodeName`` set) and not Succeeded/Failed — what the scheduler counts against a
    node's allocatable. API-independent: no workload's labels or kinds."""

    nodes: tuple[Mapping[str, Any], ...] = ()
    pods: tuple[Mapping[str, Any], ...] = ()

    @staticmethod
    def of(nodes: Iterable[Mapping[str, Any]], pods: Iterable[Mapping[str, Any]]) -> NodeCapacity:
        """From raw Node and Pod objects: only bound, non-terminal pods are kept."""
        bound = tuple(
            p
            for p in pods
            if (p.get("spec") or {}).get("nodeName")
            and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
        )
        return NodeCapacity(tuple(nodes), bound)


@dataclass(frozen=True)
class Snapshot:
    """Objects observed at time ``now`` (seconds since the epoch).

    Indexed on first use and shared by every reader of one reconcile: :meth:`list` answers from
    per-kind lists (sorted by name once) and per ``(kind, label key)`` buckets built in one pass
    over that kind, so a reader asking for N label values costs O(objects of the kind) once plus
    O(answer) per call, never a scan per call. The indexes assume what the type promises: the
    objects are not mutated after the snapshot is built (planners only read).
    """

    objects: Mapping[tuple[str, str], Mapping[str, Any]] = field(default_factory=dict)
    now: float = 0.0
    #: the cluster's nodes and bound pods, when the scope asked for them (``Scope.capacity``); else None
    capacity: NodeCapacity | None = None
    #: the observer's promise that an object identical to one of its earlier snapshots is
    #: unchanged, with the memos readers keep under it (:mod:`pulumi_lws.core.contract.reuse`);
    #: None: no promise, nothing may be reused. Not part of the snapshot's value.
    reuse: Reuse | None = field(default=None, compare=False, repr=False)

    @staticmethod
    def of(objs: Iterable[Mapping[str, Any]], now: float = 0.0, capacity: NodeCapacity | None = None) -> Snapshot:
        return Snapshot({(o["kind"], o["metadata"]["name"]): o for o in objs}, now, capacity)

    def get(self, kind: str, name: str) -> Mapping[str, Any] | None:
        return self.objects.get((kind, name))

    def list(self, kind: str, **label_equals: str) -> builtins.list[Mapping[str, Any]]:
        """Objects of ``kind`` whose labels contain every ``label_equals`` pair, sorted by name.

        Label keys with '/' or '-' can't be keyword names: pass them with ``**{key: value}``.
        A new list each call (callers may sort or extend it).
        """
        if not label_equals:
            return list(self._of_kind(kind))
        (key, val), *rest = label_equals.items()
        bucket = self._by_label(kind, key)
        try:
            found = bucket.get(val, ()) if bucket is not None else None
        except TypeError:  # an unhashable query value: answer by scanning, as before the index
            found = None
        if found is None:
            found, rest = self._of_kind(kind), list(label_equals.items())
        if not rest:
            return list(found)
        return [o for o in found if all(labels_of(o).get(k) == v for k, v in rest)]

    def by_label(self, kind: str, key: str) -> Mapping[Any, Sequence[Mapping[str, Any]]]:
        """Objects of ``kind`` bucketed by the value of label ``key`` (None: label absent), each
        bucket sorted by name. Built once per snapshot; do not mutate the buckets."""
        bucket = self._by_label(kind, key)
        if bucket is None:  # unhashable label values somewhere: build an equivalent mapping by scan
            out: dict[Any, builtins.list[Mapping[str, Any]]] = {}
            for o in self._of_kind(kind):
                value = labels_of(o).get(key)
                if isinstance(value, Hashable):
                    out.setdefault(value, []).append(o)
            return out
        return bucket

    def kinds(self) -> builtins.list[str]:
        """The kinds of the objects the snapshot holds (read from the kinds index, built once)."""
        self._of_kind("")  # builds the index (any kind does)
        return list(self._cache()[None])

    # ---- indexes (built lazily, once) -----------------------------------------------------
    def _cache(self) -> dict[Any, Any]:
        cache = self.__dict__.get("_index")
        if cache is None:
            cache = {}
            object.__setattr__(self, "_index", cache)  # frozen dataclass: a private memo, not a field
        return cache

    def _of_kind(self, kind: str) -> builtins.list[Mapping[str, Any]]:
        cache = self._cache()
        kinds = cache.get(None)
        if kinds is None:
            # sort each kind's keys (plain string compares in C), not its objects by a key function:
            # a third faster at 10,000s of objects; the key's name is the object's metadata.name
            names: dict[str, builtins.list[str]] = {}
            for k, n in self.objects:
                names.setdefault(k, []).append(n)
            objects = self.objects
            kinds = {}
            for k, ns in names.items():
                try:
                    ns.sort()
                except TypeError:  # a non-string name (malformed input): order by the objects' names
                    kinds[k] = sorted((objects[(k, n)] for n in ns), key=_name)
                    continue
                kinds[k] = [objects[(k, n)] for n in ns]
            cache[None] = kinds
        found: builtins.list[Mapping[str, Any]] = kinds.get(kind, _NONE)
        return found

    def _by_label(self, kind: str, key: str) -> dict[Any, builtins.list[Mapping[str, Any]]] | None:
        cache = self._cache()
        if (kind, key) not in cache:
            bucket: dict[Any, builtins.list[Mapping[str, Any]]] | None = {}
            try:
                fresh: dict[Any, builtins.list[Mapping[str, Any]]] = {}
                for obj in self._of_kind(kind):  # labels_of, inlined: once per object of the kind
                    fresh.setdefault(((obj.get("metadata") or {}).get("labels") or {}).get(key), []).append(obj)
                bucket = fresh
            except TypeError:  # an unhashable label value (malformed input): no index for this key
                bucket = None
            cache[(kind, key)] = bucket
        built: dict[Any, builtins.list[Mapping[str, Any]]] | None = cache[(kind, key)]
        return built

    def __iter__(self) -> Iterator[Mapping[str, Any]]:
        return iter(self.objects.values())

    def __len__(self) -> int:
        return len(self.objects)


_NONE: list[Mapping[str, Any]] = []


def _name(obj: Mapping[str, Any]) -> Any:
    return obj["metadata"]["name"]


EMPTY = Snapshot()


# ---- pure readers over object dicts ---------------------------------------------------------


def labels_of(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return (obj.get("metadata") or {}).get("labels") or {}


def annotations_of(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return (obj.get("metadata") or {}).get("annotations") or {}


def is_deleting(obj: Mapping[str, Any]) -> bool:
    meta = obj.get("metadata")
    return bool(meta and meta.get("deletionTimestamp"))  # ``(meta or {}).get(...)``, without the empty dict


def pod_condition(pod: Mapping[str, Any], ctype: str) -> Mapping[str, Any] | None:
    status = pod.get("status")
    for c in (status and status.get("conditions")) or ():
        if c.get("type") == ctype:
            found: Mapping[str, Any] = c
            return found
    return None


def pod_running_and_ready(pod: Mapping[str, Any] | None) -> bool:
    """Upstream ``PodRunningAndReady``: phase Running and condition Ready=True (not deleting).

    :func:`is_deleting` and :func:`pod_condition` inlined (called per pod by every planner, several
    times a reconcile), reading the same fields in the same order."""
    if pod is None:
        return False
    meta = pod.get("metadata")
    if meta and meta.get("deletionTimestamp"):
        return False
    status: Any = pod.get("status")
    for c in (status and status.get("conditions")) or ():
        if c.get("type") == "Ready":
            return bool(status.get("phase") == "Running" and c.get("status") == "True")
    return False


def pod_containers_ready(pod: Mapping[str, Any] | None) -> bool:
    if pod is None or is_deleting(pod):
        return False
    cond = pod_condition(pod, "ContainersReady")
    return (pod.get("status") or {}).get("phase") == "Running" and cond is not None and cond.get("status") == "True"


def pod_restart_count(pod: Mapping[str, Any]) -> int:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return sum(int(s.get("restartCount") or 0) for s in statuses)


def pod_unschedulable(pod: Mapping[str, Any]) -> bool:
    """PodScheduled=False with a reason other than SchedulingGated (the scheduler tried and failed)."""
    cond = pod_condition(pod, "PodScheduled")
    return bool(cond and cond.get("status") == "False" and cond.get("reason") not in (None, "SchedulingGated"))


def statefulset_ready(sts: Mapping[str, Any] | None) -> bool:
    """Upstream ``StatefulsetReady``: spec.replicas == status.availableReplicas and revisions equal."""
    if sts is None or is_deleting(sts):
        return False
    spec_replicas = int((sts.get("spec") or {}).get("replicas", 1))
    st = sts.get("status") or {}
    return int(st.get("availableReplicas") or 0) == spec_replicas and st.get("currentRevision") == st.get(
        "updateRevision"
    )


def sts_partition(sts: Mapping[str, Any]) -> int:
    ru = ((sts.get("spec") or {}).get("updateStrategy") or {}).get("rollingUpdate") or {}
    return int(ru.get("partition") or 0)


def sts_replicas(sts: Mapping[str, Any]) -> int:
    return int((sts.get("spec") or {}).get("replicas", 1))
