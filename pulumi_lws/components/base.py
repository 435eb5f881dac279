"""What every workload component does in ``__init__`` (one ``pulumi up`` = one reconcile).

1. the subclass builds and validates its spec from ``args`` *before* calling
   ``ComponentResource.__init__`` — a :class:`SpecError` then guarantees nothing was registered;
2. :meth:`WorkloadComponent._reconcile` observes the cluster through the installed backend (live
   cluster by default, the simulator or a test fake under :func:`pulumi_lws.backend.use_backend`)
   with the API's :class:`~pulumi_lws.core.ports.Scope`, asks the API's
   :class:`~pulumi_lws.core.workload.Workload` for exactly one safe stage, registers every
   manifest with ``parent=self`` and ``depends_on`` its declared dependencies, and runs the
   stage's actions on update only (in preview they and the stage table are logged);
3. the subclass publishes its outputs with :meth:`WorkloadComponent._publish_outputs`.

Providers passed on the component (``opts=ResourceOptions(providers=[k8s_provider])``) reach
every child through ``parent=self``.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, Mapping, Optional

import pulumi

from pulumi_lws.backend import Backend, current_backend
from pulumi_lws.components import outputs as _outputs
from pulumi_lws.components.registration import register_children
from pulumi_lws.core.snapshot import Snapshot
from pulumi_lws.core.stage import Stage
from pulumi_lws.core.workload import Reconciled, Workload

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


def kubernetes_provider_settings() -> dict[str, Optional[str]]:
    """The cluster the default pulumi-kubernetes provider targets: the stack's ``kubernetes:context``
    and ``kubernetes:kubeconfig`` config (unset: the current kube context), so the component
    observes the same cluster it registers objects in."""
    config = pulumi.Config("kubernetes")
    return {"context": config.get("context"), "kubeconfig": config.get("kubeconfig")}


class WorkloadComponent(pulumi.ComponentResource):
    """Base of the LeaderWorkerSet, ModelServing and DisaggregatedSet components.

    No class-level annotations here: the component provider's schema analyzer reads annotations
    as outputs (``self.child_resources`` is set by :meth:`_reconcile`)."""

    def _reconcile(self, name: str, workload: Workload, spec: Any, options: Any, *,
                   gang_provider: str = "kubernetes") -> tuple[Snapshot, Reconciled, list[str]]:
        """Observe, plan one stage, register its objects and run (or, in preview, list) its actions."""
        self._backend: Backend = current_backend(**kubernetes_provider_settings(), gang_provider=gang_provider)
        snapshot = self._backend.observer.observe(workload.scope(spec))
        result = workload.reconcile(spec, snapshot, options)
        self.child_resources = register_children(name, result.manifests, result.dependencies, self)
        namespace, _ = workload.identity(spec)
        action_lines = self._run_actions(namespace, result.stage)
        for listener in list(_stage_listeners):
            listener(name, result.stage)
        return snapshot, result, action_lines

    def _run_actions(self, namespace: str, stage: Stage) -> list[str]:
        """Execute on update; in preview only log the stage table and what would run."""
        planned = [a.describe() for a in stage.actions]
        if pulumi.runtime.is_dry_run():
            pulumi.log.info(f"{stage.summary()}\n{_outputs.stage_table(stage)}", resource=self)
            for line in planned:
                pulumi.log.info(f"would {line}", resource=self)
            return planned
        pulumi.log.info(stage.summary(), resource=self)
        if not stage.actions:
            return []
        results = self._backend.actuator.execute(namespace, list(stage.actions))
        for line in results:
            pulumi.log.info(line, resource=self)
        return list(results) if results else planned

    def _publish_outputs(self, outputs: Mapping[str, Any]) -> None:
        """Set each output as an attribute and register them all (``register_outputs``)."""
        for key, value in outputs.items():
            setattr(self, key, pulumi.Output.from_input(value))
        self.register_outputs(dict(outputs))


def stage_outputs(stage: Stage, action_lines: list[str]) -> dict[str, Any]:
    """The outputs every workload component publishes about its stage."""
    return {
        "revision": stage.target_revision,
        "stage": _outputs.stage_summary(stage),
        "blocker": _outputs.blocker_text(stage),
        "remaining_stages": _outputs.remaining_stages(stage),
        "actions": action_lines,
    }
