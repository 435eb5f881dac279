"""Object-level helpers shared by every renderer: metadata, headless Services, label merging.

Invariants: every object has ``metadata.name``, ``metadata.namespace``, the ownership label
``pulumi-lws.io/managed: "true"`` and an ``app.kubernetes.io/managed-by`` label: the user's when
their labels set one (e.g. ``kustomize``), else ``pulumi-lws``; workload objects carry
:data:`WORKLOAD_ANNOTATIONS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_lws.core.k8s import keys as K


def merged(user: Mapping[str, str] | None, controller: Mapping[str, str]) -> dict[str, str]:
    """User keys first, controller keys win (upstream ``mergeMetadata``, #896)."""
    out = dict(user or {})
    out.update(controller)
    return out


#: What every StatefulSet and Deployment carries for pulumi-kubernetes (the renderers and the
#: registration use this one table, docs/component.md "How pulumi-kubernetes treats the children"):
#:
#: * ``pulumi.com/skipAwait: "true"``: readiness is the planner's business (the provider's
#:   StatefulSet await never finishes with ``partition > 0``). For these kinds it also makes the
#:   provider's delete return as soon as the DELETE is accepted (``allowsSkipAwaitWithDelete``);
#: * ``pulumi.com/deletionPropagationPolicy: "background"``: so that DELETE removes the object at
#:   once and the garbage collector removes its pods afterwards. With the provider's default
#:   (Foreground) the object would linger, terminating, until its pods are gone, and a same-name
#:   object declared meanwhile — a delete-before-replace, or a group scaled away and back —
#:   would meet it: a server-side-apply create lands on the terminating object (which then
#:   disappears while the stack's state says it exists), a plain create answers 409 AlreadyExists.
WORKLOAD_ANNOTATIONS = {K.SKIP_AWAIT: "true", K.DELETION_PROPAGATION: "background"}


def owned_labels(labels: Mapping[str, str] | None) -> dict[str, str]:
    """``labels`` plus the ownership label (it wins) and ``managed-by: pulumi-lws`` unless the
    labels already name a manager."""
    out = dict(labels or {})
    out.setdefault(K.MANAGED_BY, K.MANAGED_BY_VALUE)
    out[K.OWNERSHIP] = K.OWNERSHIP_VALUE
    return out


def metadata(
    name: str, namespace: str, labels: Mapping[str, str], annotations: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """ObjectMeta with the ownership labels (:func:`owned_labels`)."""
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": owned_labels(labels)}
    if annotations:
        meta["annotations"] = dict(annotations)
    return meta


def headless_service(
    name: str, namespace: str, labels: Mapping[str, str], selector: Mapping[str, str]
) -> dict[str, Any]:
    """Upstream ``CreateHeadlessServiceIfNotExists``: no cluster IP, not-ready pods published
    (workers must resolve a leader that is not Ready yet)."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(name, namespace, labels),
        "spec": {"clusterIP": "None", "publishNotReadyAddresses": True, "selector": dict(selector)},
    }
