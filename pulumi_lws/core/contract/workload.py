"""The contract every workload API implements, and the registry the shells dispatch through.

A shell (Pulumi component, simulator engine, CLI, live backend) never branches on an API's kind:
it asks :func:`workload_for` (or :func:`workload_of`) for the API's :class:`Workload` and calls
it. An API plugs in by calling :func:`register` from its own ``workload`` module; the list of
built-in API modules lives in one place (:data:`pulumi_lws.workloads.BUILTIN`).

Invariants:
* ``reconcile`` is pure: the same spec, snapshot and options give the same :class:`Reconciled`;
* every ref in ``Reconciled.dependencies`` names a manifest of ``Reconciled.manifests`` and every
  dependency precedes its dependents there (:func:`pulumi_lws.core.contract.dependencies.check_dependency_order`);
* ``parse`` raises :class:`pulumi_lws.core.contract.errors.SpecError` listing every problem, before
  anything is rendered.

Facts (:data:`FACTS`, :mod:`pulumi_lws.core.contract.facts`): every API states them as class attributes —
``kind``, ``api_version``, ``upstream``, ``words`` (help and headers), ``arguments`` (the component
arguments: manifest paths, options and their validators, operator-free-only options), ``gang``
(fixed or choosable gang provider), ``rbac`` (actions, rendered kinds with API versions,
upstream-owned kinds), ``observes`` (every kind its scopes may list, with API versions).
:func:`register` refuses a workload with a fact missing or inconsistent, or an abstract method not
implemented (:class:`IncompleteWorkload`): a forgotten fact fails at import, not in a command.

Optional capabilities are explicit members of :class:`Workload` with a typed default (never a
name looked up at run time):

* ``observed_target_revision(spec, snapshot) -> str`` (:func:`observed_target`): the revision the
  groups converge to given what the cluster records — on an adopted fleet upstream's key, which
  ``target_revision(spec)`` cannot reproduce. Default: ``target_revision(spec)``.
* ``predict_trace(old, new, choices) -> Trace``: ``pulumi-lws plan``'s rows from an exact model of
  the API (LeaderWorkerSet's). Default None: the generic prediction (converge OLD, reconcile NEW
  once, then the planner's ``Stage.remaining``; ``cli.plan.generic_trace``).
* ``first_render_header(spec, result) -> str`` / ``steady_render_header(spec, expansion) -> str``:
  the API's own words above ``pulumi-lws render``'s objects. Default None: the generic line
  (``cli.render_headers``).
* ``placement(spec) -> Placement | None`` (:class:`pulumi_lws.core.contract.simulation.Placement`): how the
  groups take nodes (exclusive topology key, groups, a group's pods); the simulator assumes a node
  pool from it when none is given (``sim.expansion``). Default None: one unbounded node.
* ``group_labels`` (:class:`pulumi_lws.core.contract.simulation.GroupLabels`): the labels naming a pod's
  workload and group, so the simulated kubelet's timing overrides by ``group:`` / ``lws:`` find
  its pods. Default None: such overrides match none of its pods.
* ``case_words``: planner case id -> plain words (:func:`describe_case`). Default: none.
* ``held_stage(spec, snapshot, stage) -> Stage``: a held stage (paused, or the capacity check's
  ``insufficient-capacity``) as what the hold registers — its groups and lanes as observed, not
  the planned stage's. Default: ``stage`` unchanged (an API whose stage groups are the observed
  ones, as LeaderWorkerSet's).
* ``release_retained(snapshot, reason)``: the actions releasing the pods retained with the
  project's finalizer (the component's destroy hook). Default: every pod carrying it.
* ``required_apis(spec, gang_provider)``: the optional APIs the expansion needs (the component's
  preflight asks discovery for them before anything registers). Default: none.
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pulumi_lws.core.contract.dependencies import Ref
from pulumi_lws.core.contract.facts import ArgumentSchema, GangChoice, KindRef, RbacFacts, Words, check_facts
from pulumi_lws.core.contract.ports import Scope
from pulumi_lws.core.contract.simulation import GroupLabels, Placement
from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.core.contract.stage import Action, Stage
from pulumi_lws.core.contract.stagetable import Lanes
from pulumi_lws.core.contract.trace import GroupsView, Trace
from pulumi_lws.core.features.retention import release_actions


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
    #: the manifest path of the role's ``maxSurge``/``maxUnavailable`` (their parent object), which
    #: remedies name (the capacity check, :mod:`pulumi_lws.core.features.fit`); "" = unnamed.
    #: Descriptive: not part of the budgets' equality
    path: str = field(default="", compare=False)


@dataclass(frozen=True)
class UpstreamController:
    """The upstream controller of an API: what controller mode, adoption and Events need.

    ``plural``: the CRD's plural (the CRD object is ``<plural>.<group>``). ``controller``: what to
    install, for the "missing CRD" error. ``ready_condition``: the CR condition that is True once a
    rollout is done (the ``pulumi.com/waitFor`` of controller mode). ``model``: how exactly the
    project's planner predicts the controller (``"exact"`` or a sentence on where it approximates;
    printed by ``plan --mode controller``). ``event_reasons``: ``Action.verb`` -> the upstream
    Event reason of that action, where upstream has one (:mod:`pulumi_lws.core.features.events`).
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


class Workload(ABC):
    """One upstream API (LeaderWorkerSet, ModelServing, DisaggregatedSet, ...) as the shells see it.

    An API subclasses this, sets every fact of :data:`FACTS` as a class attribute and implements
    every abstract method; :func:`register` refuses it otherwise. Optional capabilities have a
    typed default here (module docstring) and are read as members, never looked up by name."""

    #: facts (class attributes every API sets; :data:`FACTS`)
    kind: str
    api_version: str
    #: the upstream controller of the API (controller mode, adoption, Events)
    upstream: UpstreamController
    #: what help texts and headers call it
    words: Words
    #: the component arguments it takes (the one argument layer: ``components.args.build_spec``)
    arguments: ArgumentSchema
    #: the gang provider of its objects (fixed or a choice)
    gang: GangChoice
    #: actions, rendered kinds and upstream-owned kinds, for least-privilege RBAC
    rbac: RbacFacts
    #: every kind one of its scopes may list, with API versions (a bare scope ``PodGroup`` means
    #: ``gang.podgroup(chosen)``)
    observes: tuple[KindRef, ...]

    # -- optional capabilities: explicit members, typed defaults (None: the shells' generic behaviour)
    #: ``predict_trace(old, new, choices) -> Trace``: ``pulumi-lws plan``'s rows from an exact model
    predict_trace: Callable[[Any, Any, Mapping[str, Any] | None], Trace] | None = None
    #: ``first_render_header(spec, result) -> str``: the line above ``render``'s first-stage objects
    first_render_header: Callable[[Any, Reconciled], str] | None = None
    #: ``steady_render_header(spec, expansion) -> str``: the line above ``render --stage steady``'s objects
    steady_render_header: Callable[[Any, Any], str] | None = None
    #: planner case id -> plain words (``Stage.case`` as a stage table's note shows it)
    case_words: Mapping[str, str] = {}
    #: which labels name a pod's workload and group in the simulated kubelet
    #: (:class:`pulumi_lws.core.contract.simulation.GroupLabels`); None: its pods are not told apart
    group_labels: GroupLabels | None = None
    #: annotations its actions write on an object the reconcile also declares (the component
    #: registers such an object with ``pulumi.com/patchForce``: two field managers own them)
    reconcile_written_annotations: tuple[str, ...] = ()

    @abstractmethod
    def parse(self, manifest: Mapping[str, Any], *, namespace: str | None = None, validate: bool = True) -> Any:
        """The typed spec of an upstream manifest, defaults applied; raises ``SpecError``."""

    @abstractmethod
    def validate_update(self, spec: Any, old: Any) -> None:
        """Raise ``SpecError`` when ``old`` -> ``spec`` breaks an update rule (immutable fields)."""

    @abstractmethod
    def identity(self, spec: Any) -> tuple[str, str]:
        """``(namespace, name)`` of the workload."""

    @abstractmethod
    def options(self, **choices: Any) -> Any:
        """Reconcile options from the shells' choices (``update_order``, ``gang_provider``, ...);
        unknown or unset choices are ignored."""

    @abstractmethod
    def scope(self, spec: Any, *, nodes: bool | None = None) -> Scope:
        """What one reconcile of ``spec`` reads. ``nodes=None``: as the spec needs."""

    @abstractmethod
    def reconcile(self, spec: Any, snapshot: Snapshot, options: Any = None) -> Reconciled:
        """Plan one safe stage for ``spec`` against ``snapshot`` and render its objects."""

    @abstractmethod
    def budgets(self, spec: Any) -> Mapping[str, Budgets]:
        """Per-role rollout budgets (single-role APIs: one entry keyed ``""``)."""

    @abstractmethod
    def status(self, spec: Any, snapshot: Snapshot, stage: Stage) -> dict[str, Any]:
        """The upstream ``status`` of the workload as the cluster shows it (counts, revisions,
        conditions), published as a component output."""

    @abstractmethod
    def target_revision(self, spec: Any) -> str:
        """The revision key every group converges to."""

    @abstractmethod
    def stage_lanes(self, spec: Any) -> Lanes:
        """How a stage table draws a rollout of ``spec`` (:class:`pulumi_lws.core.contract.stagetable.Lanes`):
        one column per group, or one ``old|new`` column per role (then ``trace_view`` and the
        planner's stages carry ``lanes``). Every table of the API (plan, simulate, the component's
        preview log, status, markdown) is drawn with it."""

    @abstractmethod
    def trace_view(self, spec: Any, snapshot: Snapshot) -> GroupsView:
        """The groups of ``snapshot`` as a trace row shows them — an independent reading of the
        cluster (not the planner's), on which the simulator checks its invariants."""

    @abstractmethod
    def covered(self, spec: Any, snapshot: Snapshot | None = None) -> Mapping[Any, Any]:
        """Rollback (:class:`pulumi_lws.core.features.rollback.Revertible`): the revision-covered values of
        ``spec`` by manifest path, in the form ``recorded_revisions`` reads them."""

    @abstractmethod
    def recorded_revisions(self, spec: Any, snapshot: Snapshot) -> Sequence[Any]:
        """Rollback: every revision of the workload the snapshot records."""

    def observed_target_revision(self, spec: Any, snapshot: Snapshot) -> str:
        """The revision the groups converge to given what the cluster records — on an adopted
        fleet upstream's key, which ``target_revision(spec)`` cannot reproduce. Default:
        ``target_revision(spec)``."""
        return self.target_revision(spec)

    def held_stage(self, spec: Any, snapshot: Snapshot, stage: Stage) -> Stage:
        """``stage`` held (paused, or short of capacity: :func:`pulumi_lws.core.features.hold.hold`)
        as what the hold registers: its groups and lanes as ``snapshot`` shows them, so the summary
        and the stage table describe the held state, not the planned stage. ``replicas``,
        ``partition`` and the predicted stages stay the plan the hold keeps. Default: ``stage``
        unchanged (its groups already are the observed ones, as LeaderWorkerSet's)."""
        return stage

    def placement(self, spec: Any) -> Placement | None:
        """How ``spec``'s groups take nodes, so the simulator can assume a node pool when none is
        given (``sim.expansion``; :class:`pulumi_lws.core.contract.simulation.Placement`). Default None: its
        groups need no pool of their own (one unbounded node)."""
        return None

    def release_retained(self, snapshot: Snapshot, reason: str) -> tuple[Action, ...]:
        """The actions releasing every pod of ``snapshot`` retained with the project's finalizer
        (``pulumi destroy``'s delete hook). Default: every pod carrying
        :data:`pulumi_lws.core.features.retention.RETAIN_FINALIZER`."""
        return release_actions(snapshot.list("Pod"), reason)

    def required_apis(self, spec: Any, gang_provider: str | None = None) -> tuple[tuple[str, str, str], ...]:
        """``(apiVersion, kind, why)`` of every API ``spec``'s expansion (with ``gang_provider``,
        None: the API's default) needs the cluster to serve beyond the core ones — the per-pod
        values policy, the gang objects (PodGroups, Workloads) — exactly the optional kinds its
        rendered objects have; live mode refuses to register anything when discovery says one is
        missing, with ``why``: the field that asks for it, and what to install or change. Default ()."""
        return ()

    def mode_notes(self, spec: Any) -> Mapping[str, str]:
        """Choices in force that change what the expansion renders, for ``plan`` and ``render`` to
        state: ``{json key: one line}`` (LeaderWorkerSet: ``perPodValues``). Default {}."""
        return {}

    def podgroup(self, gang_provider: str | None = None) -> KindRef:
        """What a bare ``PodGroup`` of this API's scope means under ``gang_provider``."""
        return self.gang.podgroup(gang_provider)


#: the facts every :class:`Workload` sets (checked by :func:`register`)
FACTS = ("kind", "api_version", "upstream", "words", "arguments", "gang", "rbac", "observes")


def observed_target(workload: Workload, spec: Any, snapshot: Snapshot) -> str:
    """The revision ``spec`` converges to on ``snapshot`` (:meth:`Workload.observed_target_revision`)."""
    return workload.observed_target_revision(spec, snapshot)


def describe_case(case: str | None) -> str:
    """The plain words of a planner case id (``Stage.case``) from the registered APIs'
    ``case_words`` ('' for None; ``planner step <id>`` for an id no API describes)."""
    if not case:
        return ""
    for workload in _REGISTRY.values():
        if case in workload.case_words:
            return workload.case_words[case]
    return f"planner step {case}"


class IncompleteWorkload(TypeError):
    """A workload registered with a fact missing or wrong (raised by :func:`register`)."""


def check_workload(workload: Any) -> list[str]:
    """Every problem that keeps ``workload`` from being registered (empty: none)."""
    if not isinstance(workload, Workload):
        return [f"{type(workload).__name__} does not subclass pulumi_lws.core.contract.workload.Workload"]
    missing = [name for name in FACTS if name not in _declared(type(workload))]
    if missing:
        return [f"missing fact {name!r}" for name in missing]
    problems = check_facts(
        workload.kind,
        api_version=workload.api_version,
        words=workload.words,
        arguments=workload.arguments,
        gang=workload.gang,
        rbac=workload.rbac,
        observes=workload.observes,
    )
    if not isinstance(workload.upstream, UpstreamController):
        problems.append("upstream: an UpstreamController")
    abstract = sorted(getattr(type(workload), "__abstractmethods__", ()))
    problems += [f"abstract method {m!r} not implemented" for m in abstract]
    return problems


def _declared(cls: type) -> set[str]:
    """The attributes set on ``cls`` or a base below :class:`Workload` (not mere annotations)."""
    out: set[str] = set()
    for klass in cls.__mro__:
        if klass is Workload:
            break
        out.update(vars(klass))
    return out


_REGISTRY: dict[str, Workload] = {}


def register(workload: Workload) -> Workload:
    """Make ``workload`` known to every shell under its ``kind`` (idempotent for the same object).
    Raises :class:`IncompleteWorkload` listing every missing or inconsistent fact."""
    problems = check_workload(workload)
    if problems:
        name = getattr(workload, "kind", None) or type(workload).__name__
        raise IncompleteWorkload(f"workload {name!r} cannot be registered: " + "; ".join(problems))
    existing = _REGISTRY.get(workload.kind)
    if existing is not None and existing is not workload:
        raise ValueError(f"a workload for kind {workload.kind!r} is already registered")
    _REGISTRY[workload.kind] = workload
    return workload


@contextlib.contextmanager
def registration(workload: Workload) -> Iterator[Workload]:
    """``workload`` registered for the block only (a plugin or test API; the registry is
    process-wide), then unregistered — unless it was registered before the block."""
    known = _REGISTRY.get(workload.kind) is workload
    register(workload)
    try:
        yield workload
    finally:
        if not known:
            _REGISTRY.pop(workload.kind, None)


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
