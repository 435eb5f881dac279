"""One ``pulumi up`` of a workload against the simulated cluster, through the one driver
(:func:`pulumi_lws.core.contract.driver.cycle`): observe, reconcile, apply what it registers, act."""

from __future__ import annotations

from typing import Any

from pulumi_lws.core.contract.driver import Cycle, cycle
from pulumi_lws.sim.cluster.simcluster import SimCluster

_DEFAULT: Any = object()


def up(workload: Any, spec: Any, cluster: SimCluster, *, actuator: Any = _DEFAULT, nodes: bool = False) -> Cycle[Any]:
    """Reconcile ``spec`` on ``cluster`` once and apply the result (stack ``s``); the stage's actions
    run on ``actuator`` (default the cluster itself; ``None``: listed, not run)."""
    return cycle(
        workload,
        spec,
        workload.options(),
        cluster,
        cluster if actuator is _DEFAULT else actuator,
        nodes=nodes,
        apply=lambda c: cluster.apply(c.reconciled.manifests, stack_id="s", dependencies=c.reconciled.dependencies),
    )
