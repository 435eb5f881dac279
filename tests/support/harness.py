"""The reconcile harness the ModelServing and DisaggregatedSet e2e tests share.

One ``up()`` = what one ``pulumi up`` does, without Pulumi (:func:`pulumi_lws.core.contract.driver.cycle`,
the components' own cycle): observe the workload's Scope on the simulated cluster ->
``Workload.reconcile`` -> ``SimCluster.apply(keep=...)`` (``keep < 1`` is a crash part-way
through the apply) -> the stage's actions. ``bounds`` is the test's own reader of
the cluster, checked on every simulated tick by ``advance``. Subclasses set ``WORKLOAD`` and
``STACK`` and define ``spec`` (the parsed desired manifest) and ``converged()``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pulumi_lws.core.contract.driver import cycle
from pulumi_lws.sim.cluster.kubelet import KubeletConfig, Override, Timing
from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.sim.driver.scenario import Scenario, Update
from pulumi_lws.workloads import simulator_group_labels


@dataclass
class WorkloadHarness:
    cluster: SimCluster
    desired: dict[str, Any]
    bounds: Any = None
    log: list[str] = field(default_factory=list)
    last: Any = None
    reconciles: int = 0

    WORKLOAD: ClassVar[Any] = None
    STACK: ClassVar[str] = "default/workload"

    @property
    def spec(self) -> Any:
        return self.WORKLOAD.parse(self.desired)

    @property
    def options(self) -> Any:
        """The reconcile options of every ``up`` (the API's defaults)."""
        return self.WORKLOAD.options()

    def converged(self) -> bool:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def snapshot(self):
        return self.cluster.observe(self.WORKLOAD.scope(self.spec, nodes=bool(self.cluster.store.list("Node"))))

    def up(self, keep: float = 1.0, run_actions: bool = True):
        done = cycle(
            self.WORKLOAD,
            self.spec,
            self.options,
            self.cluster,
            self.cluster if run_actions else None,
            nodes=bool(self.cluster.store.list("Node")),
            apply=lambda c: self.cluster.apply(
                c.reconciled.manifests, stack_id=self.STACK, keep=keep, dependencies=c.reconciled.dependencies
            ),
        )
        result, applied, executed = done.reconciled, done.applied, list(done.executed)
        self.last, self.reconciles = result, self.reconciles + 1
        self.log.append(
            f"t={self.cluster.clock.now:g} keep={keep:.2f} {result.stage.summary()} applied={applied.lines()}"
        )
        return result, applied, executed

    def warm_up(self, rounds: int = 60) -> None:
        self.cluster.kubelet.config.instant = True
        try:
            for _ in range(rounds):
                self.up()
                if self.converged():
                    return
                self.cluster.step(self.cluster.clock.now + 1.0)
            raise AssertionError("warm-up did not converge:\n" + "\n".join(self.log[-5:]))
        finally:
            self.cluster.kubelet.config.instant = False

    def change_spec(self, manifest: Mapping[str, Any]) -> None:
        self.desired = copy.deepcopy(dict(manifest))

    def check(self) -> None:
        assert self.bounds is not None
        self.bounds(self.cluster, self.cluster.clock.now)
        if self.bounds.violations:
            raise AssertionError(f"{self.bounds.violations}\n" + "\n".join(self.log[-8:]))

    def advance(self, seconds: float, tick: float = 1.0) -> None:
        t, end = self.cluster.clock.now, self.cluster.clock.now + seconds
        while t < end:
            t = min(end, t + tick)
            self.cluster.step(t)
            self.check()


def kubelet(ready: float = 2.0, start: float = 1.0, overrides: list[Override] | None = None) -> KubeletConfig:
    """Every pod starts after ``start`` s and is ready ``ready`` s later unless an override says otherwise."""
    return KubeletConfig(
        default=Timing(start, ready),
        overrides=list(overrides or []),
        termination_grace=1.0,
        group_labels=simulator_group_labels(),
    )


def inline_scenario(
    old: Mapping[str, Any],
    new: Mapping[str, Any] | None = None,
    *,
    name: str,
    nodes: list | None = None,
    kubelet: KubeletConfig | None = None,
    max_time: float = 400,
    interval: float = 5,
    require_converged: bool = True,
    when_converged: bool = True,
    updates: list[Update] | None = None,
    seed: int = 1,
) -> Scenario:
    """Converged on ``old`` at t=0, ``new`` applied at t=0 (pure engine, inline manifests)."""
    ups = list(updates or [])
    if new is not None:
        ups.insert(0, Update(at=0.0, manifest=copy.deepcopy(dict(new))))
    return Scenario(
        name=name,
        engine="pure",
        start="converged",
        manifest=copy.deepcopy(dict(old)),
        updates=ups,
        nodes=list(nodes or []),
        kubelet=kubelet or KubeletConfig(default=Timing(1.0, 2.0)),
        interval=interval,
        tick=1.0,
        max_time=max_time,
        when_converged=when_converged,
        require_converged=require_converged,
        seed=seed,
    )
