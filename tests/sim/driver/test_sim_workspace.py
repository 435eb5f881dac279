"""Program scenarios: the runner copies the program's directory into a scratch workspace and
scenario updates edit its files (JSON merge patch or full replace) before the next reconcile."""

from __future__ import annotations

import pathlib

import pytest
import yaml
from conftest import REPO_ROOT

from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.sim.driver.desired import DesiredSpec
from pulumi_lws.sim.driver.runner import Runner, simulate
from pulumi_lws.sim.driver.scenario import load_scenario
from pulumi_lws.sim.driver.workspace import Workspace

ROOT = REPO_ROOT
PROGRAM = """import pathlib, yaml
from pulumi_lws import LeaderWorkerSet
LeaderWorkerSet("small", {"manifest": yaml.safe_load((pathlib.Path(__file__).parent / "lws.yaml").read_text())})
"""


def lws_doc(image: str = "a:1", replicas: int = 2, **spec) -> dict:
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "small"},
        "spec": {
            "replicas": replicas,
            "leaderWorkerTemplate": {
                "size": 1,
                "workerTemplate": {"spec": {"containers": [{"name": "c", "image": image}]}},
            },
            **spec,
        },
    }


@pytest.fixture
def project(tmp_path: pathlib.Path) -> pathlib.Path:
    d = tmp_path / "proj"
    d.mkdir()
    (d / "__main__.py").write_text(PROGRAM)
    (d / "lws.yaml").write_text(yaml.safe_dump(lws_doc()))
    (d / "notes.yaml").write_text("a: 1\n")
    return d


def scenario(project: pathlib.Path, updates: list, **extra) -> pathlib.Path:
    data = {
        "name": "ws",
        "program": "__main__.py",
        "manifest": "lws.yaml",
        "start": "converged",
        "updates": updates,
        "reconcile": {"interval": 2},
        "kubelet": {"startSeconds": 0, "readySeconds": 1, "terminationGracePeriodSeconds": 0},
        "stop": {"maxTime": 60},
        **extra,
    }
    path = project / "scenario.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def images(result) -> set[str]:
    return {c["image"] for p in result.cluster.list("Pod") for c in p["spec"]["containers"]}


def test_workspace_copies_edits_and_cleans_up(project):
    ws = Workspace.for_program(project / "__main__.py")
    assert ws.program.read_text() == PROGRAM and ws.root != project
    ws.patch("lws.yaml", {"spec": {"replicas": 5, "leaderWorkerTemplate": {"size": None}}})
    doc = ws.read("lws.yaml")
    assert doc["spec"]["replicas"] == 5 and "size" not in doc["spec"]["leaderWorkerTemplate"]  # null deletes
    ws.write("notes.yaml", {"b": 2})
    assert ws.read("notes.yaml") == {"b": 2}
    assert yaml.safe_load((project / "lws.yaml").read_text()) == lws_doc()  # the original is untouched
    for bad in ("../lws.yaml", "/etc/passwd"):
        with pytest.raises(ValueError):
            ws.path(bad)
    root = ws.root
    ws.close()
    ws.close()  # idempotent
    assert not root.exists()


def test_file_patch_reaches_the_program_and_the_budgets(project):
    path = scenario(
        project,
        [
            {
                "at": 0,
                "file": "lws.yaml",
                "patch": {
                    "spec": {
                        "replicas": 3,
                        "leaderWorkerTemplate": {
                            "workerTemplate": {"spec": {"containers": [{"name": "c", "image": "a:2"}]}}
                        },
                    }
                },
            }
        ],
    )
    runner = Runner(load_scenario(path))
    root = runner.workspace.root
    result = runner.run()
    assert result.reason is None and result.engine == "pulumi"
    assert images(result) == {"a:2"} and len(result.cluster.list("Pod")) == 3
    assert runner.budget.budgets.replicas == 3  # the invariants read the edited workspace file
    assert result.trace.rows[0].note == "before the rolling update" and result.trace.rows[1].note.startswith(
        "lws.yaml patched"
    )
    assert not root.exists()  # the workspace is removed after the run


def test_file_replace_and_spec_patch_under_the_pure_engine(project):
    path = scenario(
        project,
        [
            {"at": 0, "file": "lws.yaml", "replace": lws_doc("b:1", replicas=1)},
            {"at": 10, "patch": {"spec": {"replicas": 2}}},
        ],
    )
    result = simulate(load_scenario(path), engine="pure")
    assert result.reason is None and images(result) == {"b:1"} and len(result.cluster.list("Pod")) == 2
    assert any(r.note.startswith("spec patched") for r in result.trace.rows)


def test_desired_spec_follows_edits_of_the_manifest_file_only(project):
    sc = load_scenario(
        scenario(
            project,
            [
                {"at": 0, "file": "notes.yaml", "patch": {"b": 1}},
                {"at": 1, "file": "./lws.yaml", "patch": {"spec": {"replicas": 4}}},
            ],
        )
    )
    with Workspace.for_program(sc.program) as ws:
        spec = DesiredSpec(sc, ws)
        assert spec.lws().replicas == 2
        assert spec.apply(sc.updates[0]) == "notes.yaml patched" and spec.lws().replicas == 2
        assert ws.read("notes.yaml") == {"a": 1, "b": 1}
        spec.apply(sc.updates[1])
        assert spec.lws().replicas == 4 and ws.read("lws.yaml")["spec"]["replicas"] == 4


@pytest.mark.parametrize(
    "update,message",
    [
        ({"at": 0, "file": "lws.yaml"}, "exactly one of patch or replace"),
        ({"at": 0, "file": "lws.yaml", "patch": {}, "replace": {}}, "exactly one of patch or replace"),
        ({"at": 0, "replace": {}}, "replace needs file:"),
        ({"at": 0, "file": "missing.yaml", "patch": {}}, "file not found in the program directory"),
        ({"at": 0, "file": "lws.yaml", "patch": [1]}, "expected a mapping"),
    ],
)
def test_update_validation(project, update, message):
    with pytest.raises(SpecError) as exc:
        load_scenario(scenario(project, [update]))
    assert message in str(exc.value)


def test_file_updates_need_a_program_and_spec_updates_need_the_manifest_file(project):
    inline = {"manifest": lws_doc(), "updates": [{"at": 0, "file": "lws.yaml", "patch": {}}]}
    with pytest.raises(SpecError, match="file updates need a program"):
        load_scenario(inline)
    path = scenario(project, [{"at": 0, "patch": {"spec": {"replicas": 3}}}], manifest=lws_doc())
    with pytest.raises(SpecError, match="needs manifest: <file the program reads>"):
        load_scenario(path)


def test_manifest_of_a_program_scenario_is_relative_to_the_program(tmp_path, project):
    elsewhere = tmp_path / "scenarios"
    elsewhere.mkdir()
    data = yaml.safe_load(scenario(project, []).read_text()) | {"program": "../proj/__main__.py"}
    path = elsewhere / "s.yaml"
    path.write_text(yaml.safe_dump(data))
    sc = load_scenario(path)
    assert sc.manifest_file == "lws.yaml" and sc.manifest["metadata"]["name"] == "small"


def test_quickstart_example_copies_cleanly():
    """The quickstart project itself is copyable (no caches or venvs carried along)."""
    src = ROOT / "examples" / "quickstart"
    with Workspace.for_program(src / "__main__.py") as ws:
        names = {p.name for p in ws.root.iterdir()}
    assert {"__main__.py", "lws.yaml", "Pulumi.yaml"} <= names and "__pycache__" not in names
