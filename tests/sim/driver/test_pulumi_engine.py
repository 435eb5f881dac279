"""run_program: real Pulumi programs (the quickstart example, callables) under the mock engine."""

from __future__ import annotations

import pytest
from conftest import REPO_ROOT
from support.fakes_component import FakeActuator, FakeObserver, fake_reconcile

from pulumi_lws.cli.stack.project import load_project
from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.lws import labels as L
from pulumi_lws.lws import reconcile as reconcile_module
from pulumi_lws.sim.driver.pulumi_engine import run_program

ROOT = REPO_ROOT
QUICKSTART = ROOT / "examples" / "quickstart"


@pytest.fixture
def fake_plan(monkeypatch):
    monkeypatch.setattr(reconcile_module, "reconcile", fake_reconcile)


def test_quickstart_example_registers_the_stage_objects(fake_plan):
    observer, actuator = FakeObserver(), FakeActuator()
    result = run_program(QUICKSTART / "__main__.py", observer, actuator)

    assert observer.calls == [("default", "leaderworkerset-sample", False)]
    kinds = sorted(m["kind"] for m in result.manifests)
    assert kinds == ["ControllerRevision", "PodGroup", "Service", "StatefulSet", "StatefulSet"]
    leader = next(
        m for m in result.manifests if m["kind"] == "StatefulSet" and m["metadata"]["name"] == "leaderworkerset-sample"
    )
    assert leader["apiVersion"] == "apps/v1" and leader["spec"]["replicas"] == 4  # ints back, replicas from lws.yaml
    assert isinstance(leader["spec"]["replicas"], int)
    assert [s.target_revision for s in result.stages] == ["rev2"]
    assert result.outputs["leaderName"] == "leaderworkerset-sample"
    assert result.outputs["stage"]["partition"] == 1 and result.outputs["blocker"].startswith("GroupNotReady")
    assert len(actuator.calls) == 1


def test_preview_executes_no_action_and_root_project_runs_the_example(fake_plan):
    program = load_project(ROOT).program  # Pulumi.yaml's main, as the CLI resolves it
    assert program == QUICKSTART / "__main__.py"
    actuator = FakeActuator()
    result = run_program(program, FakeObserver(), actuator, preview=True)
    assert actuator.calls == [] and result.outputs["actions"] == [
        f"ungate Pod/leaderworkerset-sample-1 (gate={L.GROUP_REPLACEMENT_GATE})"
    ]


def test_repeated_runs_are_independent(fake_plan):
    import pulumi

    from pulumi_lws.components.leaderworkerset import LeaderWorkerSet

    def program(name):
        def run():
            lws = LeaderWorkerSet(
                name,
                {"replicas": 2, "size": 1, "worker_template": {"spec": {"containers": [{"name": "a", "image": "b"}]}}},
            )
            pulumi.export("name", lws.leader_name)

        return run

    names = [run_program(program(f"lws-{i}"), FakeObserver(), FakeActuator()).outputs for i in range(5)]
    assert names == [{"name": f"lws-{i}"} for i in range(5)]
    last = run_program(program("x"), FakeObserver(), FakeActuator())
    assert {m["metadata"]["name"] for m in last.manifests} == {"x", "x-1", "x-rev2-2", "x-0"}


def test_program_errors_propagate(fake_plan):
    from pulumi_lws.components.leaderworkerset import LeaderWorkerSet

    with pytest.raises(SpecError):
        run_program(lambda: LeaderWorkerSet("bad", {"replicas": "x"}), FakeObserver(), FakeActuator())


def test_runs_leave_no_event_loop_open_for_the_collector(tmp_path):
    """Every loop a run made is closed, the worker threads' too (pulumi's ``_ensure_event_loop``):
    an unclosed loop collected with its self-pipe socket printed ``Exception ignored in
    BaseEventLoop.__del__ ... Invalid file descriptor: -1`` at exit in some runs."""
    import os
    import subprocess
    import sys

    script = tmp_path / "runs.py"
    script.write_text(
        "import pulumi_kubernetes as k8s\n"
        "from pulumi_lws.sim.cluster.simcluster import SimCluster\n"
        "from pulumi_lws.sim.driver.pulumi_engine import run_program\n"
        "def program():\n"
        "    for i in range(8):\n"
        "        k8s.core.v1.ConfigMap(f'c{i}', metadata={'name': f'c{i}'}, data={'k': 'v'})\n"
        "cluster = SimCluster()\n"
        "for _ in range(3):\n"
        "    assert len(run_program(program, cluster, cluster).manifests) == 8\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-W", "always::ResourceWarning", str(script)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "unclosed event loop" not in done.stderr and "Exception ignored" not in done.stderr
