"""Issue 24 item 3: the simulator's ceiling is a rollout's; a scale-down has its own invariant
(never below the new replicas' availability floor, never adding a group) and ends exit 0; a
rollout held at its ``partition`` as asked ends exit 0, "held at partition N as specified"."""

from __future__ import annotations

import copy
import subprocess
import sys

import pytest
import yaml
from fault_helpers import faulty_kubelet
from support.ds_helpers import ds_manifest
from support.ds_helpers import role as ds_role
from support.ds_helpers import scenario as ds_scenario
from support.harness import inline_scenario
from support.ms_helpers import ms_manifest, role, with_image

from pulumi_lws.core.contract.trace import TraceRow
from pulumi_lws.core.contract.workload import Budgets
from pulumi_lws.sim.driver.runner import _Budget, simulate


def _lws(image: str = "img:1", replicas: int = 4, partition: int = 0, mu=1) -> dict:
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "s", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "rolloutStrategy": {
                "type": "RollingUpdate",
                "rollingUpdateConfiguration": {"maxUnavailable": mu, "maxSurge": 0, "partition": partition},
            },
            "leaderWorkerTemplate": {
                "size": 2,
                "workerTemplate": {"spec": {"containers": [{"name": "c", "image": image}]}},
            },
        },
    }


def _ms(replicas: int = 4, partition=None, image: str = "img:1") -> dict:
    return with_image(ms_manifest(replicas=replicas, roles=[role("p", workers=1)], partition=partition), image)


def _down(doc: dict, replicas: int) -> dict:
    out = copy.deepcopy(doc)
    out["spec"]["replicas"] = replicas
    return out


@pytest.mark.parametrize("api", ["lws", "ms", "ds"])
def test_a_valid_scale_down_exits_0_within_its_own_invariant(api: str) -> None:
    if api == "ds":
        old = ds_manifest(ds_role("prefill", replicas=4), ds_role("decode", replicas=2))
        sc = ds_scenario(old, ds_manifest(ds_role("prefill", replicas=2), ds_role("decode", replicas=1)))
    else:
        old = _lws() if api == "lws" else _ms()
        sc = inline_scenario(old, _down(old, 2), name="down")
    result = simulate(sc)
    assert result.exit_code == 0, result.reason
    assert not result.trace.violations and result.trace.converged


def test_scale_down_invariants_unit() -> None:
    def row(t: float, live: int, available: int) -> TraceRow:
        return TraceRow(time=t, replicas=2, partition=None, groups=(), live=live, available=available)

    b = _Budget()
    b.use(Budgets(4, 0, 1))
    assert b.check(row(0, 4, 4)) == []
    b.use(Budgets(2, 0, 0))  # scale-down 4 -> 2, maxUnavailable 0: floor 2, armed once 2 are available
    assert b.check(row(1, 4, 4)) == []  # the extra groups are still there: not a rollout's ceiling
    assert b.check(row(2, 3, 3)) == []
    assert b.check(row(3, 4, 3)) == [
        "t=3: 4 live groups > 3 live when the scale-down to 2 began (a scale-down never adds groups)"
    ]
    assert b.check(row(4, 2, 1)) == ["t=4: the scale-down's floor: 1 available groups < replicas 2 - maxUnavailable 0"]
    assert b.check(row(5, 3, 2)) == [
        "t=5: 3 live groups > replicas 2 + maxSurge 0"
    ]  # drained: a rollout's ceiling again


@pytest.mark.parametrize("api", ["lws", "ms"])
def test_a_rollout_held_at_its_partition_exits_0(api: str) -> None:
    old = _lws() if api == "lws" else _ms()
    new = _lws("img:2", partition=2) if api == "lws" else _ms(partition=2, image="img:2")
    result = simulate(inline_scenario(old, new, name="held", max_time=200))
    assert result.exit_code == 0, result.reason
    assert result.trace.held_at_partition == 2 and not result.trace.converged
    assert result.end_time < 200  # stops once held, like a converged run
    assert result.trace.to_json()["heldAtPartition"] == 2


def test_a_partition_whose_groups_never_become_ready_is_not_held() -> None:
    result = simulate(
        inline_scenario(_lws(), _lws("img:bad", partition=2), name="bad", max_time=60, kubelet=faulty_kubelet("probe"))
    )
    assert result.exit_code == 1 and result.trace.held_at_partition is None


def test_cli_says_held_at_partition(tmp_path) -> None:
    old, new = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old.write_text(yaml.safe_dump(_ms()))
    new.write_text(yaml.safe_dump(_ms(partition=2, image="img:2")))
    out = subprocess.run(
        [sys.executable, "-m", "pulumi_lws.cli", "simulate", "--from", str(old), "--to", str(new)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert "held at partition 2 as specified" in out.stdout
    down = tmp_path / "down.yaml"
    down.write_text(yaml.safe_dump(_down(_ms(), 2)))
    out = subprocess.run(
        [sys.executable, "-m", "pulumi_lws.cli", "simulate", "--from", str(old), "--to", str(down)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr + out.stdout
