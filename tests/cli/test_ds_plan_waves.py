"""``pulumi-lws plan`` of a DisaggregatedSet rollout longer than the stages shown one by one
completes (exit 0): its prediction is shown in waves and its last row is the completed rollout."""

from __future__ import annotations

import copy
import pathlib
import sys

import pytest
import yaml

from pulumi_lws.cli import main
from pulumi_lws.disaggregatedset.rollout import predict

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench"))
from bench_ds import fleet_manifest


def change(tmp_path: pathlib.Path, groups: int) -> tuple[str, str]:
    paths = []
    for tag, image in (("old", "vllm/vllm-openai:v1"), ("new", "vllm/vllm-openai:v2")):
        path = tmp_path / f"{tag}.yaml"
        path.write_text(yaml.safe_dump(copy.deepcopy(fleet_manifest(2, groups, image))), encoding="utf-8")
        paths.append(str(path))
    return paths[0], paths[1]


def plan_rows(capsys, old: str, new: str) -> tuple[int, list[str], str]:
    code = main(["plan", old, new])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("Stage ")]
    return code, rows, out


def check(code: int, rows: list[str], out: str, groups: int) -> None:
    assert code == 0, out
    assert "blocked" not in out
    assert "prediction in waves:" in out
    assert f"0|{groups}" in rows[-1].split()[3] and "rolling update complete" in rows[-1]
    assert len(rows) <= predict.MAX_WAVES + 3  # OLD, the planned stage, the waves


def test_plan_of_a_rollout_longer_than_the_shown_stages_completes(capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(predict, "MAX_PREDICTED", 20)
    monkeypatch.setattr(predict, "MAX_WAVES", 8)
    check(*plan_rows(capsys, *change(tmp_path, 40)), groups=40)


@pytest.mark.slow
def test_plan_of_1000_groups_per_role_at_the_default_budget_completes(capsys, tmp_path) -> None:
    check(*plan_rows(capsys, *change(tmp_path, 1000)), groups=1000)
