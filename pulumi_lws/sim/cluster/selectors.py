"""Label selectors (``matchLabels`` / ``matchExpressions``) as the API server evaluates them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def match_expression(expr: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """One ``matchExpressions`` / node-selector requirement (In, NotIn, Exists, DoesNotExist, Gt, Lt)."""
    key, op, values = expr["key"], expr["operator"], [str(v) for v in expr.get("values") or []]
    if op == "In":
        return key in labels and labels[key] in values
    if op == "NotIn":
        return key not in labels or labels[key] not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    if op in ("Gt", "Lt") and key in labels:
        try:
            have, want = int(labels[key]), int(values[0])
        except (ValueError, IndexError):
            return False
        return have > want if op == "Gt" else have < want
    return False


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """A LabelSelector (matchLabels AND matchExpressions). An empty selector matches everything."""
    if not selector:
        return True
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    return all(match_expression(e, labels) for e in selector.get("matchExpressions") or [])
