"""``pulumi-lws.io/per-pod-values`` (component argument ``per_pod_values``): where the values
upstream's pod webhook sets per pod come from (docs/rendering.md "Per-pod values").

* ``template`` (default): the StatefulSet templates carry what every pod shares; per-pod labels
  arrive at the next reconcile;
* ``admission-policy``: a MutatingAdmissionPolicy sets them when the pod is created
  (:mod:`pulumi_lws.lws.render.admission`); Ordinal group identity only (Hash leaders are
  Deployment pods with random names, whose keys no render can precompute).

``pulumi-lws.io/admission-policy-api-version`` picks the rendered ``admissionregistration.k8s.io``
version: ``v1beta1`` (default), ``v1alpha1`` or ``v1``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from pulumi_lws.lws.api.fields import Errors, err

if TYPE_CHECKING:  # annotations only: the model runs these rules
    from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet

PER_POD_VALUES = "pulumi-lws.io/per-pod-values"
TEMPLATE = "template"
ADMISSION_POLICY = "admission-policy"
MODES = (TEMPLATE, ADMISSION_POLICY)
POLICY_API_VERSION = "pulumi-lws.io/admission-policy-api-version"
POLICY_VERSIONS = ("v1alpha1", "v1beta1", "v1")
DEFAULT_POLICY_VERSION = "v1beta1"


def _supported(path: str, value: object, allowed: tuple[str, ...]) -> Errors:
    quoted = ", ".join(f'"{v}"' for v in allowed)
    return err(path, f'Unsupported value: "{value}": supported values: {quoted}', value, "NotSupported")


def modes_valid(annotations: Mapping[str, str]) -> Errors:
    """The mode and the policy version of ``annotations`` (an object's ``metadata.annotations``) are known."""
    mode, version = annotations.get(PER_POD_VALUES), annotations.get(POLICY_API_VERSION)
    errors: Errors = []
    if mode is not None and mode not in MODES:
        errors += _supported(f"metadata.annotations[{PER_POD_VALUES}]", mode, MODES)
    if version is not None and version not in POLICY_VERSIONS:
        errors += _supported(f"metadata.annotations[{POLICY_API_VERSION}]", version, POLICY_VERSIONS)
    return errors


def per_pod_values_valid(lws: LeaderWorkerSet) -> Errors:
    """The mode and the policy version are known; ``admission-policy`` needs Ordinal identity."""
    annotations = lws.metadata.annotations
    mode = annotations.get(PER_POD_VALUES)
    path = f"metadata.annotations[{PER_POD_VALUES}]"
    errors: Errors = modes_valid(annotations)
    if mode == ADMISSION_POLICY and lws.spec.group_identity == "Hash":
        errors += err(
            path,
            "admission-policy needs spec.groupIdentity Ordinal (Hash leaders are Deployment pods whose names, "
            'and so group keys, are only known once they exist); use "template"',
            mode,
        )
    return errors
