"""The source plugin as the Pulumi CLI installs and launches it (docs/languages.md names the CLI sources).

* ``PulumiPlugin.yaml`` holds only what the CLI's ``PluginProject`` reads (no ``main``: it has no
  such field, and an unknown key is silently dropped);
* launch: the Python host runs ``<.venv>/bin/python <plugin dir> <engine address>`` from the
  CLI's working directory because the root ``__main__.py`` exists; started so, it prints a port,
  serves the ``lws`` provider, and runs nothing else: it opens no file of the quickstart and no
  kubeconfig (the old root ``__main__.py`` ran the quickstart, which observes the kube context);
  importing it starts nothing;
* install: the CLI runs ``pip install -r requirements.txt`` in the plugin directory; pip itself
  (offline, ``--dry-run``) resolves that file to this project with its runtime dependencies;
* the root project (``Pulumi.yaml``) still runs the quickstart, through ``main``.
"""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys

import pytest
import tomllib
import yaml
from conftest import REPO_ROOT
from google.protobuf import empty_pb2
from grpc_engine import TestEngine
from grpc_provider import CONSUMER_DIR, plugin_command, start_provider
from pulumi.runtime.proto import provider_pb2
from support.pip_report import pip_resolves, requirement_names

from pulumi_lws import __version__
from pulumi_lws.cli.stack.project import load_project

#: the fields of sdk/go/common/workspace/project.go's PluginProject (pulumi v3.276)
PLUGIN_PROJECT_FIELDS = {"runtime", "packages", "requiredPulumiVersion", "template"}

#: logs every path the interpreter opens (audit hook), installed through PYTHONPATH's sitecustomize
_SITECUSTOMIZE = """
import os, sys
_fd = os.open(os.environ["LWS_OPEN_LOG"], os.O_WRONLY | os.O_CREAT | os.O_APPEND)
def _hook(event, args):
    if event == "open" and args and isinstance(args[0], str):
        os.write(_fd, (os.path.abspath(args[0]) + "\\n").encode())
sys.addaudithook(_hook)
"""


def _pyproject() -> dict:
    return tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())


def test_the_plugin_manifest_holds_only_what_the_cli_reads():
    plugin = yaml.safe_load((REPO_ROOT / "PulumiPlugin.yaml").read_text())
    assert set(plugin) <= PLUGIN_PROJECT_FIELDS, set(plugin) - PLUGIN_PROJECT_FIELDS
    assert plugin["runtime"] == {"name": "python", "options": {"toolchain": "pip", "virtualenv": ".venv"}}


def test_the_cli_launches_the_root_main():
    command = plugin_command("127.0.0.1:1")
    assert command[1:] == [str(REPO_ROOT), "127.0.0.1:1"]
    assert command[0] in (str(REPO_ROOT / ".venv" / "bin" / "python"), sys.executable)


@pytest.mark.parametrize("cli_flags", [(), ("--logtostderr", "-v=9")], ids=["plain", "logflow"])
def test_the_root_main_started_as_the_cli_starts_it_serves_the_provider_only(tmp_path, cli_flags):
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(_SITECUSTOMIZE)
    opened, kubeconfig = tmp_path / "opened.txt", tmp_path / "kubeconfig"
    env = {"PYTHONPATH": str(tmp_path / "site"), "LWS_OPEN_LOG": str(opened), "KUBECONFIG": str(kubeconfig)}
    with TestEngine("consumer", "dev") as engine, start_provider(engine.address, env, cli_flags) as provider:
        assert provider.port > 0 and provider.process.poll() is None  # the handshake: a port on stdout
        assert provider.stub.GetPluginInfo(empty_pb2.Empty()).version == __version__
        served = json.loads(provider.stub.GetSchema(provider_pb2.GetSchemaRequest()).schema)
        assert served["name"] == "lws"  # not "pulumi-lws", the name `pulumi.run.plugin` would serve
        assert set(served["resources"]) == {
            "lws:index:LeaderWorkerSet",
            "lws:index:ModelServing",
            "lws:index:DisaggregatedSet",
        }
    paths = set(opened.read_text().splitlines())
    assert any(p.startswith(str(REPO_ROOT / "pulumi_lws" / "provider")) for p in paths)  # the hook saw the loads
    assert not {p for p in paths if p.startswith(str(REPO_ROOT / "examples" / "quickstart"))}
    assert str(kubeconfig) not in paths and not any(p.endswith(os.path.join(".kube", "config")) for p in paths)


def test_importing_the_root_main_starts_nothing(monkeypatch):
    import pulumi_lws.provider.__main__ as provider_main

    def serve() -> None:
        raise AssertionError("the provider started on import")

    monkeypatch.setattr(provider_main, "main", serve)
    namespace = runpy.run_path(str(REPO_ROOT / "__main__.py"), run_name="pulumi_lws_root")
    assert callable(namespace["main"])
    with pytest.raises(AssertionError, match="started on import"):
        namespace["main"]()  # main() is the provider's, and only main() starts it


def test_without_the_dependencies_the_root_main_says_what_to_install():
    bare = subprocess.run(
        [sys.executable, "-I", "-S", str(REPO_ROOT), "127.0.0.1:1"],  # no site-packages: no pulumi
        cwd=CONSUMER_DIR,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bare.returncode == 1 and not bare.stdout
    assert "Traceback" not in bare.stderr
    assert (
        "cannot import 'pulumi'" in bare.stderr and f"-m pip install -r {REPO_ROOT / 'requirements.txt'}" in bare.stderr
    )


def test_pip_installs_this_package_and_its_dependencies_from_the_root_requirements():
    (item,) = pip_resolves("requirements.txt", REPO_ROOT)  # the CLI's pip runs in the plugin directory
    assert item["metadata"]["name"] == _pyproject()["project"]["name"]
    assert item["download_info"] == {"url": REPO_ROOT.as_uri(), "dir_info": {"editable": True}}
    runtime = {r for r in item["metadata"].get("requires_dist", []) if "extra ==" not in r}
    assert requirement_names(runtime) == requirement_names(_pyproject()["project"]["dependencies"])
    assert {"pulumi", "pulumi-kubernetes", "lightkube"} <= requirement_names(runtime)


def test_the_root_project_runs_the_quickstart_through_main():
    project = yaml.safe_load((REPO_ROOT / "Pulumi.yaml").read_text())
    assert project["main"] == "examples/quickstart"
    assert project["runtime"]["options"]["virtualenv"] == ".venv"  # resolved against the root, not main
    assert load_project(REPO_ROOT).program == REPO_ROOT / "examples" / "quickstart" / "__main__.py"
