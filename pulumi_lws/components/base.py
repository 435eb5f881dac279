"""What every workload component does in ``__init__`` (one ``pulumi up`` = one reconcile).

1. the subclass resolves the Pulumi Outputs in ``args`` and builds and validates its spec
   (:meth:`WorkloadComponent._build`, components/inputs.py) *before* calling
   ``WorkloadComponent.__init__`` — a :class:`SpecError` then guarantees nothing was registered;
2. :meth:`WorkloadComponent._reconcile` observes the cluster through the installed backend (live
   cluster by default, the simulator or a test fake under :func:`pulumi_lws.backend.use_backend`)
   with the API's :class:`~pulumi_lws.core.contract.ports.Scope`, asks the API's
   :class:`~pulumi_lws.core.contract.workload.Workload` for exactly one safe stage, registers every
   manifest with ``parent=self`` and ``depends_on`` its declared dependencies, and runs the
   stage's actions on update only (in preview they are listed); the stage table is logged on the component either way);
3. the subclass publishes its outputs with :meth:`WorkloadComponent._publish_outputs`.

Providers passed on the component (``opts=ResourceOptions(providers=[k8s_provider])``) reach
every child through ``parent=self``; so do ``protect`` and the engine's ``transforms``; the
component copies ``retain_on_delete`` and its inputs' dependencies to every child and binds the
destroy-time release hook (components/lifecycle.py).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

import pulumi

from pulumi_lws.backend import Backend, current_backend
from pulumi_lws.components import outputs as _outputs
from pulumi_lws.components.inputs import ResolvedInputs, resolve_inputs
from pulumi_lws.components.lifecycle import (
    RetainedRelease,
    child_options,
    release_hook,
    with_dependencies,
)
from pulumi_lws.components.registration import register_children
from pulumi_lws.core.contract.driver import Cycle, cycle
from pulumi_lws.core.contract.ports import CLUSTER_ERROR, ActionError, ClusterError
from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.core.contract.stage import Stage
from pulumi_lws.core.contract.workload import Reconciled, Workload
from pulumi_lws.core.features.capacity import demand_text, manifest_demand
from pulumi_lws.core.features.control import capacity_choice_of

B = TypeVar("B")
C = TypeVar("C", bound=type)

#: kind -> the component class serving that API, in registration order (each per-API component
#: module registers its class; the component provider serves every registered one)
_COMPONENT_CLASSES: dict[str, type] = {}


def register_component(kind: str, cls: C) -> C:
    """Make ``cls`` the component of the registered API ``kind`` (the provider serves it)."""
    existing = _COMPONENT_CLASSES.get(kind)
    if existing is not None and existing is not cls:
        raise ValueError(f"a component for kind {kind!r} is already registered")
    _COMPONENT_CLASSES[kind] = cls
    return cls


def registered_components() -> dict[str, type]:
    """Every registered component class by kind (a copy, registration order)."""
    return dict(_COMPONENT_CLASSES)


@contextlib.contextmanager
def component_registration(kind: str, cls: type) -> Iterator[type]:
    """``cls`` registered for the block only (a plugin or test API), then unregistered."""
    known = _COMPONENT_CLASSES.get(kind) is cls
    register_component(kind, cls)
    try:
        yield cls
    finally:
        if not known:
            _COMPONENT_CLASSES.pop(kind, None)


#: Called with (component name, stage) after each reconcile; the mock-engine driver collects stages here.
_stage_listeners: list[Callable[[str, Stage], None]] = []


@contextlib.contextmanager
def on_stage(listener: Callable[[str, Stage], None]) -> Iterator[None]:
    """Receive every stage computed by workload components while the block runs."""
    _stage_listeners.append(listener)
    try:
        yield
    finally:
        _stage_listeners.remove(listener)


def kubernetes_provider_settings() -> dict[str, str | None]:
    """The cluster the default pulumi-kubernetes provider targets: the stack's ``kubernetes:context``
    and ``kubernetes:kubeconfig`` config (unset: the current kube context), so the component
    observes the same cluster it registers objects in."""
    config = pulumi.Config("kubernetes")
    return {"context": config.get("context"), "kubeconfig": config.get("kubeconfig")}


class WorkloadComponent(pulumi.ComponentResource):
    """Base of the LeaderWorkerSet, ModelServing and DisaggregatedSet components.

    No class-level annotations here: the component provider's schema analyzer reads annotations
    as outputs (``self.child_resources`` is set by :meth:`_reconcile`)."""

    @staticmethod
    def _build(args: Any, builder: Callable[[Any], B]) -> tuple[ResolvedInputs, B]:
        """Resolve every Output in ``args`` (blocking; unknowns in preview get stand-ins) and build
        the spec from the plain values; raises ``SpecError`` (never printing a secret)."""
        inputs = resolve_inputs(args)
        return inputs, inputs.build(builder)

    def __init__(
        self, t: str, name: str, opts: pulumi.ResourceOptions | None = None, inputs: ResolvedInputs | None = None
    ) -> None:
        self._inputs = inputs or ResolvedInputs(args=None)
        self._component_opts = opts
        super().__init__(t, name, {}, with_dependencies(opts, self._inputs.resources))
        # set by the reconcile (operator-free or controller mode); annotated here, not on the class
        # (the provider's schema analyzer would read class annotations as outputs)
        self.assumptions: list[str] = []
        self.child_resources: list[Any] = []

    def _reconcile(
        self,
        name: str,
        workload: Workload,
        spec: Any,
        options: Any,
        *,
        gang_provider: str = "kubernetes",
        backend: Backend | None = None,
    ) -> tuple[Snapshot, Reconciled, list[str]]:
        """Observe, plan one stage, register its objects and run (or, in preview, list) its actions.
        ``backend``: the one the preflight already asked (its discovery answers are reused), else
        the current one."""
        inputs = self._inputs

        def register(observed: Cycle[Any]) -> list[Any]:
            namespace, scope, backend = observed.namespace, observed.scope, self._backend
            self.assumptions = inputs.notes(creating=len(observed.snapshot) == 0)
            # one observe per engine run, however many StatefulSets/Deployments the run deletes
            self._release = RetainedRelease(backend, namespace, scope, workload)
            hook = release_hook(_hook_name(name, self._component_opts), self._release)
            self._release_hook = hook  # the engine runs it at destroy; tests call it (mocks run no hooks)
            # old-revision groups carry the previous value of a changed secret input: secret too
            inputs.learn_secret_positions(observed.reconciled.manifests)
            self.child_resources = register_children(
                name,
                observed.reconciled.manifests,
                observed.reconciled.dependencies,
                self,
                substitute=inputs.pass_through,
                options=child_options(self._component_opts, inputs.resources, hook),
            )
            self._stage_demand = manifest_demand(observed.reconciled.manifests)  # every API's workloads, no kind branch
            return self.child_resources

        try:  # no kubeconfig, or nothing is planned from a partial read: one line, no traceback
            self._backend: Backend = backend or current_backend(
                **kubernetes_provider_settings(), gang_provider=gang_provider
            )
            done = cycle(
                workload,
                spec,
                options,
                self._backend.observer,
                apply=register,
                act=self._run_actions,
                check_capacity=capacity_choice_of(os.environ),  # rollout --check-capacity; unset: the argument
            )
        except ClusterError as exc:  # (a failed action is the RunError of _run_actions, never this)
            raise pulumi.RunError(f"{name}: {CLUSTER_ERROR}{exc}") from exc
        snapshot, result, action_lines = done.snapshot, done.reconciled, list(done.executed)
        for listener in list(_stage_listeners):
            listener(name, result.stage)
        return snapshot, result, action_lines

    def _run_actions(self, namespace: str, stage: Stage) -> list[str]:
        """Execute on update; in preview only list what would run. Either way the stage's summary and
        table (in preview with the assumptions made for unknown inputs) are logged through
        ``pulumi.log`` on this component, so ``pulumi preview``/``up`` show them under it in
        Diagnostics (as ``pulumi-lws preview``/``up`` do). Secret input values never reach a log line."""
        redact = self._inputs.redact
        planned = [redact(a.describe()) for a in stage.actions]
        # what the blocker's remedies say (an insufficient-capacity hold's maxSurge/maxUnavailable fix, ...)
        remedies = "".join(f"\nremedy: {r}" for r in (stage.blocker.remedies if stage.blocker else ()))
        if pulumi.runtime.is_dry_run():
            notes = "".join(f"\nassumes: {n}" for n in self.assumptions)
            pulumi.log.info(redact(f"{stage.summary()}{remedies}\n{_outputs.stage_table(stage)}{notes}"), resource=self)
            pulumi.log.info(
                f"demand of this stage (pod requests x pods declared): "
                f"{demand_text(getattr(self, '_stage_demand', {}))}",
                resource=self,
            )
            for line in planned:
                pulumi.log.info(f"would {line}", resource=self)
            return planned
        pulumi.log.info(redact(f"{stage.summary()}{remedies}\n{_outputs.stage_table(stage)}"), resource=self)
        if not stage.actions:
            return []
        release = getattr(self, "_release", None)
        try:
            executed = self._backend.actuator.execute(namespace, list(stage.actions)) or []
        except ActionError as exc:  # the applied ones are logged, the error names the failed one and lists them
            for line in exc.applied:
                pulumi.log.info(redact(line), resource=self)
            raise pulumi.RunError(redact(f"{self._name}: {CLUSTER_ERROR}{exc}")) from exc
        finally:
            if release is not None:  # these writes may retain pods: the delete hook observes again
                release.wrote()
        results = [redact(line) for line in executed]
        for line in results:
            pulumi.log.info(line, resource=self)
        return results or planned

    def _publish_outputs(self, outputs: Mapping[str, Any]) -> None:
        """Set each output as an attribute and register them all (``register_outputs``). Secret
        input values are blanked; ``stage.assumptions`` lists what a preview assumed for unknowns."""
        outputs = {k: self._inputs.redact(v) for k, v in outputs.items()}
        if self.assumptions and isinstance(outputs.get("stage"), Mapping):
            outputs["stage"] = {**outputs["stage"], "assumptions": list(self.assumptions)}
        for key, value in outputs.items():
            setattr(self, key, pulumi.Output.from_input(value))
        self.register_outputs(dict(outputs))


def _hook_name(name: str, opts: pulumi.ResourceOptions | None) -> str:
    """Unique per component in a program and stable across runs (the engine finds a delete hook
    again by name): the component name, prefixed by its parent's when it has one."""
    parent = getattr(opts, "parent", None) if opts is not None else None
    parent_name = getattr(parent, "_name", None)
    return f"{parent_name}-{name}" if parent_name else name


def stage_outputs(stage: Stage, action_lines: list[str]) -> dict[str, Any]:
    """The outputs every workload component publishes about its stage."""
    return {
        "revision": stage.target_revision,
        "stage": _outputs.stage_summary(stage),
        "blocker": _outputs.blocker_text(stage),
        "remaining_stages": _outputs.remaining_stages(stage),
        "actions": action_lines,
    }
