"""The ``lws`` component provider as the Pulumi CLI runs it, and the engine side of ``Construct``.

:func:`start_provider` launches the plugin the way the Pulumi CLI (v3.276) and the Python language
host do for a source-based plugin (``PulumiPlugin.yaml``, runtime ``python``). The CLI reads only
``runtime`` from that file (its ``PluginProject`` has no ``main``) and asks the host's ``RunPlugin``
to run the plugin directory with entry point ``.``, the working directory being the CLI's own
(the consumer program's directory); the host runs ``<virtualenv>/bin/python <plugin dir> <engine
address>`` when ``<plugin dir>/__main__.py`` exists, else ``python -m pulumi.run.plugin <pyproject
name> <engine address>``, with ``options.virtualenv`` (default ``venv``) resolved against the
plugin directory. :func:`plugin_command` applies that rule; a checkout without its own virtualenv
falls back to the interpreter running the tests. It then reads the port the plugin prints on
stdout and connects. The engine then calls ``GetPluginInfo``, ``Configure`` and ``GetSchema``, and
for every component a program declares ``Construct`` (:func:`construct_request`) with the inputs
the SDK of the program's language sent. docs/languages.md names the CLI sources.

:class:`KmockCluster` is the cluster the provider's components observe: kmock's Kubernetes
emulator served on loopback from a background thread, reached through a kubeconfig passed as the
stack config ``kubernetes:kubeconfig`` — the live backend's own code path, as a user's stack
config would point it (``pulumi_lws.components.base.kubernetes_provider_settings``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import pathlib
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import yaml
from conftest import REPO_ROOT
from google.protobuf import struct_pb2
from grpc_engine import OUTPUT_SIG, SECRET_SIG, SIG_KEY, UNKNOWN, TestEngine
from pulumi.runtime.proto import provider_pb2, provider_pb2_grpc

STARTUP_SECONDS = 60


#: Where the CLI runs a plugin from: its own working directory, here a consumer program's.
CONSUMER_DIR = REPO_ROOT / "examples" / "provider-yaml"


def plugin_command(
    engine_address: str, plugin_dir: pathlib.Path = REPO_ROOT, cli_flags: tuple[str, ...] = ()
) -> list[str]:
    """The command line the Python language host's ``RunPlugin`` runs for the plugin in ``plugin_dir``.

    ``cli_flags`` are what the CLI puts before the engine address (``buildPluginArguments``:
    ``--logtostderr`` and ``-v=N`` under ``--logflow``, ``--tracing <endpoint>``)."""
    args = [*cli_flags, engine_address]
    plugin = yaml.safe_load((plugin_dir / "PulumiPlugin.yaml").read_text())
    runtime = plugin["runtime"]
    assert runtime["name"] == "python", runtime
    options = runtime.get("options") or {}
    virtualenv = plugin_dir / options.get("virtualenv", "venv")  # the host's default for a pip plugin
    python = virtualenv / "bin" / "python"
    interpreter = str(python) if python.exists() else sys.executable
    if (plugin_dir / "__main__.py").exists():
        return [interpreter, str(plugin_dir), *args]
    import tomllib  # Python >= 3.11; only a plugin without a root __main__.py needs it

    pyproject = tomllib.loads((plugin_dir / "pyproject.toml").read_text())
    return [interpreter, "-m", "pulumi.run.plugin", pyproject["project"]["name"], *args]


@dataclass
class Provider:
    process: subprocess.Popen
    stub: provider_pb2_grpc.ResourceProviderStub
    channel: grpc.Channel
    port: int


@contextlib.contextmanager
def start_provider(
    engine_address: str, env: dict[str, str] | None = None, cli_flags: tuple[str, ...] = ()
) -> Iterator[Provider]:
    """Start the plugin from the consumer's directory, read its port from the first stdout line,
    connect; stop it afterwards."""
    command = plugin_command(engine_address, cli_flags=cli_flags)
    process = subprocess.Popen(
        command, cwd=CONSUMER_DIR, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **(env or {})}
    )
    try:
        line = _first_line(process)
        port = int(line)
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        grpc.channel_ready_future(channel).result(timeout=STARTUP_SECONDS)
        yield Provider(process, provider_pb2_grpc.ResourceProviderStub(channel), channel, port)
        channel.close()
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover
            process.kill()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def _first_line(process: subprocess.Popen) -> str:
    result: list[str] = []
    reader = threading.Thread(target=lambda: result.append(process.stdout.readline().decode()), daemon=True)
    reader.start()
    reader.join(STARTUP_SECONDS)
    if not result or not result[0].strip():
        process.kill()
        raise AssertionError(f"the plugin printed no port: {process.stderr.read().decode()[-2000:]}")
    return result[0].strip()


def configure(provider: Provider) -> provider_pb2.ConfigureResponse:
    """What the engine sends a freshly loaded provider (no provider config for a component package)."""
    return provider.stub.Configure(provider_pb2.ConfigureRequest(acceptSecrets=True, acceptResources=True))


# -- inputs as another language's SDK sends them ------------------------------------------
def secret(value: Any) -> dict[str, Any]:
    """The secret signature wrapper (what an SDK sends for ``pulumi.secret(value)``)."""
    return {SIG_KEY: SECRET_SIG, "value": value}


def output_value(
    value: Any = None, *, known: bool = True, dependencies: tuple[str, ...] = (), is_secret: bool = False
) -> dict[str, Any]:
    """A first-class output value (what the engine forwards to a provider that accepts outputs,
    for an Output of another resource): value (absent when unknown), secret, dependencies."""
    out: dict[str, Any] = {SIG_KEY: OUTPUT_SIG}
    if known:
        out["value"] = value
    if is_secret:
        out["secret"] = True
    if dependencies:
        out["dependencies"] = list(dependencies)
    return out


def as_struct(data: dict[str, Any]) -> struct_pb2.Struct:
    """JSON data as the protobuf Struct every SDK sends: numbers are doubles (``3`` -> ``3.0``)."""
    struct = struct_pb2.Struct()
    struct.update(json.loads(json.dumps(data)))
    return struct


def construct_request(
    engine: TestEngine,
    type_: str,
    name: str,
    inputs: dict[str, Any],
    *,
    input_dependencies: dict[str, tuple[str, ...]] | None = None,
    dependencies: tuple[str, ...] = (),
    parent: str = "",
) -> provider_pb2.ConstructRequest:
    """The ConstructRequest the engine sends for a remote component a program registered."""
    return provider_pb2.ConstructRequest(
        project=engine.project,
        stack=engine.stack,
        organization=engine.organization,
        config=engine.config,
        dryRun=engine.dry_run,
        parallel=32,
        monitorEndpoint=engine.address,
        type=type_,
        name=name,
        parent=parent or engine.root_urn,
        inputs=as_struct(inputs),
        inputDependencies={
            k: provider_pb2.ConstructRequest.PropertyDependencies(urns=list(v))
            for k, v in (input_dependencies or {}).items()
        },
        dependencies=list(dependencies),
        accepts_output_values=True,
    )


# -- the cluster ----------------------------------------------------------------------------
class KmockCluster:
    """kmock's Kubernetes emulator on 127.0.0.1 in a background thread (its own event loop), for a
    provider process to reach over HTTP; ``kubeconfig`` is the text to pass as
    ``kubernetes:kubeconfig``."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self.url = ""
        self.emulator: Any = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> KmockCluster:
        self._thread.start()
        if not self._ready.wait(30):
            raise AssertionError("kmock did not start")
        return self

    def __exit__(self, *exc: Any) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._serve())
        self._loop.close()

    async def _serve(self) -> None:
        from kmock import Server
        from support.kmock_helpers import FaultyEmulator

        self._stop = asyncio.Event()
        async with FaultyEmulator() as emulator, Server(emulator) as server:
            self.emulator = emulator
            self.url = str(server.url).rstrip("/")
            self._ready.set()
            await self._stop.wait()

    @property
    def kubeconfig(self) -> str:
        return yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "kmock", "cluster": {"server": self.url}}],
                "users": [{"name": "test", "user": {"token": "t"}}],
                "contexts": [{"name": "kmock", "context": {"cluster": "kmock", "user": "test"}}],
                "current-context": "kmock",
            }
        )


__all__ = [
    "CONSUMER_DIR",
    "UNKNOWN",
    "KmockCluster",
    "Provider",
    "as_struct",
    "configure",
    "construct_request",
    "output_value",
    "plugin_command",
    "secret",
    "start_provider",
]
