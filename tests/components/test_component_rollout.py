"""`pulumi-lws rollout`: the loop over a fake stack, and the missing-CLI exit."""

from __future__ import annotations

import shutil

from pulumi_lws.cli import main
from pulumi_lws.cli.rollout import drive, lws_outputs


class FakeStack:
    def __init__(self, outputs):
        self.outputs = list(outputs)
        self.ups = 0

    def up(self):
        self.ups += 1
        return self.outputs.pop(0)


def _out(partition, groups, complete=False, blocker=None):
    return {
        "stage": {"replicas": 4, "partition": partition, "groups": groups, "case": "3", "complete": complete},
        "blocker": blocker,
        "leaderName": "x",
    }


def test_drive_until_complete():
    stack = FakeStack([_out(4, "oooo"), _out(2, "oouu"), _out(0, "uuUU"), _out(0, "UUUU", complete=True)])
    lines: list[str] = []
    result = drive(stack, interval=0, echo=lines.append, sleep=lambda s: None)
    assert result.complete and stack.ups == 4 and len(result.stages) == 4
    assert (
        lines[0].startswith("stage 1 workload:") and "groups oooo" in lines[0]
    )  # format: tests/cli/test_rollout_driver.py


def test_drive_stops_on_persistent_blocker():
    stack = FakeStack([_out(2, "oouu", blocker="B: stuck")] * 5)
    result = drive(stack, patience=3, echo=lambda s: None, sleep=lambda s: None)
    assert not result.complete and result.blocker == "B: stuck" and stack.ups == 3


def test_drive_gives_up_after_max_stages_and_when_no_lws_output():
    result = drive(FakeStack([_out(2, "oouu")] * 3), max_stages=3, echo=lambda s: None, sleep=lambda s: None)
    assert not result.complete and "3 stages" in result.reason
    assert not drive(FakeStack([{"other": 1}]), echo=lambda s: None, sleep=lambda s: None).complete


def test_nested_lws_outputs_are_found():
    assert (
        len(lws_outputs({"a": {"stage": {"complete": True}}, "b": {"stage": {"complete": False}, "blocker": None}}))
        == 2
    )


def test_missing_cli_exits_2(monkeypatch, capsys):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert main(["rollout", "--stack", "dev", "--cwd", "."]) == 2
    assert "Pulumi CLI" in capsys.readouterr().err
