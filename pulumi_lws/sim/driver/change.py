"""The scenario of a change OLD -> NEW as ``simulate --from/--to`` and ``plan --diff`` run it.

:func:`change_scenario` is :func:`pulumi_lws.sim.driver.quick.scenario_from_change` plus one rule: a
workload whose placement needs Nodes (``workload.scope(spec).nodes``: LeaderWorkerSet with
group-exclusive placement) and no ``nodes`` cannot converge on the default single unbounded node
(every group needs a topology domain of its own), so it runs on the pool
:func:`pulumi_lws.sim.driver.expansion.node_pool` assumes (one domain per group of the larger of OLD
and NEW, each node fitting a whole group); ``Change.pool`` then says so, for the header line.
:func:`converged_snapshot` is what ``plan`` and ``plan --diff`` start from: the cluster converged
on OLD, observed with NEW's scope — synthesised where it applies
(:func:`pulumi_lws.sim.driver.synth.converge`: no Node in the pool, no object, image fault or
internal revision history in the scenario, and what the synthesiser itself accepts), else the
simulator's warm-up; both give the same snapshot (tests/sim/driver/test_synth.py).
An explicit ``nodes`` pool is used exactly as given (a mismatch is a blocker, not fixed up).
Pure: no file read, nothing written; the manifests passed in are not modified.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.sim.driver.quick import scenario_from_change
from pulumi_lws.sim.driver.scenario import Scenario
from pulumi_lws.workloads import workload_of


@dataclass(frozen=True)
class Change:
    """The scenario and, when the pool was assumed rather than given, its description."""

    scenario: Scenario
    pool: str | None = None


def change_scenario(old: Mapping[str, Any], new: Mapping[str, Any], **options: Any) -> Change:
    """The scenario "converged on ``old``, ``new`` applied at t=0"; ``options`` as for
    :func:`~pulumi_lws.sim.driver.quick.scenario_from_change` (SpecError on invalid input)."""
    scenario = scenario_from_change(old, new, **options)
    if options.get("nodes"):
        return Change(scenario)
    workload = workload_of(old)
    assert workload is not None  # scenario_from_change validated both
    old_spec, new_spec = (workload.parse(dict(m)) for m in (old, new))
    bigger = new_spec if workload.budgets(new_spec)[""].replicas > workload.budgets(old_spec)[""].replicas else old_spec
    from pulumi_lws.sim.driver.expansion import node_pool

    chosen = node_pool(bigger, None, None, None, workload=workload)
    if not chosen.assumed:
        return Change(scenario)
    scenario.nodes = chosen.nodes
    return Change(scenario, chosen.description)


def converged_snapshot(
    old: Mapping[str, Any], new: Mapping[str, Any], *, synthesise: bool = True, **options: Any
) -> Snapshot:
    """What the cluster shows once ``old`` has converged (the warm-up of ``simulate --from old
    --to new``), read with ``new``'s scope (Nodes when the cluster has any, as the pure engine
    observes). Raises :class:`~pulumi_lws.sim.driver.timeline.WarmUpBlocked` naming the blocker when
    ``old`` never converges there. Synthesised (:func:`~pulumi_lws.sim.driver.synth.converge`)
    where it applies, else simulated; ``synthesise`` False: always simulated (the tests' reference)."""
    from pulumi_lws.sim.driver.timeline import TimelineRunner

    scenario = change_scenario(old, new, **options).scenario
    if synthesise:
        snapshot = _synthesised(scenario, new)
        if snapshot is not None:
            return snapshot
    # stepped: the synthesiser was tried above and declined (or the stepped reference is asked for)
    runner = TimelineRunner(scenario, "pure", synthesise=False)
    runner.freeze_between_reconciles()
    try:
        for obj in scenario.objects:
            runner.cluster.create(obj)
        runner.warm_up()
        workload = workload_of(new)
        assert workload is not None
        spec = workload.parse(dict(new))
        nodes = bool(runner.cluster.store.list("Node"))
        return runner.cluster.observe(workload.scope(spec, nodes=nodes))
    finally:
        runner.close()


def _synthesised(scenario: Scenario, new: Mapping[str, Any]) -> Snapshot | None:
    """The warm-up's cluster synthesised, read with ``new``'s scope; None where the scenario's
    cluster does more than :mod:`~pulumi_lws.sim.driver.synth` writes down (Nodes, objects of its
    own, image faults, internal revision history) or the synthesiser declines."""
    from pulumi_lws.sim.driver import synth

    kubelet = scenario.kubelet
    if (
        scenario.nodes
        or scenario.objects
        or kubelet.fail_images
        or kubelet.pull_errors
        or scenario.statefulset_history != "objects"
        or scenario.manifest is None
    ):
        return None
    workload = workload_of(scenario.manifest)
    new_workload = workload_of(new)
    if workload is None or new_workload is None:
        return None
    spec = workload.parse(dict(scenario.manifest), namespace=scenario.namespace)
    options = workload.options(update_order=scenario.update_order, gang_provider=scenario.gang_provider)
    done = synth.converge(workload, spec, options, check_capacity=scenario.check_capacity)
    if done is None:
        return None
    return done.cluster.observe(new_workload.scope(new_workload.parse(dict(new)), nodes=False))
