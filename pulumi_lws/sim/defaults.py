"""API-server defaulting for the kinds the simulator runs controllers for.

Invariant: defaulting is idempotent, so comparing a defaulted desired manifest with a stored
(defaulted) object says exactly whether Pulumi would send an update.
"""
from __future__ import annotations

from typing import Any


def apply_defaults(obj: dict[str, Any], store: Any, existing: dict[str, Any] | None = None) -> None:
    fn = _DEFAULTERS.get(obj.get("kind", ""))
    if fn is not None:
        fn(obj, store, existing)


def _statefulset(obj: dict[str, Any], store: Any, existing: dict[str, Any] | None) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    spec.setdefault("revisionHistoryLimit", 10)
    strategy = spec.setdefault("updateStrategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        ru = strategy.setdefault("rollingUpdate", {})
        ru.setdefault("partition", 0)
    retention = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
    retention.setdefault("whenDeleted", "Retain")
    retention.setdefault("whenScaled", "Retain")


def _deployment(obj: dict[str, Any], store: Any, existing: dict[str, Any] | None) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    strategy = spec.setdefault("strategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        ru = strategy.setdefault("rollingUpdate", {})
        ru.setdefault("maxSurge", "25%")
        ru.setdefault("maxUnavailable", "25%")


def _service(obj: dict[str, Any], store: Any, existing: dict[str, Any] | None) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("type", "ClusterIP")
    if not spec.get("clusterIP"):
        old = ((existing or {}).get("spec") or {}).get("clusterIP")
        spec["clusterIP"] = old or store.allocate_cluster_ip()


def _pod(obj: dict[str, Any], store: Any, existing: dict[str, Any] | None) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("restartPolicy", "Always")
    status = obj.setdefault("status", {})
    status.setdefault("phase", "Pending")


_DEFAULTERS = {"StatefulSet": _statefulset, "Deployment": _deployment, "Service": _service, "Pod": _pod}
