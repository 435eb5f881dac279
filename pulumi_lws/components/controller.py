"""Controller mode, and the Events of operator-free mode: what a workload component does beyond
:class:`~pulumi_lws.components.base.WorkloadComponent` (docs/modes.md).

``mode: "controller"`` (default ``"operator-free"``): after the same validation, the component
registers exactly one upstream custom resource — the user's manifest with the argument fields
applied, unchanged in meaning — instead of expanding it, and lets the upstream controller do the
rollout. The planner still runs against the observed cluster (the controller's native objects
carry the same labels), so preview and the ``stage``/``remaining_stages`` outputs show the stages
the controller will take; no action is executed (the controller acts). ``pulumi up`` waits
through pulumi-kubernetes' own await: ``pulumi.com/waitFor: condition=<ready condition>`` on the
CR, unless the user set ``pulumi.com/skipAwait: "true"`` or a ``pulumi.com/waitFor`` of their own.

A cluster that does not serve the CRD fails before anything is registered, with one error naming
the controller to install — where the backend can tell (the live backend GETs the CRD, the
simulator looks it up; a test fake that cannot tell skips the check and pulumi-kubernetes reports
the unknown kind at ``up``).

Invariants: operator-free mode is unchanged by this module except for Events, which are recorded
on update only (never in preview), through the actuator when it implements
:class:`~pulumi_lws.core.features.events.EventSink`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pulumi

from pulumi_lws.core.contract.driver import Cycle, cycle
from pulumi_lws.core.contract.errors import FieldError, SpecError
from pulumi_lws.core.contract.ports import CLUSTER_ERROR, ClusterError
from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.core.contract.workload import Reconciled, Workload
from pulumi_lws.core.features.events import WorkloadRef, report_events

if TYPE_CHECKING:  # base imports nothing of this module; the import is for the component's attributes
    from pulumi_lws.components.base import WorkloadComponent

OPERATOR_FREE, CONTROLLER = "operator-free", "controller"
MODES = (OPERATOR_FREE, CONTROLLER)
WAIT_FOR = "pulumi.com/waitFor"
SKIP_AWAIT = "pulumi.com/skipAwait"


class RequiredApiMissingError(RuntimeError, pulumi.RunError):
    """Operator-free on a cluster that does not serve an API the expansion needs (nothing was
    registered); the message names what needs it, the Kubernetes version and the fallback."""


class ControllerNotInstalledError(RuntimeError, pulumi.RunError):
    """Controller mode on a cluster that does not serve the API's CRD (nothing was registered).
    A ``pulumi.RunError`` too: the language host prints its message alone, no traceback."""


#: control arguments only operator-free mode honours (controller mode refuses them set true)
OPERATOR_FREE_CONTROL = ("check_capacity",)


def split_mode(args: Any, workload: Workload) -> tuple[str, Any]:
    """(mode, args without ``mode``); ``SpecError`` naming ``mode`` for an unknown value, and, in
    controller mode, for a pulumi-lws-only argument (the controller would silently ignore it:
    ``workload.arguments.operator_free_only``)."""
    kind = workload.kind
    if not isinstance(args, Mapping) or "mode" not in args or "spec" in args:
        return OPERATOR_FREE, args
    rest = {k: v for k, v in args.items() if k != "mode"}
    mode = args["mode"] if args["mode"] is not None else OPERATOR_FREE
    if mode not in MODES:
        supported = ", ".join(f'"{m}"' for m in MODES)
        raise SpecError(kind, None, [FieldError("mode", f"Unsupported value: supported values: {supported}", mode)])
    if mode == CONTROLLER:
        given = [
            k
            for k in workload.arguments.operator_free_only
            if rest.get(k) is not None or rest.get(_camel(k)) is not None
        ]
        # the capacity check holds pulumi-lws's own stages; the controller creates its surge regardless
        given += [k for k in OPERATOR_FREE_CONTROL if rest.get(k) or rest.get(_camel(k))]
        if given:
            raise SpecError(
                kind,
                None,
                [
                    FieldError(
                        _camel(k),
                        "is a pulumi-lws (operator-free) option the upstream "
                        'controller does not implement; remove it or use mode "operator-free"',
                    )
                    for k in given
                ],
            )
    return mode, rest


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(p.title() for p in rest)


def custom_resource(workload: Workload, spec: Any, manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The one CR controller mode registers: ``manifest`` (validated) with its identity from
    ``spec`` and the await annotation (module docstring); ``status`` is never declared."""
    namespace, name = workload.identity(spec)
    doc = copy.deepcopy(dict(manifest))
    doc.pop("status", None)
    metadata = dict(doc.get("metadata") or {})
    metadata.update(name=name, namespace=namespace)
    annotations = dict(metadata.get("annotations") or {})
    if str(annotations.get(SKIP_AWAIT, "")).lower() != "true" and WAIT_FOR not in annotations:
        annotations[WAIT_FOR] = f"condition={workload.upstream.ready_condition}"
    metadata["annotations"] = annotations
    for key in [
        k for k in metadata if k in ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields")
    ]:
        metadata.pop(key)
    return {
        "apiVersion": workload.api_version,
        "kind": workload.kind,
        "metadata": metadata,
        "spec": doc.get("spec") or {},
    }


def missing_controller_message(workload: Workload, namespace: str, name: str) -> str:
    up = workload.upstream
    return (
        f'{workload.kind} {namespace}/{name}: mode "controller" needs {up.controller}, but the cluster does not '
        f"serve {workload.api_version} {workload.kind} (CustomResourceDefinition {up.crd_name} not found). "
        f'Install the controller, or use mode "operator-free" (the default), which needs no controller.'
    )


def check_controller(workload: Workload, spec: Any, observer: Any) -> None:
    """Raise :class:`ControllerNotInstalledError` when ``observer`` can tell the CRD is not served."""
    serves = getattr(observer, "serves_crd", None)
    if serves is None:
        return
    if serves(workload.upstream.crd_name) is False:
        namespace, name = workload.identity(spec)
        raise ControllerNotInstalledError(missing_controller_message(workload, namespace, name))


def controller_backend(gang_provider: str = "kubernetes") -> Any:
    from pulumi_lws.backend import current_backend
    from pulumi_lws.components.base import kubernetes_provider_settings

    return current_backend(**kubernetes_provider_settings(), gang_provider=gang_provider)


def register_custom_resource(
    component: WorkloadComponent,
    name: str,
    workload: Workload,
    spec: Any,
    options: Any,
    manifest: Mapping[str, Any],
    backend: Any,
) -> tuple[Snapshot, Reconciled, list[str]]:
    """Controller mode's reconcile: the one :func:`~pulumi_lws.core.contract.driver.cycle` with an
    apply port that registers the CR only and no action port (the controller acts, not pulumi-lws);
    the stage table of what the controller will do is logged in preview and up alike."""
    from pulumi_lws.components import outputs as _outputs
    from pulumi_lws.components.base import _stage_listeners
    from pulumi_lws.components.registration import register_manifest

    inputs = component._inputs  # what the base's reconcile also records

    def register(observed: Cycle[list[Any]]) -> list[Any]:
        component.assumptions = inputs.notes(creating=len(observed.snapshot) == 0)
        cr = custom_resource(workload, spec, manifest)
        component.child_resources = [register_manifest(name, cr, pulumi.ResourceOptions(parent=component))]
        return component.child_resources

    try:  # nothing is planned from a partial read
        # no capacity check: the controller, not pulumi-lws, decides when to create pods
        done = cycle(workload, spec, options, backend.observer, apply=register, check_capacity=False)
    except ClusterError as exc:
        raise pulumi.RunError(f"{name}: {CLUSTER_ERROR}{exc}") from exc
    stage = done.stage
    pulumi.log.info(
        f"controller mode: the {workload.kind} controller rolls out; predicted: {stage.summary()}\n"
        f"{_outputs.stage_table(stage)}\nmodel: {workload.upstream.model}",
        resource=component,
    )
    for listener in list(_stage_listeners):
        listener(name, stage)
    return done.snapshot, done.reconciled, []


def record_events(component: pulumi.ComponentResource, workload: Workload, spec: Any, stage: Any) -> list[str]:
    """Operator-free mode, on update: record this reconcile's Events (:mod:`pulumi_lws.core.features.events`)
    through the component's actuator; in preview nothing is written."""
    if pulumi.runtime.is_dry_run():
        return []
    namespace, name = workload.identity(spec)
    ref = WorkloadRef(workload.kind, workload.api_version, namespace, name)
    backend = getattr(component, "_backend", None)
    reasons = workload.upstream.event_reasons
    try:
        lines = report_events(getattr(backend, "actuator", None), ref, stage, reasons)
    except ClusterError as exc:  # Events inform; the stage's actions already ran, so `up` must not fail here
        pulumi.log.warn(f"Events not recorded for {workload.kind} {namespace}/{name}: {exc}", resource=component)
        return []
    for line in lines:
        pulumi.log.debug(line, resource=component)
    return lines


def missing_api_message(workload: Workload, spec: Any, missing: Sequence[tuple[str, str, str]]) -> str:
    """One line: every API of ``missing`` (``(apiVersion, kind, why)``) the cluster does not serve,
    the ones a field asks for together, each with its ``why`` (the field, what to install or change)."""
    namespace, name = workload.identity(spec)
    by_why: dict[str, list[tuple[str, str]]] = {}
    for api_version, kind, why in missing:
        by_why.setdefault(why, []).append((api_version, kind))
    parts = []
    for why, apis in by_why.items():
        versions = dict.fromkeys(v for v, _ in apis)
        served = "; ".join(f"{v} {' and '.join(k for v2, k in apis if v2 == v)}" for v in versions)
        parts.append(f"the cluster does not serve {served}. {why}.")
    return f"{workload.kind} {namespace}/{name}: " + " Also: ".join(parts)


def check_required_apis(workload: Workload, spec: Any, gang_provider: str = "kubernetes") -> Any:
    """Operator-free: raise :class:`RequiredApiMissingError` (before anything is registered) naming
    every API ``spec``'s expansion needs (``Workload.required_apis``: per-pod values
    ``admission-policy``'s MutatingAdmissionPolicy, the gang objects' PodGroup/Workload APIs) that
    API discovery says the cluster does not serve. Returns the backend it asked, for the reconcile
    to observe with (its discovery answers are kept: one discovery per reconcile), or None: no
    requirement (no request at all) or no cluster (the reconcile reports that). An observer that
    cannot tell (None, 403) lets a requirement pass."""
    required = workload.required_apis(spec, gang_provider)
    if not required:
        return None
    from pulumi_lws.backend import NoClusterError

    try:
        try:
            backend = controller_backend(gang_provider)
        except NoClusterError:
            return None  # the reconcile reports it, as without a requirement
        serves = getattr(backend.observer, "serves_api", None)
        if serves is None:
            return backend
        missing = [
            (api_version, kind, why) for api_version, kind, why in required if serves(api_version, kind) is False
        ]
        if missing:
            raise RequiredApiMissingError(missing_api_message(workload, spec, missing))
    except ClusterError as exc:
        raise pulumi.RunError(f"{workload.identity(spec)[1]}: {CLUSTER_ERROR}{exc}") from exc
    return backend


def checked_backend(mode: str, workload: Workload, spec: Any, *, gang_provider: str = "kubernetes") -> Any:
    """Controller mode: the backend, once it did not say the CRD is missing (raises
    :class:`ControllerNotInstalledError` before anything is registered). Operator-free: once the
    cluster serves what the expansion needs (:func:`check_required_apis`), the backend that check
    asked (the reconcile reuses it), or None."""
    if mode != CONTROLLER:
        return check_required_apis(workload, spec, gang_provider)
    try:  # no kubeconfig, an unreachable or failing server: one line, no traceback
        backend = controller_backend(gang_provider)
        check_controller(workload, spec, backend.observer)
    except ClusterError as exc:
        raise pulumi.RunError(f"{workload.identity(spec)[1]}: {CLUSTER_ERROR}{exc}") from exc
    return backend


def reconcile_in_mode(
    component: Any,
    mode: str,
    backend: Any,
    name: str,
    workload: Workload,
    spec: Any,
    options: Any,
    manifest: Mapping[str, Any],
    *,
    gang_provider: str = "kubernetes",
) -> tuple[Any, Any, list[str]]:
    """One ``pulumi up`` in ``mode``: controller -> :func:`register_custom_resource`; operator-free
    -> the component's own reconcile, then this reconcile's Events (:func:`record_events`)."""
    if mode == CONTROLLER:
        return register_custom_resource(component, name, workload, spec, options, manifest, backend)
    snapshot, result, action_lines = component._reconcile(
        name, workload, spec, options, gang_provider=gang_provider, backend=backend
    )
    record_events(component, workload, spec, result.stage)
    return snapshot, result, action_lines
