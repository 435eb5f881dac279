"""``pulumi-lws plan`` of a ModelServing rollout longer than the stages shown one by one completes
(exit 0): its prediction is shown in waves and its last row is the completed rollout; a walk cut
at its work bound says so."""

from __future__ import annotations

import pathlib
import sys

import pytest
import yaml

from pulumi_lws.cli import main
from pulumi_lws.modelserving.rollout import waves

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench"))
from bench_ms import fleet_manifest


def change(tmp_path: pathlib.Path, groups: int) -> tuple[str, str]:
    paths = []
    for tag, image in (("old", "vllm/vllm-openai:v1"), ("new", "vllm/vllm-openai:v2")):
        doc = fleet_manifest(groups, image)
        doc["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"]["maxUnavailable"] = 1
        path = tmp_path / f"{tag}.yaml"
        path.write_text(yaml.safe_dump(doc), encoding="utf-8")
        paths.append(str(path))
    return paths[0], paths[1]


def plan_rows(capsys: pytest.CaptureFixture[str], old: str, new: str) -> tuple[int, list[str], str]:
    code = main(["plan", old, new])
    out = capsys.readouterr().out
    return code, [line for line in out.splitlines() if line.startswith("Stage ")], out


def test_plan_of_a_rollout_longer_than_the_shown_stages_completes(capsys, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(waves, "MAX_PREDICTED", 20)
    monkeypatch.setattr(waves, "MAX_WAVES", 8)
    code, rows, out = plan_rows(capsys, *change(tmp_path, 40))
    assert code == 0, out
    assert "blocked" not in out and "prediction stopped" not in out
    assert "warning: prediction in waves: 40 stages exceed the 20 shown one by one" in out
    cells = rows[-1].split()[3:43]  # every group updated and ready, however the table draws it
    assert len(set(cells)) == 1 and cells[0] not in {"o", "u"} and "rolling update complete" in rows[-1]
    assert len(rows) <= waves.MAX_WAVES + 3  # the header, OLD, the planned stage, the waves


def test_plan_of_a_walk_cut_at_its_work_bound_says_so(capsys, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(waves, "MAX_PREDICTED", 10)
    monkeypatch.setattr(waves, "MAX_WAVES", 8)
    monkeypatch.setattr(waves, "MAX_WORK", 42 * 20)  # 42 groups, not 40: plan may reuse the run above
    code, _, out = plan_rows(capsys, *change(tmp_path, 42))
    assert code == 1
    assert "prediction stopped after 20 stages" in out and "prediction in waves: 20 stages" in out
    assert "blocked: the prediction ends before the rollout completes" in out
