"""API-server defaulting for the kinds the simulator runs controllers for.

Invariants: defaulting is idempotent, so comparing a defaulted desired manifest with a stored
(defaulted) object says exactly whether Pulumi would send an update. It writes only ``obj``
itself and copies of the nested dicts it fills in (copy on write: ``spec``, the update strategy,
``status``...), never a dict ``obj`` shares with someone else — so a shallow copy of a caller's
manifest can be defaulted without touching the caller's (the applier relies on it).
"""

from __future__ import annotations

from typing import Any


def apply_defaults(obj: dict[str, Any], store: Any, existing: dict[str, Any] | None = None) -> None:
    fn = _DEFAULTERS.get(obj.get("kind", ""))
    if fn is not None:
        fn(obj, store, existing)


def _own(parent: dict[str, Any], key: str) -> dict[str, Any]:
    """``parent[key]`` replaced by a shallow copy of itself (an empty dict when absent): the
    dict the defaulter may write. Key order as ``setdefault`` would leave it."""
    value = parent[key] = dict(parent.get(key, {}))
    return value


def _statefulset(obj: dict[str, Any], store: Any, existing: dict[str, Any] | None) -> None:
    spec = _own(obj, "spec")
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    spec.setdefault("revisionHistoryLimit", 10)
    strategy = _own(spec, "updateStrategy")
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        ru = _own(strategy, "rollingUpdate")
        ru.setdefault("partition", 0)
    retention = _own(spec, "persistentVolumeClaimRetentionPolicy")
    retention.setdefault("whenDeleted", "Retain")
    retention.setdefault("whenScaled", "Retain")


def _deployment(obj: dict[str, Any], store: Any, existing: dict[str, Any] | None) -> None:
    spec = _own(obj, "spec")
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    strategy = _own(spec, "strategy")
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        ru = _own(strategy, "rollingUpdate")
        ru.setdefault("maxSurge", "25%")
        ru.setdefault("maxUnavailable", "25%")


def _service(obj: dict[str, Any], store: Any, existing: dict[str, Any] | None) -> None:
    spec = _own(obj, "spec")
    spec.setdefault("type", "ClusterIP")
    if not spec.get("clusterIP"):
        old = ((existing or {}).get("spec") or {}).get("clusterIP")
        spec["clusterIP"] = old or store.allocate_cluster_ip()


def _pod(obj: dict[str, Any], store: Any, existing: dict[str, Any] | None) -> None:
    spec = _own(obj, "spec")
    spec.setdefault("restartPolicy", "Always")
    status = _own(obj, "status")
    status.setdefault("phase", "Pending")


_DEFAULTERS = {"StatefulSet": _statefulset, "Deployment": _deployment, "Service": _service, "Pod": _pod}
