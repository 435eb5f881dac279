"""LeaderWorkerSet group states for traces, read from an observation (an independent reading,
not the planner's: the simulator checks its invariants on it).

Follows docs/leaderworkerset.md "Group state legend": ready(i) = leader pod Running+Ready and (size 1 or
worker StatefulSet ready); updated(i) = leader pod and worker StatefulSet carry the target key.
Live groups = leader pods that exist and are not terminating; available groups = ready groups.

Ordinal groups are identified by ordinal (leader pod ``<lws>-<i>``, worker StatefulSet
``<lws>-<i>``); Hash groups by group key (leader pod from the Deployment, worker StatefulSet
``<lws>-<key[:8]>``). This module reads the observation only; it imports no planner (layer 2, beside ``observe``).
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left
from collections.abc import Mapping
from itertools import pairwise
from operator import is_
from typing import Any, NamedTuple

from pulumi_lws.core.contract.snapshot import (
    Snapshot,
    is_deleting,
    labels_of,
    pod_unschedulable,
    statefulset_ready,
    sts_partition,
    sts_replicas,
)
from pulumi_lws.core.contract.trace import GroupCell, GroupsView
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.observe import revision_of


def read_groups(
    snapshot: Snapshot, name: str, replicas: int, size: int, target: str, hash_mode: bool = False
) -> GroupsView:
    """Cells for every leader pod and every ordinal the leader controller wants.

    Linear in the pods of ``name``: the pods are listed once and every group's workers are found
    through one name-prefix index (:class:`_Workers`), never by a scan per group."""
    return (
        _hash(snapshot, name, replicas, size, target) if hash_mode else _ordinal(snapshot, name, replicas, size, target)
    )


class _Workers:
    """Pods of one LWS by every name prefix that ends before a '-': ``of("<lws>-3")`` are the pods
    whose name starts with ``"<lws>-3-"`` (the group's worker pods), in name order.

    The pods come sorted by name (``Snapshot.list``), so those of one prefix ``p`` are the run
    ``p + "-" <= name < p + "."`` ('.' follows '-'): two bisections per group, no index of every
    prefix. A list not sorted by ``metadata.name`` (a malformed snapshot) is indexed by prefix."""

    def __init__(self, snap: Snapshot) -> None:
        self.snap = snap
        self._by_lws: dict[str, tuple[list[str], list[Mapping[str, Any]]] | dict[str, list[Mapping[str, Any]]]] = {}

    def of(self, lws_name: str, worker_sts: str) -> list[Mapping[str, Any]]:
        index = self._by_lws.get(lws_name)
        if index is None:
            pods = self.snap.list("Pod", **{L.NAME: lws_name})
            pod_names = [pod["metadata"]["name"] for pod in pods]
            if all(type(n) is str for n in pod_names) and all(a <= b for a, b in pairwise(pod_names)):
                index = (pod_names, pods)
            else:
                index = _prefix_index(pods)
            self._by_lws[lws_name] = index
        if isinstance(index, dict):
            return index.get(worker_sts, [])
        pod_names, pods = index
        return pods[bisect_left(pod_names, worker_sts + "-") : bisect_left(pod_names, worker_sts + ".")]


def _prefix_index(pods: list[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    """The pods by every name prefix ending before a '-', in list order."""
    index: dict[str, list[Mapping[str, Any]]] = {}
    for pod in pods:
        pod_name = pod["metadata"]["name"]
        cut = pod_name.find("-")
        while cut >= 0:
            index.setdefault(pod_name[:cut], []).append(pod)
            cut = pod_name.find("-", cut + 1)
    return index


class GroupCounts(NamedTuple):
    """The totals of :func:`read_groups`' view without its cells: ``replicas`` (the leader
    workload's), ``live`` and ``available`` as in :class:`~pulumi_lws.core.contract.trace.GroupsView`,
    ``updated`` = cells in state ``U`` or ``u``."""

    replicas: int
    live: int
    available: int
    updated: int


def count_groups(snapshot: Snapshot, name: str, size: int, target: str, hash_mode: bool = False) -> GroupCounts:
    """The totals of ``read_groups(snapshot, name, replicas, size, target, hash_mode)`` (any
    ``replicas``: it only marks surge cells), built without a cell or a detail: one state per
    leader pod (plus, Hash, per group whose workers outlive their leader)."""
    updated = available = 0
    if hash_mode:
        dep = snapshot.get("Deployment", name)
        pods = snapshot.list("Pod", **{L.NAME: name})
        leaders, keyed, orphans = _hash_groups(pods)
        for key, leader in keyed.items():
            state = _state(snapshot, leader, f"{name}-{key[:8]}", size, target)
            updated += state in "Uu"
            available += state in "Uo"
        updated += sum(1 for ws in orphans.values() if revision_of(ws[0]) == target)
        replicas = int(((dep or {}).get("spec") or {}).get("replicas", 0)) if dep else 0
        return GroupCounts(replicas, sum(1 for p in leaders if not is_deleting(p)), available, updated)
    sts = snapshot.get("StatefulSet", name)
    leaders_by_ordinal = _ordinal_leaders(snapshot, name)
    for i, leader in leaders_by_ordinal.items():
        state = _state(snapshot, leader, f"{name}-{i}", size, target)
        updated += state in "Uu"
        available += state in "Uo"
    return GroupCounts(
        sts_replicas(sts) if sts else 0,
        sum(1 for p in leaders_by_ordinal.values() if not is_deleting(p)),
        available,
        updated,
    )


def _ordinal_leaders(snap: Snapshot, name: str) -> dict[int, Mapping[str, Any]]:
    """Leader pods of Ordinal LWS ``name`` by group ordinal: pods of the LWS named ``<name>-<i>``
    (``i`` decimal digits: ``str.isdecimal`` is exactly the ``\\d`` of a ``str`` regex)."""
    prefix = name + "-"
    cut = len(prefix)
    leaders = {}
    for pod in snap.list("Pod", **{L.NAME: name}):
        pod_name = pod["metadata"]["name"]
        if pod_name.startswith(prefix) and pod_name[cut:].isdecimal():
            leaders[int(pod_name[cut:])] = pod
    return leaders


def _ordinal(snap: Snapshot, name: str, replicas: int, size: int, target: str) -> GroupsView:
    sts = snap.get("StatefulSet", name)
    leaders = _ordinal_leaders(snap, name)
    wanted = range(sts_replicas(sts)) if sts is not None and not is_deleting(sts) else range(0)
    memo = _Cells(snap, name, size, target)
    cells = [
        memo.cell(str(i), leaders.get(i), f"{name}-{i}", i >= replicas) for i in sorted(set(leaders) | set(wanted))
    ]
    memo.close()
    return GroupsView(
        sts_replicas(sts) if sts else 0,
        sts_partition(sts) if sts else None,
        tuple(cells),
        sum(1 for p in leaders.values() if not is_deleting(p)),
        sum(1 for c in cells if c.state in "Uo"),
    )


def _hash(snap: Snapshot, name: str, replicas: int, size: int, target: str) -> GroupsView:
    """One cell per group key: every leader pod, plus groups whose leader is gone but whose
    workers still terminate (PostTermination's "tearing down" groups), in creation order."""
    dep = snap.get("Deployment", name)
    leaders, keyed, orphans = _hash_groups(snap.list("Pod", **{L.NAME: name}))
    entries: list[tuple[tuple[str, str], str, Mapping[str, Any] | None]] = [
        (_created(p), key, p) for key, p in keyed.items()
    ]
    entries += [(min(_created(w) for w in ws), key, None) for key, ws in orphans.items()]
    cells = []
    memo = _Cells(snap, name, size, target)
    for _, key, leader in sorted(entries, key=lambda e: (e[0], e[1])):
        worker_sts = f"{name}-{key[:8]}"
        if leader is not None:
            cells.append(memo.cell(key, leader, worker_sts, False))
        else:
            rev = revision_of(orphans[key][0])
            cells.append(GroupCell(key, "u" if rev == target else "x", rev, False, "terminating"))
    memo.close()
    spec_replicas = int(((dep or {}).get("spec") or {}).get("replicas", 0)) if dep else 0
    return GroupsView(
        spec_replicas,
        None,
        tuple(cells),
        sum(1 for p in leaders if not is_deleting(p)),
        sum(1 for c in cells if c.state in "Uo"),
    )


def _hash_groups(
    pods: list[Mapping[str, Any]],
) -> tuple[list[Mapping[str, Any]], dict[str, Mapping[str, Any]], dict[str, list[Mapping[str, Any]]]]:
    """Hash groups among ``pods``: every leader pod, the leaders by group key (the last of a key),
    and the workers of groups whose leader is not among them, by group key (else group index)."""
    leaders = [p for p in pods if is_hash_leader(p)]
    keyed = {hash_group_key(p): p for p in leaders}
    orphans: dict[str, list[Mapping[str, Any]]] = {}
    for p in pods:
        key = labels_of(p).get(L.GROUP_KEY) or labels_of(p).get(L.GROUP_INDEX)
        if not is_hash_leader(p) and key and key not in keyed:
            orphans.setdefault(key, []).append(p)
    return leaders, keyed, orphans


def is_hash_leader(pod: Mapping[str, Any]) -> bool:
    """Hash leaders carry ``worker-index: "0"`` and are not owned by a (worker) StatefulSet;
    Hash workers carry no worker-index label (their index is ``apps.kubernetes.io/pod-index``)."""
    owners = (pod.get("metadata") or {}).get("ownerReferences") or []
    return labels_of(pod).get(L.WORKER_INDEX) == "0" and not any(o.get("kind") == "StatefulSet" for o in owners)


def hash_group_key(leader: Mapping[str, Any]) -> str:
    """The leader's ``group-key`` label; before the first reconcile labels it, the key that
    reconcile will write: sha1 of ``"<namespace>/<pod uid>"`` (docs/hash-mode.md, group identity),
    so a group keeps one column in the trace from the moment its leader exists."""
    key = labels_of(leader).get(L.GROUP_KEY)
    if key:
        return key
    meta = leader.get("metadata") or {}
    seed = meta.get("uid") or meta.get("name") or ""
    return hashlib.sha1(f"{meta.get('namespace', 'default')}/{seed}".encode()).hexdigest()


def _created(pod: Mapping[str, Any]) -> tuple[str, str]:
    meta = pod.get("metadata") or {}
    return (str(meta.get("creationTimestamp", "")), str(meta.get("name", "")))


#: LeaderWorkerSets whose last view's cells are remembered, per observer (:class:`_Cells`)
LIMIT = 64


class _Cells:
    """One view's cells, a group's reused from the previous view of the same LeaderWorkerSet when
    its inputs are the very same objects (a memo; the cells unchanged). Only under the observer's
    promise (:attr:`Snapshot.reuse <pulumi_lws.core.contract.snapshot.Snapshot.reuse>`: an
    identical object is an unchanged one); without it every cell is read afresh, nothing kept.

    A cell is a function of its id, its leader pod, worker StatefulSet name and surge flag, the
    view's ``size`` and ``target`` (the context, per LWS name) and the objects :func:`_cell` reads:
    the worker StatefulSet of that name and the worker pods under that name prefix. Each is
    compared by identity (held: no id is reused while remembered) or value. Memory: per LWS the
    last view's cells and the objects they were read from, for at most :data:`LIMIT` LWSs.
    tests/lws/test_lws_trace_view.py compares every view of fleet rollouts and examples."""

    __slots__ = ("_ctx", "_kept", "_memo", "_name", "_previous", "snap", "workers")

    def __init__(self, snap: Snapshot, name: str, size: int, target: str) -> None:
        self.snap, self.workers = snap, _Workers(snap)
        self._name, self._ctx = name, (size, target)
        self._memo: dict[Any, Any] | None = None if snap.reuse is None else snap.reuse.memo(__name__)
        last = None if self._memo is None else self._memo.pop(name, None)
        self._previous: dict[str, tuple[Any, ...]] = last[1] if last is not None and last[0] == self._ctx else {}
        self._kept: dict[str, tuple[Any, ...]] = {}

    def cell(self, gid: str, leader: Mapping[str, Any] | None, worker_name: str, surge: bool) -> GroupCell:
        """``_cell(snap, gid, leader, worker_name, size, target, surge, workers)``."""
        size, target = self._ctx
        if self._memo is None or leader is None:
            return _cell(self.snap, gid, leader, worker_name, size, target, surge, self.workers)
        sts = self.snap.get("StatefulSet", worker_name)
        pods = self.workers.of((((leader.get("metadata") or {}).get("labels")) or {}).get(L.NAME, ""), worker_name)
        hit = self._previous.get(gid)
        if (
            hit is not None
            and hit[0] is leader
            and hit[1] is sts
            and hit[2] == worker_name
            and hit[3] == surge
            and len(hit[4]) == len(pods)
            and all(map(is_, hit[4], pods))
        ):
            found: GroupCell = hit[5]
        else:
            found = _cell(self.snap, gid, leader, worker_name, size, target, surge, self.workers)
        self._kept[gid] = (leader, sts, worker_name, surge, tuple(pods), found)
        return found

    def close(self) -> None:
        """Remember this view's cells (only these) for the next view of the LWS."""
        if self._memo is not None:
            self._memo[self._name] = (self._ctx, self._kept)
            while len(self._memo) > LIMIT:
                del self._memo[next(iter(self._memo))]


def _cell(
    snap: Snapshot,
    gid: str,
    leader: Mapping[str, Any] | None,
    worker_name: str,
    size: int,
    target: str,
    surge: bool,
    pods: _Workers,
) -> GroupCell:
    if leader is None:
        return GroupCell(gid, "-", None, surge, "")
    return GroupCell(
        gid,
        _state(snap, leader, worker_name, size, target),
        revision_of(leader),
        surge,
        _detail(leader, worker_name, pods),
    )


def _state(snap: Snapshot, leader: Mapping[str, Any], worker_name: str, size: int, target: str) -> str:
    """The legend state (U u o x) of the group whose leader pod is ``leader``.

    ``pod_running_and_ready(leader)``, ``statefulset_ready`` and ``revision_of`` composed, the
    leader's metadata read once (this runs for every group of every trace row and observation)."""
    meta = leader.get("metadata") or {}
    size = int((meta.get("annotations") or {}).get(L.SIZE, size))
    workers = snap.get("StatefulSet", worker_name) if size > 1 else None
    ready = False
    if not meta.get("deletionTimestamp"):
        status = leader.get("status") or {}
        if status.get("phase") == "Running":
            for c in status.get("conditions") or []:  # pod_condition(leader, "Ready"): the first
                if c.get("type") == "Ready":
                    ready = c.get("status") == "True" and (size == 1 or statefulset_ready(workers))
                    break
    updated = (meta.get("labels") or {}).get(L.TEMPLATE_REVISION_HASH) == target and (
        size == 1 or revision_of(workers) == target
    )
    return ("U" if ready else "u") if updated else ("o" if ready else "x")


def _detail(leader: Mapping[str, Any], worker_name: str, pods: _Workers) -> str:
    meta = leader.get("metadata") or {}
    if meta.get("deletionTimestamp"):  # is_deleting
        return "terminating"
    if (leader.get("spec") or {}).get("schedulingGates"):
        return "gated"
    if pod_unschedulable(leader):
        return "unschedulable"
    group_workers = pods.of((meta.get("labels") or {}).get(L.NAME, ""), worker_name)
    if any(pod_unschedulable(p) for p in group_workers):
        return "unschedulable"
    return ""
