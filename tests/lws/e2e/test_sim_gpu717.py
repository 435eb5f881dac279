"""Upstream #717 in the simulator (examples/gpu-717): halving per-group GPUs while doubling replicas
on a full cluster deadlocks with the upstream order (ScaleFirst) and converges with RolloutFirst."""

from __future__ import annotations

import pathlib
import shutil

import yaml
from conftest import REPO_ROOT

from pulumi_lws.cli import main
from pulumi_lws.lws.rollout.budget import DEADLOCK_717, REMEDIES_717
from pulumi_lws.sim.driver.runner import simulate
from pulumi_lws.sim.driver.scenario import load_scenario

EXAMPLE = REPO_ROOT / "examples" / "gpu-717"
GPU = "nvidia.com/gpu"


def gpus(pod: dict) -> int:
    total = 0
    for c in pod["spec"].get("containers") or []:
        res = c.get("resources") or {}
        total += int((res.get("requests") or res.get("limits") or {}).get(GPU, 0))
    return total


class GpuMeter:
    """Per tick: GPUs held by pods bound to a node, and GPUs requested by every pod that exists
    (pending, running or terminating)."""

    def __init__(self) -> None:
        self.bound: list[int] = []
        self.requested: list[int] = []

    def __call__(self, cluster, t: float) -> None:
        pods = [p for p in cluster.list("Pod") if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
        self.bound.append(sum(gpus(p) for p in pods if p["spec"].get("nodeName")))
        self.requested.append(sum(gpus(p) for p in pods))


def run(path: pathlib.Path, engine: str | None = None):
    meter = GpuMeter()
    return simulate(load_scenario(path), engine, probe=meter), meter


def test_scale_first_ends_blocked_with_the_717_blocker_and_remedies(capsys):
    result, meter = run(EXAMPLE / "scenario-scalefirst.yaml")
    assert result.exit_code == 1 and not result.trace.converged and not result.trace.violations
    assert result.trace.blocked.startswith(f"{DEADLOCK_717}: ")
    assert result.final_blocker.code == DEADLOCK_717 and result.final_blocker.remedies == REMEDIES_717
    assert max(meter.bound) <= 8 and max(meter.requested) == 12  # the added 4-GPU group pends beside the 8-GPU one
    assert result.trace.rows[-1].groups[1].detail == "unschedulable"

    assert main(["simulate", str(EXAMPLE / "scenario-scalefirst.yaml")]) == 1
    captured = capsys.readouterr()
    assert f"blocked: {DEADLOCK_717}: group 1 on the new revision is unschedulable" in captured.out
    assert "remedies:" in captured.out and "pulumi-lws.io/update-order: RolloutFirst" in captured.out
    assert "rollout ended blocked" in captured.err


def test_rollout_first_converges_within_the_node(capsys):
    result, meter = run(EXAMPLE / "scenario-rolloutfirst.yaml")
    assert result.exit_code == 0 and result.trace.converged and not result.trace.violations
    assert max(meter.requested) <= 8 and max(meter.bound) <= 8
    assert [(r.replicas, r.partition) for r in result.trace.rows][:2] == [(1, 0), (1, 0)]
    assert (result.trace.rows[-1].replicas, len(result.trace.rows[-1].groups)) == (2, 2)
    assert "RolloutFirst: partition 1→0" in result.trace.rows[1].note
    assert main(["simulate", str(EXAMPLE / "scenario-rolloutfirst.yaml")]) == 0
    assert "converged" in capsys.readouterr().out


def big_variant(tmp_path: pathlib.Path, order: str | None) -> pathlib.Path:
    """4 x 8 GPU -> 8 x 4 GPU on 4 nodes x 8 GPUs (32 in total), pure engine on a copy of the example."""
    proj = tmp_path / "gpu"
    shutil.copytree(EXAMPLE, proj)
    doc = yaml.safe_load((proj / "lws.yaml").read_text())
    doc["spec"]["replicas"] = 4
    (proj / "lws.yaml").write_text(yaml.safe_dump(doc))
    name = "scenario-rolloutfirst.yaml" if order == "RolloutFirst" else "scenario-scalefirst.yaml"
    sc = yaml.safe_load((proj / name).read_text())
    sc["engine"] = "pure"
    sc["nodes"] = [{"name": "gpu", "count": 4, "capacity": {GPU: 8}}]
    sc["updates"][0]["patch"]["spec"]["replicas"] = 8
    sc["stop"] = {"maxTime": 120 if order else 40}
    (proj / name).write_text(yaml.safe_dump(sc))
    return proj / name


def test_four_by_eight_to_eight_by_four_scale_first_deadlocks(tmp_path):
    result, meter = run(big_variant(tmp_path, None))
    assert result.exit_code == 1 and result.final_blocker.code == DEADLOCK_717
    assert max(meter.bound) <= 32


def test_four_by_eight_to_eight_by_four_rollout_first(tmp_path):
    result, meter = run(big_variant(tmp_path, "RolloutFirst"))
    assert result.exit_code == 0 and not result.trace.violations
    assert max(meter.requested) <= 32
    stages = []
    for s in result.stages:
        if not stages or stages[-1] != (s.partition, s.replicas):
            stages.append((s.partition, s.replicas))
    assert stages == [(3, 4), (2, 4), (1, 4), (0, 4), (0, 8)]  # docs/rollout.md §5
