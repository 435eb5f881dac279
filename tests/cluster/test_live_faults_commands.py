"""Cluster faults are never internal errors: every command that talks to a cluster, against every
fault a real one shows, exits 4 with ONE ``error:`` line naming the server or the kubeconfig file
and the cause (issue 24, item 7).

Commands (each builds its live backend from a kubeconfig *file*, as a user's shell does):
``status MANIFEST`` (the spec from a file), ``status`` (the spec from the cluster's custom
resources), ``rollback MANIFEST``, ``rollout`` (its ``pulumi up`` runs the LeaderWorkerSet
component under Pulumi's mock engine with ``kubernetes:kubeconfig`` set; the failed up reaches the
driver as the Automation API's ``CommandError``), and the component itself (``pulumi up`` fails
with one ``NAME: cluster error: ...`` line, nothing registered).

Faults: a refused connection (a closed loopback port), TLS to a plain-HTTP server, HTTP 401 / 403 /
500 (persistent) from kmock, a garbage body (an HTML page with status 200), 404 to every request
(as a Kubernetes Status, and as a proxy's HTML page), a server slower than
the client's timeout, and a kubeconfig file that is missing, empty, not YAML, not a kubeconfig, or
names a context it does not define. No network beyond loopback.
"""

from __future__ import annotations

import asyncio
import pathlib
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass

import pulumi
import pytest
import yaml

pytest.importorskip("kmock")

from conftest import fresh_mock_runtime
from support.kmock_helpers import CLIENT_TIMEOUT, HANG, Fault, FaultyEmulator

from pulumi_lws.cli import build_parser, main
from pulumi_lws.cli import rollout as rollout_cli
from pulumi_lws.cli.exit_codes import UNREACHABLE

pytestmark = pytest.mark.kmock(cls=FaultyEmulator)

NS = "serving"
CONTAINERS = {"containers": [{"name": "s", "image": "nginx:1"}]}
LWS = {
    "apiVersion": "leaderworkerset.x-k8s.io/v1",
    "kind": "LeaderWorkerSet",
    "metadata": {"name": "web", "namespace": NS},
    "spec": {"replicas": 2, "leaderWorkerTemplate": {"size": 2, "workerTemplate": {"spec": CONTAINERS}}},
}
EVERY_GET = re.compile(r"/.*")


def kubeconfig_text(server: str, *, context: str = "kmock") -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "current-context": context,
            "clusters": [{"name": "kmock", "cluster": {"server": server}}],
            "users": [{"name": "test", "user": {"token": "t"}}],
            "contexts": [{"name": "kmock", "context": {"cluster": "kmock", "user": "test"}}],
        }
    )


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed): connecting is refused at once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass(frozen=True)
class ClusterFault:
    """How to break the cluster: ``setup(kmock, tmp_path) -> kubeconfig path``; ``shown``: the
    fragments the one error line must hold (``{server}`` / ``{file}`` filled in)."""

    setup: Callable[[object, pathlib.Path], str]
    shown: tuple[str, ...]


def _kubeconfig_file(tmp_path: pathlib.Path, text: str) -> str:
    path = tmp_path / "kubeconfig"
    path.write_text(text)
    return str(path)


def _served(fault: Fault | None, scheme: str = "http") -> Callable[[object, pathlib.Path], str]:
    def setup(kmock, tmp_path):
        if fault is not None:
            kmock.inject(fault)
        port = str(kmock.url).rstrip("/").rsplit(":", 1)[1]
        return _kubeconfig_file(tmp_path, kubeconfig_text(f"{scheme}://127.0.0.1:{port}"))

    return setup


def _refused(kmock, tmp_path):
    return _kubeconfig_file(tmp_path, kubeconfig_text(f"http://127.0.0.1:{closed_port()}"))


def _file(text: str | None) -> Callable[[object, pathlib.Path], str]:
    def setup(kmock, tmp_path):
        return str(tmp_path / "no-such-kubeconfig") if text is None else _kubeconfig_file(tmp_path, text)

    return setup


FAULTS = {
    "refused": ClusterFault(_refused, ("{server}", "connection failed (ConnectError", "refused")),
    "tls": ClusterFault(_served(None, "https"), ("{server}", "TLS handshake failed")),
    "http-401": ClusterFault(
        _served(Fault("GET", EVERY_GET, 401, "Unauthorized", "Unauthorized", times=None)),
        ("{server}", "HTTP 401 Unauthorized"),
    ),
    "http-403": ClusterFault(
        _served(
            Fault("GET", EVERY_GET, 403, "Forbidden", 'pods is forbidden: User "test" cannot list resource', times=None)
        ),
        ("{server}", "HTTP 403 Forbidden"),
    ),
    "http-500": ClusterFault(
        _served(Fault("GET", EVERY_GET, 500, times=None)),
        ("{server}", "HTTP 500 InternalError", "gave up after 1 attempts"),
    ),
    "garbage": ClusterFault(
        _served(Fault("GET", EVERY_GET, 200, body="<html>captive portal</html>", times=None)),
        ("{server}", "malformed response"),
    ),
    # a server answering 404 to every request is no Kubernetes API server (every one serves
    # StatefulSets, Pods, /apis ...): never an empty cluster to plan the creation of
    "http-404": ClusterFault(
        _served(
            Fault("GET", EVERY_GET, 404, "NotFound", "the server could not find the requested resource", times=None)
        ),
        ("{server}", "HTTP 404 NotFound", "GET /api", "every Kubernetes API server serves"),
    ),
    "html-404": ClusterFault(
        _served(Fault("GET", EVERY_GET, 404, body="<html><h1>404 Not Found</h1>nginx</html>", times=None)),
        ("{server}", "HTTP 404", "GET /api", "every Kubernetes API server serves"),
    ),
    "slow": ClusterFault(
        _served(Fault("GET", EVERY_GET, 200, delay=HANG, times=None)), ("{server}", "timed out (ReadTimeout")
    ),
    "kubeconfig-missing": ClusterFault(_file(None), ("kubeconfig {file}: no such file",)),
    "kubeconfig-empty": ClusterFault(_file(""), ("kubeconfig {file}: the file is empty",)),
    "kubeconfig-not-yaml": ClusterFault(_file("clusters: [\n  {name: x\n"), ("kubeconfig {file}: not valid YAML",)),
    "kubeconfig-not-a-config": ClusterFault(_file("just some text\n"), ("kubeconfig {file}: not a kubeconfig",)),
    "kubeconfig-unknown-context": ClusterFault(
        _file(kubeconfig_text("http://127.0.0.1:1", context="prod")), ("kubeconfig {file}: no context 'prod'",)
    ),
}


def _manifest(tmp_path: pathlib.Path) -> str:
    path = tmp_path / "lws.yaml"
    path.write_text(yaml.safe_dump(LWS))
    return str(path)


class _Echo(pulumi.runtime.Mocks):
    def __init__(self) -> None:
        self.registered: list[str] = []

    def new_resource(self, args):
        self.registered.append(args.typ)
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args):
        return {}


def _component_up(kubeconfig: str, monkeypatch) -> tuple[str, list[str]]:
    """One ``pulumi up`` of the LeaderWorkerSet component (mock engine) with ``kubernetes:kubeconfig``
    = ``kubeconfig``: (the RunError's message, the resource types registered)."""
    from pulumi_lws.components import base
    from pulumi_lws.components.leaderworkerset import LeaderWorkerSet

    monkeypatch.setattr(base, "kubernetes_provider_settings", lambda: {"context": None, "kubeconfig": kubeconfig})
    mocks = _Echo()
    fresh_mock_runtime(mocks, preview=False)
    with pytest.raises(pulumi.RunError) as raised:
        LeaderWorkerSet("web", {"manifest": LWS})
    return str(raised.value), mocks.registered


class _ComponentStack:
    """``rollout``'s StackLike whose ``up`` runs the component; a failed up raises what the
    Automation API raises (``CommandError`` over the engine's output)."""

    def __init__(self, kubeconfig: str, monkeypatch) -> None:
        self.kubeconfig, self.monkeypatch = kubeconfig, monkeypatch

    def up(self):
        from pulumi.automation._cmd import CommandResult
        from pulumi.automation.errors import CommandError

        message, _ = _component_up(self.kubeconfig, self.monkeypatch)
        stderr = f"error: update failed\n\n  pulumi:pulumi:Stack (lws-dev):\n    error: {message}\n"
        raise CommandError(CommandResult(stdout="Updating (dev)\n", stderr=stderr, code=255))


def _status(kubeconfig, tmp_path, capsys, monkeypatch):
    return main(["status", "-n", NS, "--kubeconfig", kubeconfig, "--attempts", "1", _manifest(tmp_path)])


def _status_crs(kubeconfig, tmp_path, capsys, monkeypatch):
    return main(["status", "-n", NS, "--kubeconfig", kubeconfig, "--attempts", "1"])


def _rollback(kubeconfig, tmp_path, capsys, monkeypatch):
    return main(["rollback", _manifest(tmp_path), "--kubeconfig", kubeconfig, "--attempts", "1"])


def _rollout(kubeconfig, tmp_path, capsys, monkeypatch):
    args = build_parser().parse_args(["rollout", "--stack", "dev", "--max-stages", "2"])
    return rollout_cli.run(args, stack_factory=lambda stack, cwd: _ComponentStack(kubeconfig, monkeypatch))


COMMANDS = {"status": _status, "status-from-crs": _status_crs, "rollback": _rollback, "rollout": _rollout}


@pytest.fixture
def one_attempt(monkeypatch):
    """The component's (and rollout's) live backend: one try per request and the fault suite's
    client timeout, so a persistent fault or a hung server fails fast (the CLI commands pass
    ``--attempts 1``)."""
    from pulumi_lws.cluster import live
    from pulumi_lws.cluster.resilience import RetryPolicy

    monkeypatch.setattr(live, "REQUEST_TIMEOUT", CLIENT_TIMEOUT)
    original = live.LiveCluster.__init__

    def init(self, client, **kw):
        original(self, client, **kw)
        self.retry = RetryPolicy(attempts=1)

    monkeypatch.setattr(live.LiveCluster, "__init__", init)


def _expected(fault: ClusterFault, kubeconfig: str) -> list[str]:
    server = None
    try:
        server = (yaml.safe_load(pathlib.Path(kubeconfig).read_text()) or {})["clusters"][0]["cluster"]["server"]
    except (OSError, TypeError, KeyError, IndexError, yaml.YAMLError):
        pass
    return [s.format(server=server, file=kubeconfig) for s in fault.shown]


@pytest.mark.asyncio
@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("command", sorted(COMMANDS))
async def test_a_cluster_fault_is_exit_4_and_one_line_naming_the_server_or_file(
    kmock, tmp_path, capsys, monkeypatch, one_attempt, command, fault
):
    case = FAULTS[fault]
    kubeconfig = case.setup(kmock, tmp_path)

    code = await asyncio.to_thread(COMMANDS[command], kubeconfig, tmp_path, capsys, monkeypatch)

    out, err = capsys.readouterr()
    assert code == UNREACHABLE, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "internal error" not in err and "Traceback" not in err and "please report" not in err
    for fragment in _expected(case, kubeconfig):
        assert fragment in lines[0], (fragment, lines[0])


@pytest.mark.asyncio
@pytest.mark.parametrize("fault", sorted(FAULTS))
async def test_the_component_fails_the_up_in_one_line_before_anything_is_registered(
    kmock, tmp_path, monkeypatch, one_attempt, fault
):
    case = FAULTS[fault]
    kubeconfig = case.setup(kmock, tmp_path)

    message, registered = await asyncio.to_thread(_component_up, kubeconfig, monkeypatch)

    assert message.startswith("web: cluster error: ") and "\n" not in message, message
    for fragment in _expected(case, kubeconfig):
        assert fragment in message, (fragment, message)
    assert not [t for t in registered if t.startswith("kubernetes:")]  # nothing planned from no read


def test_a_kubeconfig_path_is_read_as_a_path_never_as_text(tmp_path):
    """``--kubeconfig PATH`` whose file does not exist is "no such file", not YAML text parsed
    into a string; text with a newline is the file's content (``kubernetes:kubeconfig``)."""
    from pulumi_lws.cluster import kubeconfig as K

    with pytest.raises(K.KubeconfigError, match=r"^kubeconfig relative/kube\.yaml: no such file$"):
        K.load("relative/kube.yaml")
    config, source = K.load(kubeconfig_text("http://127.0.0.1:1"))
    assert source == "inline kubeconfig" and config.current_context == "kmock"
    path = _kubeconfig_file(tmp_path, kubeconfig_text("http://127.0.0.1:1"))
    assert K.load(path)[1] == path


def test_kubeconfig_env_lists_are_searched_for_the_first_existing_file(tmp_path, monkeypatch):
    from pulumi_lws.cluster import kubeconfig as K

    path = _kubeconfig_file(tmp_path, kubeconfig_text("http://127.0.0.1:1"))
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'absent'}:{path}")
    assert K.load(None)[1] == path
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "absent"))
    with pytest.raises(K.KubeconfigError, match="absent: no such file"):
        K.load(None)
