"""The demand of a trace row's pods, each pod spec's requests computed once while it is unchanged.

``PodDemand().of(pods) == manifest_demand(pods)`` for every list of observed pods — the same
amounts, the same Decimal forms, the same key order (tests/sim/driver/test_pod_demand.py): the
row's pods are ``Store.observed`` copies, which share a pod's ``spec`` dict between observations
while it is unchanged and which planners only read, so a spec seen by the previous row (the same
object, kept alive by the memo) has the requests computed then.

Pods whose requests are the same amounts in the same forms (``repr``: the Decimal digits and
exponent, the binary flag, the key order) are summed ``count x requests`` (exact arithmetic: the
same Decimal as adding them one by one), in the order such a demand first appears. That is the
order a one-by-one sum meets the resource names: the first pod requesting a name is the first of
its demand's pods (they all request it), so each name enters the total from the same pod. A
fleet's pods each have their own spec dict but a handful of distinct demands, so this is a few
additions per row instead of one per pod. Memory: the specs of the previous call's pods and at
most :data:`DEMANDS` distinct demands (forgotten all at once beyond that: only fewer pods share
a sum, the same total).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pulumi_lws.core.features.capacity import Demand, pod_demand
from pulumi_lws.core.k8s.quantity import add_amounts

#: distinct demands remembered, beyond which they are forgotten (module docstring)
DEMANDS = 1024


class PodDemand:
    """What a row's pods request; remembers only the specs of the previous call's pods."""

    def __init__(self) -> None:
        self._memo: dict[int, tuple[Any, Demand]] = {}  # id(spec) -> (spec, its pod_demand's one instance)
        self._shared: dict[str, Demand] = {}  # repr of a demand -> the one instance of it

    def of(self, pods: Iterable[Mapping[str, Any]]) -> Demand:
        """``manifest_demand(pods)`` for objects of kind Pod (the only kind a row passes)."""
        previous = self._memo
        memo: dict[int, tuple[Any, Demand]] = {}
        counts: dict[int, list[Any]] = {}  # id(shared demand) -> [demand, pods], in first-seen order
        for pod in pods:
            spec = pod.get("spec") or {}
            key = id(spec)
            hit = memo.get(key) or previous.get(key)
            if hit is None or hit[0] is not spec:
                hit = (spec, self._one(pod_demand(spec)))
            memo[key] = hit
            demand = hit[1]
            seen = counts.get(id(demand))
            if seen is None:
                counts[id(demand)] = [demand, 1]
            else:
                seen[1] += 1
        self._memo = memo
        total: Demand = {}
        for demand, n in counts.values():
            add_amounts(total, demand, n)
        return total

    def _one(self, demand: Demand) -> Demand:
        """The one instance of ``demand``'s amounts and forms (module docstring)."""
        shared = self._shared
        key = repr(demand)
        found = shared.get(key)
        if found is None:
            if len(shared) >= DEMANDS:
                shared.clear()
            found = shared[key] = demand
        return found
