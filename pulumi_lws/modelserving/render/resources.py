"""Volcano ``minResources`` of a ModelServing PodGroup: upstream sums the ``resources.requests`` of a
role's ``containers`` (init containers and limits do not count, unlike Kubernetes' PodRequests).
Quantity arithmetic: :mod:`pulumi_lws.core.k8s.quantity`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pulumi_lws.core.k8s.quantity import Amount, add_amounts, parse_quantity, sum_quantities


def container_requests(template: Mapping[str, Any] | None) -> dict[str, Amount]:
    """Σ ``resources.requests`` over a pod template's ``containers`` (upstream's PodGroup sum)."""
    total: dict[str, Amount] = {}
    for c in ((template or {}).get("spec") or {}).get("containers") or []:
        requests = ((c.get("resources") or {}).get("requests")) or {}
        add_amounts(total, {name: parse_quantity(q) for name, q in requests.items()})
    return total


def sum_requests(parts: Iterable[tuple[Mapping[str, Any] | None, int]]) -> dict[str, str]:
    """Σ ``count`` x container_requests(template) over ``parts``, canonical strings, sorted by name."""
    return sum_quantities((container_requests(template), count) for template, count in parts)
