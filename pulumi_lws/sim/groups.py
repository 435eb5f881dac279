"""Group states for traces, read from an observation (the simulator's own reading, not a planner).

Follows docs/design.md "Group state legend": ready(i) = leader pod Running+Ready and (size 1 or
worker StatefulSet ready); updated(i) = leader pod and worker StatefulSet carry the target key.
Live groups = leader pods that exist and are not terminating; available groups = ready groups.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

from pulumi_lws import labels as L
from pulumi_lws.observe import (Snapshot, annotations_of, is_deleting, labels_of, pod_running_and_ready,
                                pod_unschedulable, revision_of, statefulset_ready, sts_partition, sts_replicas)
from pulumi_lws.trace import GroupCell


@dataclass(frozen=True)
class GroupsView:
    replicas: int
    partition: int | None
    cells: tuple[GroupCell, ...]
    live: int
    available: int


def read_groups(snapshot: Snapshot, name: str, replicas: int, size: int, target: str, hash_mode: bool = False) -> GroupsView:
    """Cells for every leader pod and every ordinal the leader controller wants."""
    return _hash(snapshot, name, replicas, size, target) if hash_mode else _ordinal(snapshot, name, replicas, size, target)


def _ordinal(snap: Snapshot, name: str, replicas: int, size: int, target: str) -> GroupsView:
    sts = snap.get("StatefulSet", name)
    pattern = re.compile(re.escape(name) + r"-(\d+)")
    leaders = {}
    for pod in snap.list("Pod", **{L.NAME: name}):
        m = pattern.fullmatch(pod["metadata"]["name"])
        if m:
            leaders[int(m.group(1))] = pod
    wanted = range(sts_replicas(sts)) if sts is not None and not is_deleting(sts) else range(0)
    cells = [_cell(snap, str(i), leaders.get(i), f"{name}-{i}", size, target, i >= replicas) for i in sorted(set(leaders) | set(wanted))]
    return GroupsView(sts_replicas(sts) if sts else 0, sts_partition(sts) if sts else None, tuple(cells),
                      sum(1 for p in leaders.values() if not is_deleting(p)), sum(1 for c in cells if c.state in "Uo"))


def _hash(snap: Snapshot, name: str, replicas: int, size: int, target: str) -> GroupsView:
    dep = snap.get("Deployment", name)
    leaders = [p for p in snap.list("Pod", **{L.NAME: name}) if labels_of(p).get(L.WORKER_INDEX, "0") == "0"
               and not re.fullmatch(re.escape(name) + r"-\d+(-\d+)?", p["metadata"]["name"])]
    cells = []
    for pod in sorted(leaders, key=lambda p: (p["metadata"].get("creationTimestamp", ""), p["metadata"]["name"])):
        gid = labels_of(pod).get(L.GROUP_KEY) or labels_of(pod).get(L.GROUP_INDEX) or pod["metadata"]["name"]
        cells.append(_cell(snap, gid, pod, pod["metadata"]["name"], size, target, False))
    spec_replicas = int(((dep or {}).get("spec") or {}).get("replicas", 0)) if dep else 0
    return GroupsView(spec_replicas, None, tuple(cells), sum(1 for p in leaders if not is_deleting(p)),
                      sum(1 for c in cells if c.state in "Uo"))


def _cell(snap: Snapshot, gid: str, leader: Mapping[str, Any] | None, worker_name: str, size: int, target: str, surge: bool) -> GroupCell:
    if leader is None:
        return GroupCell(gid, "-", None, surge, "")
    size = int(annotations_of(leader).get(L.SIZE, size))
    workers = snap.get("StatefulSet", worker_name) if size > 1 else None
    ready = pod_running_and_ready(leader) and (size == 1 or statefulset_ready(workers))
    rev = revision_of(leader)
    updated = rev == target and (size == 1 or revision_of(workers) == target)
    state = ("U" if ready else "u") if updated else ("o" if ready else "x")
    return GroupCell(gid, state, rev, surge, _detail(snap, leader, worker_name))


def _detail(snap: Snapshot, leader: Mapping[str, Any], worker_name: str) -> str:
    if is_deleting(leader):
        return "terminating"
    if (leader.get("spec") or {}).get("schedulingGates"):
        return "gated"
    workers = [p for p in snap.list("Pod", **{L.NAME: labels_of(leader).get(L.NAME, "")})
               if p["metadata"]["name"].startswith(worker_name + "-")]
    if pod_unschedulable(leader) or any(pod_unschedulable(p) for p in workers):
        return "unschedulable"
    return ""
