"""The scenario of a change OLD -> NEW as ``simulate --from/--to`` and ``plan --diff`` run it.

:func:`change_scenario` is :func:`pulumi_lws.sim.quick.scenario_from_change` plus one rule: a
LeaderWorkerSet with group-exclusive placement and no ``nodes`` cannot converge on the default
single unbounded node (every group needs a topology domain of its own), so it runs on the pool
:func:`pulumi_lws.sim.expansion.node_pool` assumes (one domain per group of the larger of OLD
and NEW, each node fitting a whole group); ``Change.pool`` then says so, for the header line.
An explicit ``nodes`` pool is used exactly as given (a mismatch is a blocker, not fixed up).
Pure: no file read, nothing written; the manifests passed in are not modified.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.rollout.placement import exclusive_topology
from pulumi_lws.sim.quick import scenario_from_change
from pulumi_lws.sim.scenario import Scenario


@dataclass(frozen=True)
class Change:
    """The scenario and, when the pool was assumed rather than given, its description."""

    scenario: Scenario
    pool: str | None = None


def change_scenario(old: Mapping[str, Any], new: Mapping[str, Any], **options: Any) -> Change:
    """The scenario "converged on ``old``, ``new`` applied at t=0"; ``options`` as for
    :func:`~pulumi_lws.sim.quick.scenario_from_change` (SpecError on invalid input)."""
    scenario = scenario_from_change(old, new, **options)
    if options.get("nodes"):
        return Change(scenario)
    old_lws, new_lws = (LeaderWorkerSet.from_manifest(dict(m)) for m in (old, new))
    bigger = new_lws if new_lws.replicas > old_lws.replicas else old_lws
    if exclusive_topology(bigger) is None:
        return Change(scenario)
    from pulumi_lws.sim.expansion import node_pool

    chosen = node_pool(bigger, None, None, None)
    scenario.nodes = chosen.nodes
    return Change(scenario, chosen.description)
