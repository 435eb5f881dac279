"""Rules for the embedded Kubernetes objects: pod templates, volume claim templates, ObjectMeta.

``workerTemplate`` is required (upstream's CRD). The templates, the volume claim templates and the
retention policy are checked as the Kubernetes 1.35 API server checks a StatefulSet's
(:mod:`pulumi_lws.core.k8s.podspec`: unknown fields, required fields, types at any depth, quantities,
label keys and values); the LWS's own namespace, labels and annotations as apimachinery checks
ObjectMeta. Catching these here keeps the promise that invalid input fails before anything is
registered, naming the LWS field rather than a derived StatefulSet's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pulumi_lws.core.contract.errors import FieldError
from pulumi_lws.core.k8s.podspec import (
    validate_pod_template,
    validate_pvc_retention_policy,
    validate_volume_claim_template,
)

if TYPE_CHECKING:
    from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet

Errors = list[FieldError]
LWT = "spec.leaderWorkerTemplate"


def worker_template_required(lws: LeaderWorkerSet) -> Errors:
    """``workerTemplate`` is required by upstream's CRD (it is also the leader's when no leaderTemplate)."""
    if lws.spec.leader_worker_template.worker_template:
        return []
    return [FieldError(f"{LWT}.workerTemplate", "Required value", None, "Required")]


def metadata_is_valid(lws: LeaderWorkerSet) -> Errors:
    """The LWS's namespace (DNS-1123 label), label keys/values and annotation keys (apimachinery)."""
    return lws.metadata.validation_errors("metadata")


def pod_templates_are_valid(lws: LeaderWorkerSet) -> Errors:
    """leaderTemplate (when set), workerTemplate (when set: an empty one is reported by
    :func:`worker_template_required`), each volumeClaimTemplates item and the retention policy,
    against the Kubernetes 1.35 schema."""
    lwt = lws.spec.leader_worker_template
    errs: Errors = []
    if lwt.leader_template is not None:
        errs += validate_pod_template(lwt.leader_template, f"{LWT}.leaderTemplate")
    if lwt.worker_template:
        errs += validate_pod_template(lwt.worker_template, f"{LWT}.workerTemplate")
    for i, claim in enumerate(lwt.volume_claim_templates or []):
        errs += validate_volume_claim_template(claim, f"{LWT}.volumeClaimTemplates[{i}]")
    if lwt.persistent_volume_claim_retention_policy is not None:
        errs += validate_pvc_retention_policy(
            lwt.persistent_volume_claim_retention_policy, f"{LWT}.persistentVolumeClaimRetentionPolicy"
        )
    return errs
