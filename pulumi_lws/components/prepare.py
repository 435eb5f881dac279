"""What every workload component does in ``__init__``, in one place (:func:`run_workload`).

Order matters: ``mode`` is split off, Output inputs are resolved and the spec built once by the
one argument layer (:func:`pulumi_lws.components.args.build_spec`: ``SpecError`` before anything
is registered), the upstream CRD is checked in controller mode (raises before anything is
registered), and only then is the component itself registered and its one reconcile run.
Nothing here knows an API: everything per API is a fact of its registered
:class:`~pulumi_lws.core.contract.workload.Workload`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi

from pulumi_lws.components.args import Built, build_spec
from pulumi_lws.components.base import WorkloadComponent, stage_outputs
from pulumi_lws.components.controller import checked_backend, reconcile_in_mode, split_mode
from pulumi_lws.components.inputs import InvalidInput
from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.core.contract.workload import Reconciled, Workload


@dataclass(frozen=True)
class Run:
    """One component's ``pulumi up``: its validated arguments, what it observed and planned, the
    lines of the actions it ran (or, in preview, would run)."""

    built: Built
    snapshot: Snapshot
    result: Reconciled
    action_lines: list[str]


def prepare(
    component: WorkloadComponent, t: str, name: str, args: Any, opts: pulumi.ResourceOptions | None, workload: Workload
) -> tuple[str, Built, Any]:
    """Register ``component`` after validating ``args``; returns ``(mode, built, backend)``
    for :func:`pulumi_lws.components.controller.reconcile_in_mode`."""
    try:
        mode, args = split_mode(args, workload)
    except SpecError as err:  # one clear error under the language host, never a traceback
        raise InvalidInput.of(err) from None
    inputs, built = component._build(args, lambda plain: build_spec(workload, name, plain))
    backend = checked_backend(mode, workload, built.spec, gang_provider=built.gang_provider)
    WorkloadComponent.__init__(component, t, name, opts, inputs)
    return mode, built, backend


def run_workload(
    component: WorkloadComponent, t: str, name: str, args: Any, opts: pulumi.ResourceOptions | None, workload: Workload
) -> Run:
    """Validate, register ``component`` and run its one reconcile in its ``mode``."""
    mode, built, backend = prepare(component, t, name, args, opts, workload)
    snapshot, result, action_lines = reconcile_in_mode(
        component,
        mode,
        backend,
        name,
        workload,
        built.spec,
        built.options,
        built.manifest,
        gang_provider=built.gang_provider,
    )
    return Run(built, snapshot, result, action_lines)


def workload_outputs(workload: Workload, run: Run) -> dict[str, Any]:
    """The outputs every workload component publishes: its stage's (with :func:`pods_output` as
    ``stage.pods``) and the upstream ``status``."""
    outputs = stage_outputs(run.result.stage, run.action_lines)
    outputs["stage"] = {**outputs["stage"], "pods": pods_output(workload, run.built.spec)}
    return {**outputs, "status": workload.status(run.built.spec, run.snapshot, run.result.stage)}


def pods_output(workload: Workload, spec: Any) -> dict[str, Any] | None:
    """The workload's pods as its reconcile reads them (its scope's namespace and Pod label
    selector, a None value meaning "the key exists"): what ``pulumi-lws rollout`` polls between two
    ``pulumi up`` runs, in that namespace only. None when the workload reads no pods."""
    scope = workload.scope(spec, nodes=False)
    if "Pod" not in scope.kinds:
        return None
    return {"namespace": scope.namespace, "selector": dict(scope.selector_for("Pod"))}
