"""``pulumi-lws preview | up | destroy [DIR]`` on a user's own program (tests/cli/stack_project):
a Namespace, a ConfigMap holding the image and a Secret holding a token feed a ModelServing and a
DisaggregatedSet (nested in the user's own component) and a LeaderWorkerSet through Outputs."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from pulumi_lws.cli import main
from pulumi_lws.sim.cluster.persist import dump_cluster
from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.sim.driver.pulumi_engine import run_program

PROJECT = pathlib.Path(__file__).resolve().parent / "stack_project"
CONFIG = {"inference:namespace": "serving", "inference:image": "vllm/vllm-openai:v0.8.0", "inference:replicas": "2"}
COMPONENTS = ("lws:index:ModelServing (chat)", "lws:index:DisaggregatedSet (pd)", "lws:index:LeaderWorkerSet (embed)")


@pytest.fixture
def project(tmp_path) -> pathlib.Path:
    target = tmp_path / "inference"
    shutil.copytree(PROJECT, target, ignore=shutil.ignore_patterns(".pulumi-lws", "__pycache__"))
    return target


def cli(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_preview_of_a_fresh_stack_shows_the_tree_diagnostics_outputs_and_counts_and_writes_nothing(project, capsys):
    code, out, err = cli(capsys, "preview", str(project))
    assert code == 0, err
    assert out.startswith("Previewing update (dev) on the simulated cluster at t=0s:")
    assert " +  pulumi:pulumi:Stack " in out and "inference-dev" in out
    lines = out.splitlines()
    tree = {line.split()[1].lstrip("├└─│ "): line for line in lines if line.startswith(" +  ")}
    assert "├─ acme:serving:Inference" in out  # the user's component, its workloads nested under it
    assert "│  ├─ lws:index:ModelServing" in out and "│  └─ lws:index:DisaggregatedSet" in out
    assert "└─ lws:index:LeaderWorkerSet" in out
    assert all(line.rstrip().endswith("create") or "message" in line for line in tree.values())
    for header in COMPONENTS:  # each component's stage summary and table under it
        block = out.split(f"  {header}:\n", 1)[1].split("\n\n", 1)[0]
        assert "[in progress]" in block and "Stage 1" in block and "now" in block
    assert "Resources:\n    + 22 to create\n" in out
    assert "  + token        : [secret]" in out and "hf_dev_token" not in out
    assert not (project / ".pulumi-lws").exists()


def test_two_ups_equal_two_reconciles_in_one_process(project, capsys):
    """The persisted cluster is the one a single process would have after the same two updates."""
    for _ in range(2):
        code, out, err = cli(capsys, "up", str(project), "--wait", "10")
        assert code == 0, err
    saved = json.loads((project / ".pulumi-lws" / "dev" / "cluster.json").read_text())

    cluster = SimCluster()
    for _ in range(2):
        result = run_program(project / "__main__.py", cluster, cluster, stack="dev", project="inference", config=CONFIG)
        cluster.apply(result.manifests, stack_id="dev", dependencies=result.dependencies)
        cluster.step(cluster.clock.now + 10)
    assert saved == json.loads(json.dumps(dump_cluster(cluster)))
    assert "waited 10s of simulated time: t=20s" in out
    assert "Status" in out and "22 unchanged" in out.split("Resources:")[1]  # the second up: against the first


def test_consecutive_ups_advance_a_rollout_and_preview_diffs_against_the_last_registered_state(project, capsys):
    assert cli(capsys, "up", str(project), "--until-complete")[0] == 0
    code, out, _ = cli(capsys, "preview", str(project), "--diff", "--config", "image=vllm/vllm-openai:v0.9.0")
    assert code == 0
    configmap = out.split("~ kubernetes:core/v1:ConfigMap: (update)\n", 1)[1].split("\n~ ", 1)[0]
    assert '~ image: "vllm/vllm-openai:v0.8.0" => "vllm/vllm-openai:v0.9.0"' in configmap
    assert "+ kubernetes:apps/v1:ControllerRevision: (create)" in out  # the new revision of each workload
    code, out, _ = cli(capsys, "up", str(project), "-c", "image=vllm/vllm-openai:v0.9.0", "--until-complete")
    assert code == 0
    updates = [line for line in out.splitlines() if line.startswith("update ")]
    assert len(updates) >= 3 and updates[-1].endswith("every component's rollout is complete")
    assert all("in progress" in line for line in updates[:-1])
    for name in ("chat", "pd", "embed"):
        assert f"{name}" in out and "[complete]" in out.rsplit("Updating (dev)", 1)[1]
    code, out, _ = cli(capsys, "preview", str(project), "-c", "image=vllm/vllm-openai:v0.9.0")
    assert "Resources:\n    " in out and "to create" not in out and "to update" not in out  # converged: no change


def test_secret_config_stays_secret_and_a_changed_secret_is_an_update(project, capsys):
    assert cli(capsys, "up", str(project))[0] == 0
    code, out, _ = cli(capsys, "preview", str(project), "--diff", "--config-secret", "token=hf_rotated_value")
    assert code == 0
    assert "hf_rotated_value" not in out
    secret = out.split("~ kubernetes:core/v1:Secret: (update)\n", 1)[1].split("\n+ ", 1)[0]
    assert "~ stringData: [secret] => [secret]" in secret and "hf_dev_token" not in secret
    state = (project / ".pulumi-lws" / "dev" / "stack.json").read_text()
    assert "hf_dev_token" not in state and '"[secret]"' in state


def test_destroy_and_reset_clear_the_stack_state(project, capsys):
    assert cli(capsys, "up", str(project))[0] == 0
    assert (project / ".pulumi-lws" / ".gitignore").read_text().splitlines()[-1] == "*"
    code, out, _ = cli(capsys, "up", str(project), "--reset")
    assert code == 0 and "Resources:\n    + 22 created" in out  # from an empty cluster again
    code, out, _ = cli(capsys, "destroy", str(project))
    assert code == 0 and "removed the simulated cluster" in out and "22 resources" in out
    assert not (project / ".pulumi-lws" / "dev").exists()
    assert "nothing to destroy" in cli(capsys, "destroy", str(project))[1]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["preview", "/nonexistent-dir"], "no Pulumi.yaml"),
        (["up", ".", "--config", "novalue"], "expected key=value"),
    ],
)
def test_bad_project_input_exits_2_with_one_line(argv, message, capsys, project, monkeypatch):
    monkeypatch.chdir(project)
    code, _, err = cli(capsys, *argv)
    assert code == 2 and message in err and err.count("\n") == 1


def test_ascii_draws_the_tree_and_every_stage_table_without_box_drawing_or_emoji(project, capsys):
    code, out, err = cli(capsys, "preview", str(project), "--ascii")
    assert code == 0, err
    assert "|- acme:serving:Inference" in out and "|  |- lws:index:ModelServing" in out
    assert "`- lws:index:LeaderWorkerSet" in out
    assert out.isascii(), sorted({c for c in out if not c.isascii()})
    assert "legend: U updated, ready; u updated, not ready" in out  # the components drew with ASCII marks
    code, out, _ = cli(capsys, "preview", str(project))  # the default is unchanged afterwards
    assert "├─ acme:serving:Inference" in out and "⏳" in out


def test_a_terminal_that_cannot_print_emoji_gets_ascii_not_a_crash(project):
    root = pathlib.Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-m", "pulumi_lws.cli", "preview", str(project)],
        capture_output=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(root), "PYTHONIOENCODING": "ascii"},
    )
    assert done.returncode == 0, done.stderr
    assert b"|- lws:index:LeaderWorkerSet" in done.stdout or b"`- lws:index:LeaderWorkerSet" in done.stdout
    assert done.stdout.isascii()
