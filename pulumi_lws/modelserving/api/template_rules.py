"""The embedded Kubernetes objects of a ModelServing: its ObjectMeta and every role's pod templates.

The CRD embeds Kubernetes' ``PodTemplateSpec`` schema for ``entryTemplate`` and ``workerTemplate``;
they are checked as the Kubernetes 1.35 API server checks a pod template
(:mod:`pulumi_lws.core.k8s.podspec`: unknown fields, required fields, types at any depth, quantities,
int32/int64 ranges, label keys and values), and the ModelServing's own namespace, labels and
annotations as apimachinery checks ObjectMeta. They run first (the schema precedes the webhook),
so the webhook rules and the renderer only ever see well-formed templates; each problem names
the ModelServing field (``spec.template.roles[0].entryTemplate.spec.containers[0].bogusField``),
not a derived StatefulSet's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pulumi_lws.core.k8s.podspec import validate_pod_template
from pulumi_lws.modelserving.api.fields import Errors, role_path

if TYPE_CHECKING:
    from pulumi_lws.modelserving.api.modelserving import ModelServing


def metadata_is_valid(ms: ModelServing) -> Errors:
    """The ModelServing's namespace (DNS-1123 label), label keys/values and annotations (apimachinery)."""
    return ms.metadata.validation_errors("metadata")


def pod_templates_are_valid(ms: ModelServing) -> Errors:
    """Every role's ``entryTemplate`` and (when set) ``workerTemplate`` against Kubernetes 1.35 (a
    ``workerTemplate`` no pod is made from, ``workerReplicas: 0``, against the CRD's schema only:
    upstream's samples write ``containers: []`` there)."""
    errs: Errors = []
    for i, role in enumerate(ms.spec.template.roles):
        errs += validate_pod_template(role.entry_template, f"{role_path(i)}.entryTemplate")
        if role.worker_template is not None:  # with workerReplicas 0 no worker pod is made from it
            errs += validate_pod_template(
                role.worker_template, f"{role_path(i)}.workerTemplate", makes_pods=role.worker_replicas > 0
            )
    return errs


#: schema order: metadata, then the roles' templates
STRUCTURE_RULES = (metadata_is_valid, pod_templates_are_valid)
