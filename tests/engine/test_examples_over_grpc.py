"""The Python examples as the language host runs them: real runtime settings (monitor and engine
addresses, project, stack, dry-run, parallelism), every registration a gRPC call to
:class:`~grpc_engine.TestEngine` (no ``set_mocks``), planning against the embedded cluster
(``SimCluster``) — preview, then update, then (objects applied and settled) the next update.
Each run's registrations must equal the mock-engine run of the same program
(``pulumi_lws.sim.driver.pulumi_engine.run_program``, what ``pulumi-lws simulate`` uses): types, names,
parents, dependencies, secrets, options and inputs."""

from __future__ import annotations

import shutil

import pytest
import yaml
from conftest import REPO_ROOT
from grpc_engine import TestEngine, plain, secret_paths
from grpc_program import exit_code_like_language_host, run_like_language_host
from pulumi.runtime.proto import engine_pb2

from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.core.k8s.model import ints_back
from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.sim.driver.pulumi_engine import run_program

EXAMPLES = ("quickstart", "modelserving-pd", "disaggregated-pd")
STACK = "dev"


class RecordingActuator:
    """Runs nothing; records what the stage would run (both paths must ask for the same)."""

    def __init__(self) -> None:
        self.actions: list[str] = []

    def execute(self, namespace, actions):
        lines = [a.describe() for a in actions]
        self.actions += lines
        return lines


def _project(example: str) -> str:
    return yaml.safe_load((REPO_ROOT / "examples" / example / "Pulumi.yaml").read_text())["name"]


def _manifest(registered) -> dict:
    """A custom registration's inputs as the manifest the cluster receives (as the mock engine builds it)."""
    obj = ints_back(plain(registered.inputs))
    _, group_version, kind = registered.type.split(":", 2)
    group, _, version = group_version.rpartition("/")
    obj.setdefault("kind", kind)
    obj.setdefault("apiVersion", version if group in ("", "core") else f"{group}/{version}")
    return obj


def _grpc_view(engine: TestEngine) -> dict:
    return {
        urn: (
            r.type,
            r.name,
            r.parent,
            tuple(r.dependencies),
            tuple(secret_paths(r.inputs)),
            bool(r.options.get("protect")),
            bool(r.options.get("retainOnDelete")),
            tuple((r.options.get("hooks") or {}).get("beforeDelete", ())),
        )
        for urn, r in engine.resources.items()
    }


def _mock_view(result) -> dict:
    return {
        urn: (
            r.type,
            r.name,
            r.parent,
            r.dependencies,
            r.secret_paths,
            r.protect,
            r.retain_on_delete,
            r.before_delete_hooks,
        )
        for urn, r in result.registrations.items()
    }


def _sorted_deps(view: dict) -> dict:
    return {urn: (*v[:3], tuple(sorted(v[3])), *v[4:]) for urn, v in view.items()}


def _key(m: dict) -> tuple:
    return m["kind"], m["metadata"].get("namespace") or "default", m["metadata"]["name"]


def _both(example: str, cluster: SimCluster, *, dry_run: bool):
    project = _project(example)
    program = REPO_ROOT / "examples" / example
    grpc_actions, mock_actions = RecordingActuator(), RecordingActuator()
    with TestEngine(project=project, stack=STACK, dry_run=dry_run) as engine:
        run_like_language_host(program, engine, cluster, grpc_actions)
    mocked = run_program(
        str(program / "__main__.py"), cluster, mock_actions, preview=dry_run, stack=STACK, project=project
    )
    return engine, mocked, grpc_actions.actions, mock_actions.actions


def _assert_same(engine: TestEngine, mocked, grpc_actions, mock_actions) -> list[dict]:
    assert _sorted_deps(_grpc_view(engine)) == _sorted_deps(_mock_view(mocked))
    manifests = {_key(m): m for m in (_manifest(r) for r in engine.custom())}
    assert manifests == {_key(m): m for m in mocked.manifests}
    assert grpc_actions == mock_actions
    return list(manifests.values())


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_over_grpc_registers_what_the_mock_engine_records(example):
    cluster = SimCluster()
    preview = _both(example, cluster, dry_run=True)
    _assert_same(*preview)
    engine = preview[0]
    # the real protocol: the root Stack first, the component under it, every object under the component
    stack, component = list(engine.resources.values())[:2]
    assert stack.type == "pulumi:pulumi:Stack" and stack.name == f"{engine.project}-{STACK}"
    assert component.parent == stack.urn and component.type.startswith("lws:index:")
    assert {r.parent for r in engine.custom()} == {component.urn}
    assert engine.calls("SignalAndWaitForShutdown") and engine.calls("GetDeploymentInfo")
    assert component.urn in engine.outputs and "stage" in engine.outputs[component.urn]
    preview_logs = [m for _, urn, m in engine.logs if urn == component.urn]
    assert any("would" in m or "stage" in m.lower() for m in preview_logs), preview_logs

    update = _both(example, cluster, dry_run=False)
    manifests = _assert_same(*update)
    cluster.apply(manifests)
    cluster.settle()
    _assert_same(*_both(example, cluster, dry_run=False))  # the next `pulumi up`, objects live


def _broken_copy(tmp_path, example: str, manifest: str, old: str, new: str):
    copy = tmp_path / example
    shutil.copytree(REPO_ROOT / "examples" / example, copy)
    (copy / manifest).write_text((copy / manifest).read_text().replace(old, new, 1))
    return copy


@pytest.mark.parametrize(
    ("example", "manifest", "old", "new", "field"),
    [
        ("quickstart", "lws.yaml", "replicas: 4", "replicas: -4", "spec.replicas"),
        ("modelserving-pd", "ms.yaml", "replicas: 4", "replicas: -4", "spec.replicas"),
        ("disaggregated-pd", "ds.yaml", "replicas: 6", "replicas: -6", "spec.roles[0].spec.replicas"),
    ],
)
def test_a_bad_input_is_one_clear_error_under_the_language_host(tmp_path, example, manifest, old, new, field):
    """The exec script logs a RunError's message alone and any other exception with its Python
    traceback: a component's SpecError is also a RunError, so ``pulumi up`` shows the message."""
    program = _broken_copy(tmp_path, example, manifest, old, new)
    with TestEngine(project=_project(example), stack=STACK, dry_run=True) as engine:
        code = exit_code_like_language_host(program, engine, SimCluster(), RecordingActuator())
    with pytest.raises(SpecError) as python:
        run_program(str(program / "__main__.py"), SimCluster(), RecordingActuator(), preview=True)
    errors = [m for severity, _, m in engine.logs if severity == engine_pb2.ERROR]
    assert code == 1 and errors == [str(python.value)]
    assert f"  - {field}" in errors[0] and "Traceback" not in errors[0]
    assert [r.type for r in engine.resources.values()] == ["pulumi:pulumi:Stack"]  # nothing of the workload


def test_no_cluster_is_one_clear_error_under_the_language_host(monkeypatch):
    monkeypatch.setenv("KUBECONFIG", "/nonexistent/kubeconfig")
    monkeypatch.setenv("HOME", "/nonexistent")
    with TestEngine(project=_project("quickstart"), stack=STACK, dry_run=True) as engine:
        code = exit_code_like_language_host(REPO_ROOT / "examples" / "quickstart", engine, None, None)
    errors = [m for severity, _, m in engine.logs if severity == engine_pb2.ERROR]
    assert code == 1 and len(errors) == 1
    assert "pulumi-lws has no cluster to observe" in errors[0] and "Traceback" not in errors[0]
    assert errors[0].startswith("leaderworkerset-sample: ") and "\n" not in errors[0].split(". For tests")[0]
