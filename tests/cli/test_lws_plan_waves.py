"""``pulumi-lws plan`` of a LeaderWorkerSet at maxUnavailable 1 / maxSurge 0 whose waves outnumber
the stages shown one by one completes (exit 0): its rows are at most MAX_WAVES waves, the last the
completed rollout; a walk cut at MAX_WORK still says so (exit 1)."""

from __future__ import annotations

import pathlib

import pytest
import yaml

from pulumi_lws.cli import main
from pulumi_lws.lws.rollout.ordinal import predict


def change(tmp_path: pathlib.Path, groups: int) -> tuple[str, str]:
    paths = []
    for tag in ("v1", "v2"):
        doc = {
            "apiVersion": "leaderworkerset.x-k8s.io/v1",
            "kind": "LeaderWorkerSet",
            "metadata": {"name": "fleet", "namespace": "bench"},
            "spec": {
                "replicas": groups,
                "rolloutStrategy": {
                    "type": "RollingUpdate",
                    "rollingUpdateConfiguration": {"maxUnavailable": 1, "maxSurge": 0},
                },
                "leaderWorkerTemplate": {
                    "size": 2,
                    "workerTemplate": {"spec": {"containers": [{"name": "vllm", "image": f"vllm/vllm-openai:{tag}"}]}},
                },
            },
        }
        path = tmp_path / f"{tag}.yaml"
        path.write_text(yaml.safe_dump(doc), encoding="utf-8")
        paths.append(str(path))
    return paths[0], paths[1]


def plan_rows(capsys, old: str, new: str) -> tuple[int, list[str], str]:
    code = main(["plan", "--ascii", old, new])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("Stage ")]
    return code, rows[1:], out  # the header aside


def test_plan_of_more_waves_than_shown_one_by_one_completes_in_waves(capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(predict, "MAX_MODEL_STEPS", 10)
    monkeypatch.setattr(predict, "MAX_WAVES", 6)
    code, rows, out = plan_rows(capsys, *change(tmp_path, 40))
    assert code == 0, out
    assert "blocked" not in out
    assert "warning: prediction in waves: 40 groups to roll exceed the group-by-group walk's 10 steps" in out
    assert "warning: 40 predicted stages exceed the 10 shown one by one: each one shown groups up to 7" in out
    assert len(rows) <= 6 + 2  # OLD, the planned stage, the waves
    assert "rollout complete" in rows[-1] and " 0 " in rows[-1]
    assert "7 stages: 7 groups ready" in rows[2]


def test_plan_of_a_walk_cut_at_the_work_bound_still_says_so(capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(predict, "MAX_MODEL_STEPS", 10)
    monkeypatch.setattr(predict, "MAX_WORK", 20 * 40)  # ~20 waves of 40 groups
    code, rows, out = plan_rows(capsys, *change(tmp_path, 40))
    assert code == 1 and "blocked: prediction cut short" in out
    assert len(rows) == 1 + 10  # OLD and the first MAX_MODEL_STEPS stages, as before the bound
    assert "prediction in waves" not in out


@pytest.mark.slow
def test_plan_of_1000_groups_at_max_unavailable_1_completes(capsys, tmp_path) -> None:
    code, rows, out = plan_rows(capsys, *change(tmp_path, 1000))
    assert code == 0, out
    assert len(rows) <= predict.MAX_WAVES + 2 and "rollout complete" in rows[-1]
