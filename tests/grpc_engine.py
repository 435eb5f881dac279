"""A Pulumi engine for tests: the ResourceMonitor and Engine gRPC services, from the SDK's own
generated stubs (``pulumi.runtime.proto``), on loopback, recording every request.

What ``pulumi preview`` / ``pulumi up`` do with a program's requests, minus the providers:

* ``GetDeploymentInfo`` / ``SupportsFeature``: every feature the current CLI supports (output
  values, secrets, resource references, alias specs, transforms, hooks, ...);
* ``RegisterResource``: the URN the engine builds (``urn:pulumi:<stack>::<project>::<parent's
  qualified type>$<type>::<name>``, the root Stack left out of the type chain); a component gets
  its URN and no state; a custom resource (a ``kubernetes:*`` object) gets its inputs back as its
  outputs (what pulumi-kubernetes' Check/Create return for the objects the components register)
  with ``status`` computed: unknown in a preview, with no id (the id of a resource still to be
  created is unknown), and on update the id ``<namespace>/<name>`` pulumi-kubernetes gives
  namespaced objects;
* ``RegisterResourceOutputs``, ``RegisterResourceHook``, ``RegisterStackTransform``,
  ``RegisterPackage``, ``Invoke``, ``ReadResource``, ``Log``, ``GetRootResource`` /
  ``SetRootResource``, ``SignalAndWaitForShutdown``: answered as the engine does and recorded.

Transforms are recorded, not run (the examples driven through here register none).
Invariants: the server listens on 127.0.0.1 only; every request is kept (a protobuf copy) in
:attr:`TestEngine.requests` in arrival order; the engine never reaches the network.
"""

from __future__ import annotations

import threading
from concurrent import futures
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime.proto import engine_pb2, engine_pb2_grpc, resource_pb2, resource_pb2_grpc

#: the wire sentinels of Pulumi's property encoding (sdk/go/common/resource/sig, rpc.py)
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
SIG_KEY = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
OUTPUT_SIG = "d0e6a833031e9bbcd3f4e8bde6ca49a4"
RESOURCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e"

#: what the current Pulumi CLI's resource monitor answers in GetDeploymentInfo.supportedFeatures
SUPPORTED_FEATURES = tuple(v for k, v in resource_pb2.ResourceMonitorFeature.items())


def to_dict(message: struct_pb2.Struct) -> dict[str, Any]:
    """A ``Struct`` as plain JSON data, signatures kept (``{SIG_KEY: SECRET_SIG, "value": ...}``)."""
    return json_format.MessageToDict(message)


def plain(value: Any) -> Any:
    """Wire data with secrets unwrapped and output values replaced by their value (or UNKNOWN)."""
    if isinstance(value, dict):
        sig = value.get(SIG_KEY)
        if sig == SECRET_SIG:
            return plain(value.get("value"))
        if sig == OUTPUT_SIG:
            return plain(value["value"]) if "value" in value else UNKNOWN
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def secret_paths(value: Any, path: str = "") -> list[str]:
    """Property paths (``metadata.annotations.token``) whose value is sent secret."""
    if isinstance(value, dict):
        if value.get(SIG_KEY) == SECRET_SIG or (value.get(SIG_KEY) == OUTPUT_SIG and value.get("secret")):
            return [path]
        return [p for k, v in value.items() for p in secret_paths(v, f"{path}.{k}" if path else k)]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in secret_paths(v, f"{path}[{i}]")]
    return []


def unknown_paths(value: Any, path: str = "") -> list[str]:
    """Property paths whose value is unknown (the sentinel, or an output value without a value)."""
    if value == UNKNOWN:
        return [path]
    if isinstance(value, dict):
        if value.get(SIG_KEY) == OUTPUT_SIG and "value" not in value:
            return [path]
        if value.get(SIG_KEY) in (SECRET_SIG, OUTPUT_SIG):
            return unknown_paths(value.get("value"), path)
        return [p for k, v in value.items() for p in unknown_paths(v, f"{path}.{k}" if path else k)]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in unknown_paths(v, f"{path}[{i}]")]
    return []


@dataclass(frozen=True)
class Registered:
    """One RegisterResource request as the engine received it."""

    urn: str
    type: str
    name: str
    parent: str
    custom: bool
    remote: bool
    inputs: dict[str, Any]  # the request's object as JSON data (signatures kept)
    dependencies: tuple[str, ...]
    property_dependencies: dict[str, tuple[str, ...]]
    options: dict[str, Any]  # protect, retainOnDelete, provider, aliases, hooks, ... (as sent)

    @property
    def plain_inputs(self) -> dict[str, Any]:
        return plain(self.inputs)


@dataclass
class TestEngine:
    """The monitor + engine server of one deployment (one ``pulumi preview`` or ``pulumi up``).

    ``with TestEngine(project, stack, dry_run=True) as engine:`` serves on ``engine.address``."""

    __test__ = False  # not a pytest class

    project: str = "lws"
    stack: str = "dev"
    dry_run: bool = False
    organization: str = "organization"
    config: dict[str, str] = field(default_factory=dict)
    address: str = ""
    requests: list[tuple[str, Any]] = field(default_factory=list)  # (rpc name, request copy)
    resources: dict[str, Registered] = field(default_factory=dict)  # urn -> registration, in order
    outputs: dict[str, dict[str, Any]] = field(default_factory=dict)  # urn -> RegisterResourceOutputs
    logs: list[tuple[int, str, str]] = field(default_factory=list)  # (severity, urn, message)
    root_urn: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _server: Any = field(default=None, repr=False)

    # -- lifecycle -----------------------------------------------------------------------
    def __enter__(self) -> TestEngine:
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        resource_pb2_grpc.add_ResourceMonitorServicer_to_server(_Monitor(self), self._server)
        engine_pb2_grpc.add_EngineServicer_to_server(_Engine(self), self._server)
        port = self._server.add_insecure_port("127.0.0.1:0")
        self._server.start()
        self.address = f"127.0.0.1:{port}"
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.stop(grace=None)

    def begin(self, *, dry_run: bool) -> TestEngine:
        """Start the next deployment on the same server (the provider keeps this engine address):
        recordings cleared, ``dry_run`` set."""
        with self._lock:
            self.dry_run = dry_run
            self.requests.clear()
            self.resources.clear()
            self.outputs.clear()
            self.logs.clear()
        return self

    # -- recording -----------------------------------------------------------------------
    def record(self, rpc: str, request: Any) -> None:
        copy = type(request)()
        copy.CopyFrom(request)
        with self._lock:
            self.requests.append((rpc, copy))

    def calls(self, rpc: str) -> list[Any]:
        return [r for name, r in self.requests if name == rpc]

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        """The engine's URN: the parent's qualified type (without the root Stack) ``$`` the type."""
        qualified = type_
        if parent:
            parent_type = parent.split("::")[2]
            if parent_type != "pulumi:pulumi:Stack":
                qualified = f"{parent_type}${type_}"
        return f"urn:pulumi:{self.stack}::{self.project}::{qualified}::{name}"

    def children_of(self, urn: str) -> list[Registered]:
        return [r for r in self.resources.values() if r.parent == urn]

    def custom(self) -> list[Registered]:
        """The custom resources registered (the Kubernetes objects), in registration order."""
        return [r for r in self.resources.values() if r.custom]


_OPTION_FIELDS = (
    "protect",
    "retainOnDelete",
    "provider",
    "deleteBeforeReplace",
    "replaceOnChanges",
    "ignoreChanges",
    "aliases",
    "hooks",
    "deletedWith",
    "additionalSecretOutputs",
    "version",
)


def _options(request: resource_pb2.RegisterResourceRequest) -> dict[str, Any]:
    data = json_format.MessageToDict(request, preserving_proto_field_name=False)
    return {k: data[k] for k in _OPTION_FIELDS if k in data}


def _custom_outputs(engine: TestEngine, inputs: struct_pb2.Struct) -> struct_pb2.Struct:
    """A Kubernetes object's outputs: its inputs, ``status`` computed (unknown in a preview)."""
    out = struct_pb2.Struct()
    out.CopyFrom(inputs)
    if engine.dry_run:
        out["status"] = UNKNOWN
    else:
        out["status"] = {}
    return out


def _object_id(engine: TestEngine, inputs: dict[str, Any], name: str) -> str:
    if engine.dry_run:
        return ""  # not created yet: the SDK resolves the id as unknown
    metadata = plain(inputs.get("metadata") or {})
    obj_name = metadata.get("name") or name
    return f"{metadata['namespace']}/{obj_name}" if metadata.get("namespace") else obj_name


class _Monitor(resource_pb2_grpc.ResourceMonitorServicer):
    def __init__(self, engine: TestEngine) -> None:
        self.engine = engine

    def GetDeploymentInfo(self, request, context):
        self.engine.record("GetDeploymentInfo", request)
        e = self.engine
        return resource_pb2.DeploymentInfo(
            project=e.project,
            stack=e.stack,
            organization=e.organization,
            config=e.config,
            dryRun=e.dry_run,
            parallel=0,
            supportedFeatures=list(SUPPORTED_FEATURES),
        )

    def SupportsFeature(self, request, context):
        self.engine.record("SupportsFeature", request)
        return resource_pb2.SupportsFeatureResponse(hasSupport=True)

    def RegisterResource(self, request, context):
        e = self.engine
        e.record("RegisterResource", request)
        urn = e.make_urn(request.parent, request.type, request.name)
        if request.remote:
            context.abort(
                grpc.StatusCode.UNIMPLEMENTED,
                "the test engine constructs no remote components "
                "(call the provider's Construct directly: tests/grpc_provider.py)",
            )
        inputs = to_dict(request.object)
        reg = Registered(
            urn=urn,
            type=request.type,
            name=request.name,
            parent=request.parent,
            custom=request.custom,
            remote=request.remote,
            inputs=inputs,
            dependencies=tuple(request.dependencies),
            property_dependencies={k: tuple(v.urns) for k, v in request.propertyDependencies.items()},
            options=_options(request),
        )
        with e._lock:
            if urn in e.resources:
                context.abort(grpc.StatusCode.ALREADY_EXISTS, f"Duplicate resource URN '{urn}'")
            e.resources[urn] = reg
        if not request.custom:
            return resource_pb2.RegisterResourceResponse(urn=urn)
        return resource_pb2.RegisterResourceResponse(
            urn=urn, id=_object_id(e, inputs, request.name), object=_custom_outputs(e, request.object)
        )

    def RegisterResourceOutputs(self, request, context):
        self.engine.record("RegisterResourceOutputs", request)
        with self.engine._lock:
            self.engine.outputs[request.urn] = to_dict(request.outputs)
        return empty_pb2.Empty()

    def ReadResource(self, request, context):
        self.engine.record("ReadResource", request)
        urn = self.engine.make_urn(request.parent, request.type, request.name)
        return resource_pb2.ReadResourceResponse(urn=urn, properties=request.properties)

    def Invoke(self, request, context):
        self.engine.record("Invoke", request)
        return resource_pb2.ResourceInvokeResponse(**{"return": struct_pb2.Struct()})

    def Call(self, request, context):
        self.engine.record("Call", request)
        context.abort(grpc.StatusCode.UNIMPLEMENTED, "the test engine serves no Call")

    def RegisterStackTransform(self, request, context):
        self.engine.record("RegisterStackTransform", request)
        return empty_pb2.Empty()

    def RegisterStackInvokeTransform(self, request, context):
        self.engine.record("RegisterStackInvokeTransform", request)
        return empty_pb2.Empty()

    def RegisterResourceHook(self, request, context):
        self.engine.record("RegisterResourceHook", request)
        return empty_pb2.Empty()

    def RegisterErrorHook(self, request, context):
        self.engine.record("RegisterErrorHook", request)
        return empty_pb2.Empty()

    def RegisterPackage(self, request, context):
        self.engine.record("RegisterPackage", request)
        return resource_pb2.RegisterPackageResponse(ref=f"package-{request.name}-{request.version}")

    def SignalAndWaitForShutdown(self, request, context):
        self.engine.record("SignalAndWaitForShutdown", request)
        return empty_pb2.Empty()


class _Engine(engine_pb2_grpc.EngineServicer):
    def __init__(self, engine: TestEngine) -> None:
        self.engine = engine

    def Log(self, request, context):
        self.engine.record("Log", request)
        with self.engine._lock:
            self.engine.logs.append((request.severity, request.urn, request.message))
        return empty_pb2.Empty()

    def GetRootResource(self, request, context):
        self.engine.record("GetRootResource", request)
        return engine_pb2.GetRootResourceResponse(urn=self.engine.root_urn)

    def SetRootResource(self, request, context):
        self.engine.record("SetRootResource", request)
        self.engine.root_urn = request.urn
        return engine_pb2.SetRootResourceResponse()

    def RequirePulumiVersion(self, request, context):
        self.engine.record("RequirePulumiVersion", request)
        return engine_pb2.RequirePulumiVersionResponse()
