"""The contract every workload API implements, and the registry the shells dispatch through.

A shell (Pulumi component, simulator engine, CLI, live backend) never branches on an API's kind:
it asks :func:`workload_for` (or :func:`workload_of`) for the API's :class:`Workload` and calls
it. An API plugs in by calling :func:`register` from its own ``workload`` module; the list of
built-in API modules lives in one place (:data:`pulumi_lws.workloads.BUILTIN`).

Invariants:
* ``reconcile`` is pure: the same spec, snapshot and options give the same :class:`Reconciled`;
* every ref in ``Reconciled.dependencies`` names a manifest of ``Reconciled.manifests`` and every
  dependency precedes its dependents there (:func:`pulumi_lws.core.dependencies.check_dependency_order`);
* ``parse`` raises :class:`pulumi_lws.core.errors.SpecError` listing every problem, before
  anything is rendered.

Optional capabilities (an API implements them or not; absent = the shells' generic behaviour,
reached through the helper named after each, never by kind):
* ``observed_target_revision(spec, snapshot) -> str`` (:func:`observed_target`): the revision the
  groups converge to given what the cluster records — on an adopted fleet upstream's key, which
  ``target_revision(spec)`` cannot reproduce. Absent: ``target_revision(spec)``.
* ``predict_trace(old, new, choices) -> Trace``: ``pulumi-lws plan``'s rows from an exact model of
  the API (LeaderWorkerSet's). Absent: the generic prediction (converge OLD, reconcile NEW once,
  then the planner's ``Stage.remaining``; ``cli.plan.generic_trace``).
* ``first_render_header(spec, result) -> str`` / ``steady_render_header(spec, expansion) -> str``:
  the API's own words above ``pulumi-lws render``'s objects. Absent: the generic line
  (``cli.render_headers``).
* ``exclusive_topology(spec) -> str | None``: the node label whose domains each group takes
  exclusively; the simulator then assumes one domain per group when no pool is given
  (``sim.expansion.ASSUMED_POOLS``). Absent: one unbounded node.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol

from pulumi_lws.core.dependencies import Ref
from pulumi_lws.core.ports import Scope
from pulumi_lws.core.snapshot import Snapshot
from pulumi_lws.core.stage import Stage
from pulumi_lws.core.stagetable import Lanes
from pulumi_lws.core.trace import GroupsView


@dataclass(frozen=True)
class Reconciled:
    """One reconcile's result: the stage, the objects to declare and their apply order.

    ``dependencies``: ``{(kind, name): ((kind, name), ...)}`` — each manifest is applied only
    after every manifest it lists was applied successfully in the same run (Pulumi
    ``dependsOn``; the simulator's partial apply keeps the applied set closed under it). A
    manifest without an entry has no dependency. ``catalog``: the API's revision catalog (what
    ``pulumi-lws plan`` and traces read), opaque to the shells.
    """

    stage: Stage
    manifests: tuple[Mapping[str, Any], ...]
    catalog: Any = field(default=None, repr=False)
    dependencies: Mapping[Ref, tuple[Ref, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Budgets:
    """What the simulator's invariants check for one role (``""`` for single-role APIs):
    live groups <= replicas + max_surge and available groups >= replicas - max_unavailable.
    ``partition``: the groups (ordinals) below it stay on their revision as the user asked (0:
    none; an API without the concept leaves it 0), so a rollout held there is done."""

    replicas: int
    max_surge: int
    max_unavailable: int
    partition: int = 0


@dataclass(frozen=True)
class UpstreamController:
    """The upstream controller of an API: what controller mode, adoption and Events need.

    ``plural``: the CRD's plural (the CRD object is ``<plural>.<group>``). ``controller``: what to
    install, for the "missing CRD" error. ``ready_condition``: the CR condition that is True once a
    rollout is done (the ``pulumi.com/waitFor`` of controller mode). ``model``: how exactly the
    project's planner predicts the controller (``"exact"`` or a sentence on where it approximates;
    printed by ``plan --mode controller``). ``event_reasons``: ``Action.verb`` -> the upstream
    Event reason of that action, where upstream has one (:mod:`pulumi_lws.core.events`).
    ``owner_kinds``: kinds whose ownerReferences on adopted objects are the upstream controller's.
    """

    group: str
    plural: str
    controller: str
    ready_condition: str = "Available"
    model: str = "exact"
    event_reasons: Mapping[str, str] = field(default_factory=dict)
    owner_kinds: tuple[str, ...] = ()

    @property
    def crd_name(self) -> str:
        return f"{self.plural}.{self.group}"


class Workload(Protocol):
    """One upstream API (LeaderWorkerSet, ModelServing, DisaggregatedSet) as the shells see it."""

    kind: str
    api_version: str
    #: the upstream controller of the API (controller mode, adoption, Events)
    upstream: UpstreamController

    def parse(self, manifest: Mapping[str, Any], *, namespace: str | None = None, validate: bool = True) -> Any:
        """The typed spec of an upstream manifest, defaults applied; raises ``SpecError``."""
        ...

    def validate_update(self, spec: Any, old: Any) -> None:
        """Raise ``SpecError`` when ``old`` -> ``spec`` breaks an update rule (immutable fields)."""
        ...

    def identity(self, spec: Any) -> tuple[str, str]:
        """``(namespace, name)`` of the workload."""
        ...

    def options(self, **choices: Any) -> Any:
        """Reconcile options from the shells' choices (``update_order``, ``gang_provider``, ...);
        unknown or unset choices are ignored."""
        ...

    def scope(self, spec: Any, *, nodes: bool | None = None) -> Scope:
        """What one reconcile of ``spec`` reads. ``nodes=None``: as the spec needs."""
        ...

    def reconcile(self, spec: Any, snapshot: Snapshot, options: Any = None) -> Reconciled:
        """Plan one safe stage for ``spec`` against ``snapshot`` and render its objects."""
        ...

    def budgets(self, spec: Any) -> Mapping[str, Budgets]:
        """Per-role rollout budgets (single-role APIs: one entry keyed ``""``)."""
        ...

    def status(self, spec: Any, snapshot: Snapshot, stage: Stage) -> dict[str, Any]:
        """The upstream ``status`` of the workload as the cluster shows it (counts, revisions,
        conditions), published as a component output."""
        ...

    def target_revision(self, spec: Any) -> str:
        """The revision key every group converges to."""
        ...

    def stage_lanes(self, spec: Any) -> Lanes:
        """How a stage table draws a rollout of ``spec`` (:class:`pulumi_lws.core.stagetable.Lanes`):
        one column per group, or one ``old|new`` column per role (then ``trace_view`` and the
        planner's stages carry ``lanes``). Every table of the API (plan, simulate, the component's
        preview log, status, markdown) is drawn with it."""
        ...

    def trace_view(self, spec: Any, snapshot: Snapshot) -> GroupsView:
        """The groups of ``snapshot`` as a trace row shows them — an independent reading of the
        cluster (not the planner's), on which the simulator checks its invariants."""
        ...


def observed_target(workload: Workload, spec: Any, snapshot: Snapshot) -> str:
    """The revision ``spec`` converges to on ``snapshot``: the API's ``observed_target_revision``
    when it has one (adoption keeps upstream's key), else ``target_revision(spec)``."""
    observed = getattr(workload, "observed_target_revision", None)
    return observed(spec, snapshot) if observed is not None else workload.target_revision(spec)


_REGISTRY: dict[str, Workload] = {}


def register(workload: Workload) -> Workload:
    """Make ``workload`` known to every shell under its ``kind`` (idempotent for the same object)."""
    existing = _REGISTRY.get(workload.kind)
    if existing is not None and existing is not workload:
        raise ValueError(f"a workload for kind {workload.kind!r} is already registered")
    _REGISTRY[workload.kind] = workload
    return workload


def registered() -> dict[str, Workload]:
    """Every registered workload by kind (a copy)."""
    return dict(_REGISTRY)


def workload_for(kind: str) -> Workload:
    """The registered workload of ``kind``; ``KeyError`` naming the known kinds otherwise."""
    try:
        return _REGISTRY[kind]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        raise KeyError(f"no workload API for kind {kind!r} (known: {known})") from None


def workload_of(manifest: Mapping[str, Any]) -> Workload | None:
    """The workload a manifest document is for (by ``kind``), or None when this project does not
    model it (a Service, an HPA, ...: shells pass those through). A modelled kind with a wrong
    ``apiVersion`` is the API's to reject (``parse`` names the field), not a pass-through."""
    if not isinstance(manifest, Mapping):
        return None
    return _REGISTRY.get(str(manifest.get("kind")))
