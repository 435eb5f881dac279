"""The demand of a trace row's pods, each pod spec's requests computed once while it is unchanged.

``PodDemand().of(pods) == manifest_demand(pods)`` for every list of observed pods — the same
amounts, the same Decimal forms, the same key order (tests/sim/driver/test_pod_demand.py): the
row's pods are ``Store.observed`` copies, which share a pod's ``spec`` dict between observations
while it is unchanged and which planners only read, so a spec seen by the previous row (the same
object, kept alive by the memo) has the requests computed then. Pods of one spec are summed
``count x requests`` (exact arithmetic: the same Decimal as adding them one by one), in the order
their specs first appear (the order a one-by-one sum meets the resource names).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pulumi_lws.core.features.capacity import Demand, pod_demand
from pulumi_lws.core.k8s.quantity import add_amounts


class PodDemand:
    """What a row's pods request; remembers only the specs of the previous call's pods."""

    def __init__(self) -> None:
        self._memo: dict[int, tuple[Any, Demand]] = {}  # id(spec) -> (spec, its pod_demand)

    def of(self, pods: Iterable[Mapping[str, Any]]) -> Demand:
        """``manifest_demand(pods)`` for objects of kind Pod (the only kind a row passes)."""
        previous = self._memo
        memo: dict[int, tuple[Any, Demand]] = {}
        counts: dict[int, list[Any]] = {}  # id(spec) -> [demand, pods], in first-seen order
        for pod in pods:
            spec = pod.get("spec") or {}
            key = id(spec)
            seen = counts.get(key)
            if seen is not None:
                seen[1] += 1
                continue
            hit = memo.get(key) or previous.get(key)
            if hit is None or hit[0] is not spec:
                hit = (spec, pod_demand(spec))
            memo[key] = hit
            counts[key] = [hit[1], 1]
        self._memo = memo
        total: Demand = {}
        for demand, n in counts.values():
            add_amounts(total, demand, n)
        return total
