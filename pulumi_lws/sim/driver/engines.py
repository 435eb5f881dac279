"""Drivers that play the role of one ``pulumi up`` against a :class:`SimCluster`.

``PureEngine`` calls the manifest's :class:`~pulumi_lws.core.contract.workload.Workload` exactly as the
component does (observe -> plan -> render), registers the manifests through the Pulumi-like applier with ``Reconciled.dependencies``
(what the component turns into ``depends_on``) and executes the stage's actions through the
cluster's Actuator. ``PulumiEngine`` runs a real example program under Pulumi's mock engine
(``sim/pulumi_engine.run_program``), whose component observes and acts through the installed
backend; the runner then applies what it registered, honouring the dependencies it registered
(``EngineResult.dependencies``, read from the registrations' ``depends_on``). The program reads
its own files (``lws.yaml``): spec updates reach it only as edits of its workspace copy
(``sim/driver/workspace.py``), exactly as a user edits the file before ``pulumi up``.

This is the only simulator module allowed to reach a planner (through the workload registry).
"""

from __future__ import annotations

import pathlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from pulumi_lws.core.contract.driver import Cycle, cycle
from pulumi_lws.core.contract.stage import Stage
from pulumi_lws.sim.cluster.apply import ApplyResult
from pulumi_lws.sim.cluster.simcluster import SimCluster


@dataclass
class EngineStep:
    stages: list[Stage]
    applied: ApplyResult
    executed: list[str] = field(default_factory=list)

    @property
    def stage(self) -> Stage | None:
        return self.stages[-1] if self.stages else None


class Engine(Protocol):
    name: str
    #: whether a step leaves garbage reference cycles behind (the run's collector then collects
    #: after every reconcile before freezing: sim/driver/collector.py); an engine without the
    #: attribute is taken to make them
    makes_garbage_cycles: bool

    def step(self, cluster: SimCluster, manifest: Mapping[str, Any] | None, *, keep: float = 1.0) -> EngineStep: ...


class PureEngine:
    name = "pure"
    makes_garbage_cycles = False  # tests/sim/driver/test_collector.py: every API, faults included

    def __init__(
        self,
        namespace: str = "default",
        update_order: str | None = None,
        gang_provider: str | None = None,
        check_capacity: bool | None = None,
    ) -> None:
        self.namespace = namespace
        self.choices = {"update_order": update_order, "gang_provider": gang_provider}
        self.check_capacity = check_capacity  # None: the manifest's annotation (core.features.fit)

    def step(self, cluster: SimCluster, manifest: Mapping[str, Any] | None, *, keep: float = 1.0) -> EngineStep:
        """Observe, reconcile, apply and act for the manifest's workload API (dispatch on its kind)."""
        from pulumi_lws.workloads import modelled

        doc = dict(manifest or {})
        workload = modelled(doc)  # a kind no API models: SpecError naming the known kinds
        spec = workload.parse(doc, namespace=self.namespace)
        namespace, name = workload.identity(spec)

        def apply(observed: Cycle[ApplyResult]) -> ApplyResult:
            return cluster.apply(
                observed.reconciled.manifests,
                stack_id=f"{namespace}/{name}",
                keep=keep,
                dependencies=observed.reconciled.dependencies,
            )

        done = cycle(
            workload,
            spec,
            workload.options(**self.choices),
            cluster,
            cluster,
            apply=apply,
            nodes=bool(cluster.store.list("Node")),
            check_capacity=self.check_capacity,
        )
        assert done.applied is not None
        return EngineStep([done.stage], done.applied, list(done.executed))


class PulumiEngine:
    name = "pulumi"
    makes_garbage_cycles = True  # asyncio futures, gRPC-less mock monitor callbacks: ~10,000 objects a step

    def __init__(self, program: pathlib.Path, stack_id: str | None = None) -> None:
        self.program = program
        self.stack_id = stack_id or str(program)

    def step(self, cluster: SimCluster, manifest: Mapping[str, Any] | None, *, keep: float = 1.0) -> EngineStep:
        """One ``pulumi up`` of the program; ``manifest`` is ignored (the program reads its files)."""
        from pulumi_lws.sim.driver.pulumi_engine import run_program

        result = run_program(str(self.program), cluster, cluster)
        applied = cluster.apply(result.manifests, stack_id=self.stack_id, keep=keep, dependencies=result.dependencies)
        executed = [a.describe() for s in result.stages for a in s.actions]  # run by the component itself
        return EngineStep(list(result.stages), applied, executed)


def make_engine(
    name: str,
    *,
    namespace: str = "default",
    program: pathlib.Path | None = None,
    update_order: str | None = None,
    gang_provider: str | None = None,
    stack_id: str | None = None,
    check_capacity: bool | None = None,
) -> Engine:
    """``pure`` or ``pulumi`` (``program``: the program file to run, e.g. in a workspace).
    ``check_capacity``: pure only (a program opts in with the component argument)."""
    if name == "pure":
        return PureEngine(namespace, update_order, gang_provider, check_capacity)
    if name == "pulumi":
        if program is None:
            raise ValueError("the pulumi engine needs a scenario with program:")
        if check_capacity is not None:
            raise ValueError("check_capacity is a pure-engine choice: a program sets the component argument")
        return PulumiEngine(program, stack_id)
    raise ValueError(f"unknown engine {name!r} (pure | pulumi)")
