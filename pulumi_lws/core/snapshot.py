"""Observed cluster state, shared by every policy and every backend (simulator, live cluster).

A :class:`Snapshot` is a read-only bag of Kubernetes-shaped object dicts (with ``status``) for one
namespace, keyed by ``(kind, name)``. Observers produce it; planners only read it through the
pure helpers below, never through a client type. That keeps planners testable with literal dicts
and lets the simulator and a live API server be swapped freely.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping




@dataclass(frozen=True)
class Snapshot:
    """Objects observed at time ``now`` (seconds since the epoch)."""

    objects: Mapping[tuple[str, str], Mapping[str, Any]] = field(default_factory=dict)
    now: float = 0.0

    @staticmethod
    def of(objs: Iterable[Mapping[str, Any]], now: float = 0.0) -> "Snapshot":
        return Snapshot({(o["kind"], o["metadata"]["name"]): o for o in objs}, now)

    def get(self, kind: str, name: str) -> Mapping[str, Any] | None:
        return self.objects.get((kind, name))

    def list(self, kind: str, **label_equals: str) -> list[Mapping[str, Any]]:
        """Objects of ``kind`` whose labels contain every ``label_equals`` pair, sorted by name.

        Label keys with '/' or '-' can't be keyword names: pass them with ``**{key: value}``.
        """
        out = []
        for (k, _), obj in self.objects.items():
            if k != kind:
                continue
            lbl = labels_of(obj)
            if all(lbl.get(key) == val for key, val in label_equals.items()):
                out.append(obj)
        return sorted(out, key=lambda o: o["metadata"]["name"])

    def __iter__(self) -> Iterator[Mapping[str, Any]]:
        return iter(self.objects.values())

    def __len__(self) -> int:
        return len(self.objects)


EMPTY = Snapshot()






# ---- pure readers over object dicts ---------------------------------------------------------

def labels_of(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return (obj.get("metadata") or {}).get("labels") or {}


def annotations_of(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return (obj.get("metadata") or {}).get("annotations") or {}




def is_deleting(obj: Mapping[str, Any]) -> bool:
    return bool((obj.get("metadata") or {}).get("deletionTimestamp"))


def pod_condition(pod: Mapping[str, Any], ctype: str) -> Mapping[str, Any] | None:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return c
    return None


def pod_running_and_ready(pod: Mapping[str, Any] | None) -> bool:
    """Upstream ``PodRunningAndReady``: phase Running and condition Ready=True (not deleting)."""
    if pod is None or is_deleting(pod):
        return False
    status = pod.get("status") or {}
    cond = pod_condition(pod, "Ready")
    return status.get("phase") == "Running" and cond is not None and cond.get("status") == "True"


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
    return int(st.get("availableReplicas") or 0) == spec_replicas and st.get("currentRevision") == st.get("updateRevision")


def sts_partition(sts: Mapping[str, Any]) -> int:
    ru = ((sts.get("spec") or {}).get("updateStrategy") or {}).get("rollingUpdate") or {}
    return int(ru.get("partition") or 0)


def sts_replicas(sts: Mapping[str, Any]) -> int:
    return int((sts.get("spec") or {}).get("replicas", 1))
