"""Run a real Pulumi program under Pulumi's mock engine: the ``pulumi`` engine of the simulator.

``run_program(program, observer, actuator)`` does what one ``pulumi up`` (or ``preview``) does to
a program, minus the Kubernetes provider: it executes the program with the given backend
installed (so every :class:`~pulumi_lws.components.leaderworkerset.LeaderWorkerSet` observes
``observer`` and acts through ``actuator``), and returns what the program declared — the inputs of
every registered ``kubernetes:*`` object (wire format, ints as ints), the stages the LWS components
computed, and the stack outputs. The caller (the simulator) then applies the manifests.

Apply-order data comes from the registrations themselves, not from the planner: each
registration's resolved dependency URNs (what ``depends_on`` became on the wire, recorded by a
:class:`MockMonitor` subclass) become ``EngineResult.dependencies`` between manifest keys, and the
manifests are listed in the order the program constructed them (a stack transformation records it;
the mock engine's RPCs complete in thread-pool order, which is not deterministic).

Resource ``transforms`` (on a resource or any of its ancestors) are run on the inputs as the
engine runs them; the mock monitor alone ignores them.

Each call installs fresh mocks, a fresh root stack and a fresh event loop, so it can be called any
number of times in one process. ``.get()`` reads (registrations with an id) are not manifests.
"""

from __future__ import annotations

import asyncio
import atexit
import inspect
import os
import pathlib
import runpy
import sys
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pulumi
from pulumi.runtime import settings as _settings
from pulumi.runtime.mocks import MockMonitor
from pulumi.runtime.sync_await import _sync_await

from pulumi_lws.backend import use_backend
from pulumi_lws.components.leaderworkerset import on_stage
from pulumi_lws.core.contract.ports import Actuator, Observer
from pulumi_lws.core.contract.stage import Stage
from pulumi_lws.core.k8s.model import ints_back

Program = str | os.PathLike[str] | Callable[[], Any]
#: A stand-in provider: the output properties of one registration, or None to echo its inputs
#: (a test makes a computed output unknown in preview by leaving it out).
ResourceOutputs = Callable[[pulumi.runtime.MockResourceArgs], dict[str, Any] | None]


Key = tuple[str, str, str]  # kind, namespace, name (sim.apply.Key)


@dataclass
class EngineResult:
    """What one program run declared."""

    manifests: list[dict[str, Any]] = field(default_factory=list)
    #: manifest key -> keys of the manifests its registration depends on (``depends_on``)
    dependencies: dict[Key, tuple[Key, ...]] = field(default_factory=dict)
    stages: list[Stage] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    #: component name -> stage, for programs with several LeaderWorkerSets
    stages_by_component: dict[str, Stage] = field(default_factory=dict)
    #: URN -> what the program sent for that resource (every registration, components too)
    registrations: dict[str, Registration] = field(default_factory=dict)
    #: what the program logged through ``pulumi.log`` (with the URN of the resource it named)
    logs: list[LogEntry] = field(default_factory=list)
    #: the names of the stack outputs that are secrets (``pulumi.Output.secret`` or from secret config)
    secret_outputs: frozenset[str] = frozenset()
    #: (type, name) -> the place of that resource in the program's construction order
    construction_order: dict[tuple[str, str], int] = field(default_factory=dict)


@dataclass(frozen=True)
class LogEntry:
    """One ``pulumi.log`` call: severity ``debug|info|warning|error``, the URN of the resource it
    was logged on ("" for the stack), the message."""

    severity: str
    urn: str
    message: str


class _CapturingEngine:
    """The engine service's ``Log`` as the Pulumi CLI receives it (the mock engine only forwards the
    message text to Python's ``logging`` and drops the resource, so diagnostics lose their place)."""

    _SEVERITIES: ClassVar[dict[int, str]] = {0: "debug", 1: "info", 2: "warning", 3: "error"}

    def __init__(self, into: list[LogEntry]) -> None:
        self.into = into

    def Log(self, request) -> None:
        self.into.append(LogEntry(self._SEVERITIES.get(request.severity, "info"), request.urn, request.message))


@dataclass(frozen=True)
class Registration:
    """One RegisterResource request as the engine received it (what ``pulumi up`` would act on)."""

    type: str
    name: str
    parent: str
    dependencies: tuple[str, ...]
    #: input property paths (``spec.template.spec.containers[0].env[0].value``) sent as secrets
    secret_paths: tuple[str, ...]
    aliases: tuple[Any, ...]  # the request's alias specs (name/type/project/stack/parentUrn/noParent)
    protect: bool
    retain_on_delete: bool
    provider: str
    #: names of the resource hooks bound before delete
    before_delete_hooks: tuple[str, ...]
    #: a custom resource (managed by a provider), not a component
    custom: bool = False
    #: the inputs as sent, JSON-shaped (secrets keep Pulumi's secret signature, unknowns its sentinel)
    inputs: Any = None


class _ManifestMocks(pulumi.runtime.Mocks):
    """Echo inputs back as outputs; keep managed ``kubernetes:*`` objects (not provider resources)."""

    def __init__(self, resource_outputs: ResourceOutputs | None = None) -> None:
        self.manifests: dict[tuple[str, str], dict[str, Any]] = {}  # (type, logical name) -> manifest
        self.resource_outputs = resource_outputs

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        outputs = self.resource_outputs(args) if self.resource_outputs is not None else None
        if (
            args.custom
            and args.typ.startswith("kubernetes:")
            and not args.resource_id
            and not args.typ.startswith("pulumi:providers:")
        ):
            manifest = _wire(args)
            if not (manifest.get("metadata") or {}).get("name"):  # auto-named: the provider's name (or the logical one)
                given = ((outputs or {}).get("metadata") or {}).get("name")
                manifest["metadata"] = {**(manifest.get("metadata") or {}), "name": given or args.name}
            self.manifests[(args.typ, args.name)] = manifest
        return f"{args.name}-id", dict(args.inputs) if outputs is None else outputs

    def call(self, args: pulumi.runtime.MockCallArgs):
        return {}


class _RecordingMonitor(MockMonitor):
    """The mock monitor, recording every registration's resolved dependency URNs."""

    def __init__(self, mocks: pulumi.runtime.Mocks) -> None:
        super().__init__(mocks)
        self.registrations: dict[str, tuple[tuple[str, str], tuple[str, ...]]] = {}  # urn -> ((type, name), deps)
        self.requests: dict[str, Registration] = {}
        self.transforms: dict[str, tuple[list[Any], str]] = {}  # urn -> (its own transforms, parent urn)

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        """URNs as the engine builds them: the parent's whole qualified type chain, the root Stack
        left out (the mock monitor keeps only the parent's last type and prefixes the Stack's), so
        parent chains and alias URNs read as in ``pulumi preview``."""
        if parent:
            parent_type = parent.split("::")[2]
            if parent_type != "pulumi:pulumi:Stack":
                type_ = f"{parent_type}${type_}"
        return "urn:pulumi:" + "::".join([pulumi.get_stack(), pulumi.get_project(), type_, name])

    def _run_transforms(self, request) -> None:
        """What the engine does and the mock monitor does not: run ``transforms`` (the resource's
        own, then each ancestor's, nearest first, then the stack's) on the inputs before the
        provider sees them. Options a transform returns are ignored (only props are emulated)."""
        from pulumi.runtime import rpc
        from pulumi.runtime.mocks import _resolve_callbacks

        urn = self.make_urn(request.parent, request.type, request.name)
        self.transforms[urn] = (_resolve_callbacks(request.transforms), request.parent)
        chain, parent = list(self.transforms[urn][0]), request.parent
        while parent in self.transforms:
            chain += self.transforms[parent][0]
            parent = self.transforms[parent][1]
        chain += self._stack_transforms
        if not chain or request.type == "pulumi:pulumi:Stack":
            return
        props = rpc.deserialize_properties(request.object)
        for transform in chain:
            result = transform(
                pulumi.ResourceTransformArgs(
                    request.custom, request.type, request.name, props, pulumi.ResourceOptions()
                )
            )
            if inspect.isawaitable(result):
                result = _sync_await(result)
            if result is not None:
                props = result.props
        request.object.CopyFrom(_sync_await(rpc.serialize_properties(props, {})))

    def RegisterResource(self, request):
        _remember_thread_loop()
        self._run_transforms(request)
        response = super().RegisterResource(request)
        _remember_thread_loop()  # made by the mock monitor when the thread had none
        self.registrations[response.urn] = ((request.type, request.name), tuple(request.dependencies))
        self.requests[response.urn] = _registration(request)
        return response


_SECRET_SIG = ("4dabf18193072939515e22adb298388d", "1b47061264138c4ac30d75fd1eb44270")


def _secret_paths(value: Any, path: str = "") -> list[str]:
    if isinstance(value, dict):
        if value.get(_SECRET_SIG[0]) == _SECRET_SIG[1]:
            return [path]
        return [p for k, v in value.items() for p in _secret_paths(v, f"{path}.{k}" if path else k)]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _secret_paths(v, f"{path}[{i}]")]
    return []


def _registration(request: Any) -> Registration:
    from google.protobuf import json_format

    return Registration(
        type=request.type,
        name=request.name,
        parent=request.parent,
        dependencies=tuple(request.dependencies),
        secret_paths=tuple(_secret_paths(json_format.MessageToDict(request.object))),
        aliases=tuple(
            json_format.MessageToDict(a.spec) if a.HasField("spec") else {"urn": a.urn} for a in request.aliases
        ),
        protect=bool(request.protect),
        retain_on_delete=bool(request.retainOnDelete),
        provider=request.provider,
        before_delete_hooks=tuple(request.hooks.before_delete) if request.HasField("hooks") else (),
        custom=bool(request.custom),
        inputs=json_format.MessageToDict(request.object),
    )


class _ConstructionOrder:
    """A stack transformation that records the order resources are constructed in (synchronous,
    in the program's own order) and changes nothing."""

    def __init__(self) -> None:
        self.order: dict[tuple[str, str], int] = {}

    def __call__(self, args: pulumi.ResourceTransformationArgs) -> None:
        self.order.setdefault((args.type_, args.name), len(self.order))
        return None


def _declared(
    mocks: _ManifestMocks, monitor: _RecordingMonitor, order: _ConstructionOrder
) -> tuple[list[dict[str, Any]], dict[Key, tuple[Key, ...]]]:
    """Manifests in construction order and their dependencies as manifest keys (dependencies on
    anything that is not a manifest, e.g. a component, are dropped)."""
    names = sorted(mocks.manifests, key=lambda n: order.order.get(n, len(order.order)))
    key = lambda m: (m["kind"], (m.get("metadata") or {}).get("namespace") or "default", m["metadata"]["name"])  # noqa: E731
    by_urn = {urn: mocks.manifests[name] for urn, (name, _) in monitor.registrations.items() if name in mocks.manifests}
    position = {key(mocks.manifests[n]): i for i, n in enumerate(names)}
    dependencies: dict[Key, tuple[Key, ...]] = {}
    for urn, manifest in by_urn.items():
        deps = {key(by_urn[d]) for d in monitor.registrations[urn][1] if d in by_urn}
        if deps:
            dependencies[key(manifest)] = tuple(sorted(deps, key=position.__getitem__))
    return [mocks.manifests[n] for n in names], dict(sorted(dependencies.items(), key=lambda kv: position[kv[0]]))


def unwrap_secrets(value: Any) -> Any:
    """Secret input values as the cluster receives them: plain (the mock monitor hands them over
    wrapped in Pulumi's secret signature; which paths were secret is in ``Registration``)."""
    if isinstance(value, dict):
        if value.get(_SECRET_SIG[0]) == _SECRET_SIG[1]:
            return unwrap_secrets(value.get("value"))
        return {k: unwrap_secrets(v) for k, v in value.items()}
    if isinstance(value, list):
        return [unwrap_secrets(v) for v in value]
    return value


def _wire(args: pulumi.runtime.MockResourceArgs) -> dict[str, Any]:
    """Inputs as a manifest: ints back, ``apiVersion``/``kind`` from the type token when absent."""
    obj = ints_back(unwrap_secrets(dict(args.inputs)))
    _, group_version, kind = args.typ.split(":", 2)
    group, _, version = group_version.rpartition("/")
    obj.setdefault("kind", kind)
    obj.setdefault("apiVersion", version if group in ("", "core") else f"{group}/{version}")
    return obj


def _program_callable(program: Program) -> Callable[[], Any]:
    if callable(program):
        return program
    path = pathlib.Path(program).resolve()  # the program runs from its own directory
    if path.is_dir():
        path = path / "__main__.py"
    if not path.exists():
        raise FileNotFoundError(f"Pulumi program {path} does not exist")

    def run_file() -> None:
        old_cwd, old_path = os.getcwd(), list(sys.path)
        os.chdir(path.parent)  # Pulumi runs a program from its project directory
        sys.path.insert(0, str(path.parent))
        try:
            runpy.run_path(str(path), run_name="__main__")
        finally:
            os.chdir(old_cwd)
            sys.path[:] = old_path

    return run_file


_spare_loop: list[asyncio.AbstractEventLoop] = []
#: loops the mock monitor's worker threads made for themselves (pulumi's ``_ensure_event_loop``);
#: nobody else closes them (:func:`_retire_loop` does)
_thread_loops: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()


def _remember_thread_loop() -> None:
    if threading.current_thread() is threading.main_thread():
        return
    try:
        _thread_loops.add(asyncio.get_event_loop_policy().get_event_loop())
    except RuntimeError:  # this thread has no loop
        pass


def _fresh_loop() -> asyncio.AbstractEventLoop:
    """A new current event loop (an earlier async test may have left none, or a closed one)."""
    while _spare_loop:
        old = _spare_loop.pop()
        if not old.is_running() and not old.is_closed():
            old.close()
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    return loop


def _retire_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Close this run's loop; leave an open spare as the current loop for other code (closed next call).

    First the loops the mock monitor's worker threads made (pulumi's ``_ensure_event_loop``): closing
    this loop shuts its executor down, the threads end and drop their loops unclosed, and a loop
    collected together with its self-pipe socket prints ``Exception ignored in
    BaseEventLoop.__del__ ... Invalid file descriptor: -1`` (in some runs, as the collector orders them)."""
    for worker_loop in list(_thread_loops):
        if not worker_loop.is_running() and not worker_loop.is_closed():
            worker_loop.close()
    _thread_loops.clear()
    if not loop.is_running():
        loop.close()
    spare = asyncio.new_event_loop()
    asyncio.set_event_loop(spare)
    _spare_loop.append(spare)


def close_event_loops() -> None:
    """Close the spare event loop :func:`run_program` leaves current: an open loop collected at
    interpreter shutdown, after its self-pipe socket was finalized, prints ``Exception ignored in
    BaseEventLoop.__del__ ... Invalid file descriptor: -1``. Registered with ``atexit`` (which
    runs before that collection); not for use between runs."""
    while _spare_loop:
        loop = _spare_loop.pop()
        if not loop.is_running() and not loop.is_closed():
            loop.close()
    asyncio.set_event_loop(None)


atexit.register(close_event_loops)


def _drain(loop: asyncio.AbstractEventLoop) -> None:
    """Let the tasks the program left behind finish (``pulumi.log`` on a resource resolves the URN
    in a task nobody awaits; the real runtime waits for them too), then cancel what still waits."""
    for _ in range(3):
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        if not pending:
            return
        loop.run_until_complete(asyncio.wait(pending, timeout=1.0))
    for task in asyncio.all_tasks(loop):
        task.cancel()


def _is_secret(value: Any) -> bool:
    if isinstance(value, pulumi.Output):
        return bool(_sync_await(value.is_secret()))
    return False


def run_program(
    program: Program,
    observer: Observer,
    actuator: Actuator,
    *,
    preview: bool = False,
    stack: str = "sim",
    project: str = "lws",
    resource_outputs: ResourceOutputs | None = None,
    config: Mapping[str, str] | None = None,
    secret_keys: Iterable[str] = (),
) -> EngineResult:
    """Run ``program`` (a ``__main__.py`` path, a project directory or a callable) once.

    ``config`` is the stack configuration as the Pulumi CLI hands it to a program (full keys,
    ``<namespace>:<name>``, values as strings; ``secret_keys`` those that are secrets), read by
    ``pulumi.Config`` as in a real stack; without it the config already set (``set_all_config``)
    is used. Exceptions raised by the program (e.g. a ``SpecError``)
    propagate unchanged.
    """
    func = _program_callable(program)
    loop = _fresh_loop()
    mocks = _ManifestMocks(resource_outputs)
    monitor = _RecordingMonitor(mocks)
    order = _ConstructionOrder()
    _settings.ROOT.set(None)  # a fresh root stack: exports of an earlier run must not leak
    if config is not None:  # else the caller's own config (a test's set_all_config) stays in force
        pulumi.runtime.set_all_config(dict(config), list(secret_keys))
    pulumi.runtime.set_mocks(mocks, project=project, stack=stack, preview=preview, monitor=monitor)
    result = EngineResult()
    _settings.SETTINGS.engine = _CapturingEngine(result.logs)
    pulumi.runtime.register_stack_transformation(order)

    def collect(name: str, stage: Stage) -> None:
        result.stages.append(stage)
        result.stages_by_component[name] = stage

    try:
        with use_backend(observer, actuator), on_stage(collect):
            pulumi.runtime.test(func)()
            root = _settings.get_root_resource()
            exported = dict(getattr(root, "outputs", {}) or {})
            resolved = _sync_await(pulumi.Output.from_input(exported).future()) if exported else {}
            result.secret_outputs = frozenset(k for k, v in exported.items() if _is_secret(v))
            _drain(loop)
    finally:
        _settings.ROOT.set(None)
        if config is not None:
            pulumi.runtime.set_all_config({}, [])
        _retire_loop(loop)
    result.manifests, result.dependencies = _declared(mocks, monitor, order)
    result.registrations = dict(monitor.requests)
    result.construction_order = dict(order.order)
    result.outputs = ints_back(dict(resolved or {}))
    return result
