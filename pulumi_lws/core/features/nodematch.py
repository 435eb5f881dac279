"""Which nodes a pod may land on, as the scheduler's filters the capacity check models (pure).

Matched (:func:`matches`): the node is Ready (``Ready=True`` when it reports the condition) and not
cordoned (``spec.unschedulable``); ``nodeSelector`` pairs equal node labels; required node
affinity (``requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms``: some term whose
``matchExpressions`` — In, NotIn, Exists, DoesNotExist, Gt, Lt — and ``matchFields``
(``metadata.name``) all hold; a term with neither matches nothing, as upstream); every
``NoSchedule`` / ``NoExecute`` taint tolerated (operator Equal/Exists, key, value, effect; an
empty key with Exists tolerates every taint; ``PreferNoSchedule`` never blocks).

Not matched: pod (anti-)affinity, topology spread, preferred terms, volume topology, DRA claims
(:mod:`pulumi_lws.core.features.fit` documents what that means for the check).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_lws.core.contract.snapshot import labels_of

#: taint effects that keep a pod off a node unless tolerated
BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")


def _ready(node: Mapping[str, Any]) -> bool:
    for c in (node.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return bool(c.get("status") == "True")
    return True  # a node reporting no Ready condition (a test fixture) counts as ready


def _expression(expr: Mapping[str, Any], value_of: Mapping[str, str]) -> bool:
    key, op = expr.get("key"), expr.get("operator")
    values = [str(v) for v in expr.get("values") or []]
    present = key in value_of
    value = value_of.get(str(key))
    if op == "In":
        return present and value in values
    if op == "NotIn":
        return not present or value not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt") and present and values:
        try:
            have, bound = int(str(value)), int(values[0])
        except ValueError:
            return False
        return have > bound if op == "Gt" else have < bound
    return False


def _tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    effect = toleration.get("effect")
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key")
    if toleration.get("operator") == "Exists":
        return not key or key == taint.get("key")
    return key == taint.get("key") and str(toleration.get("value") or "") == str(taint.get("value") or "")


def matches(pod_spec: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    """Whether the scheduler's filters this module models let ``pod_spec`` onto ``node``."""
    if not _ready(node) or (node.get("spec") or {}).get("unschedulable"):
        return False
    labels = {str(k): str(v) for k, v in labels_of(node).items()}
    if any(labels.get(str(k)) != str(v) for k, v in (pod_spec.get("nodeSelector") or {}).items()):
        return False
    required = ((pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    if required:
        fields = {"metadata.name": str((node.get("metadata") or {}).get("name"))}
        terms = required.get("nodeSelectorTerms") or []
        if not any(
            all(_expression(e, labels) for e in t.get("matchExpressions") or [])
            and all(_expression(e, fields) for e in t.get("matchFields") or [])
            and (t.get("matchExpressions") or t.get("matchFields"))
            for t in terms
        ):
            return False
    tolerations = pod_spec.get("tolerations") or []
    for taint in (node.get("spec") or {}).get("taints") or []:
        if taint.get("effect") in BLOCKING_EFFECTS and not any(_tolerates(t, taint) for t in tolerations):
            return False
    return True
