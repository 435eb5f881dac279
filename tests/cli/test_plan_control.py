"""``pulumi-lws plan`` with a paused NEW (every API): the prediction is the rollout as resumed, the
pause is a warning and the JSON ``control`` note; the progress deadline is reported as a setting."""

from __future__ import annotations

import json

import pytest
import yaml
from support import ds_helpers as DS
from support import ms_helpers as MS
from support.control_helpers import lws_manifest, paused, with_annotation

from pulumi_lws.cli import main
from pulumi_lws.core.features.control import PROGRESS_DEADLINE_ANNOTATION

PAIRS = {
    "LeaderWorkerSet": (lws_manifest(4, "img:1"), lws_manifest(4, "img:2")),
    "ModelServing": (
        MS.ms_manifest(replicas=3, roles=[MS.role("p", 1)]),
        MS.with_image(MS.ms_manifest(replicas=3, roles=[MS.role("p", 1)]), "img:2"),
    ),
    "DisaggregatedSet": (
        DS.ds_manifest(DS.role("prefill", 2), DS.role("decode", 1)),
        DS.with_image(DS.ds_manifest(DS.role("prefill", 2), DS.role("decode", 1)), "img:2"),
    ),
}


@pytest.mark.parametrize("kind", sorted(PAIRS))
def test_a_paused_new_predicts_the_resumed_rollout_and_says_paused(kind, tmp_path, capsys) -> None:
    old, new = PAIRS[kind]
    (tmp_path / "old.yaml").write_text(yaml.safe_dump(old))
    (tmp_path / "new.yaml").write_text(yaml.safe_dump(with_annotation(paused(new), PROGRESS_DEADLINE_ANNOTATION, "90")))
    (tmp_path / "plain.yaml").write_text(yaml.safe_dump(new))
    assert main(["plan", str(tmp_path / "old.yaml"), str(tmp_path / "plain.yaml"), "--format", "json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(["plan", str(tmp_path / "old.yaml"), str(tmp_path / "new.yaml"), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["control"] == {"paused": True, "progressDeadlineSeconds": 90.0}
    assert plain["control"] == {"paused": False, "progressDeadlineSeconds": 600.0}
    assert data["rows"] == plain["rows"] and any("paused" in w for w in data["warnings"])
    assert main(["plan", str(tmp_path / "old.yaml"), str(tmp_path / "new.yaml")]) == 0
    assert "warning: paused (pulumi-lws.io/paused)" in capsys.readouterr().out
