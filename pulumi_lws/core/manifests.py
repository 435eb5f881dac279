"""Object-level helpers shared by every renderer: metadata, headless Services, label merging.

Invariants: every object has ``metadata.name``, ``metadata.namespace`` and the label
``app.kubernetes.io/managed-by: pulumi-lws``; workload objects carry ``pulumi.com/skipAwait:
"true"`` (readiness is the planner's business).
"""
from __future__ import annotations

from typing import Any, Mapping

from pulumi_lws.core import keys as K


def merged(user: Mapping[str, str] | None, controller: Mapping[str, str]) -> dict[str, str]:
    """User keys first, controller keys win (upstream ``mergeMetadata``, #896)."""
    out = dict(user or {})
    out.update(controller)
    return out


MANAGED = {K.MANAGED_BY: K.MANAGED_BY_VALUE}


SKIP_AWAIT = {K.SKIP_AWAIT: "true"}


def metadata(name: str, namespace: str, labels: Mapping[str, str],
             annotations: Mapping[str, str] | None = None) -> dict[str, Any]:
    """ObjectMeta with the managed-by label added (it wins over a user value)."""
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": merged(labels, MANAGED)}
    if annotations:
        meta["annotations"] = dict(annotations)
    return meta


def headless_service(name: str, namespace: str, labels: Mapping[str, str], selector: Mapping[str, str]) -> dict[str, Any]:
    """Upstream ``CreateHeadlessServiceIfNotExists``: no cluster IP, not-ready pods published
    (workers must resolve a leader that is not Ready yet)."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(name, namespace, labels),
        "spec": {"clusterIP": "None", "publishNotReadyAddresses": True, "selector": dict(selector)},
    }
