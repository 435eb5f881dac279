"""The CLI knows no API: its help words and the flags it refuses come from the registered APIs'
facts (``Workload.words``, ``Workload.arguments``, ``Workload.gang``; pulumi_lws/cli/apis.py)."""

from __future__ import annotations

import pytest
from conftest import REPO_ROOT

from pulumi_lws.cli import build_parser, main
from pulumi_lws.cli.apis import kinds, kinds_taking
from pulumi_lws.workloads import option_refused, registered, workload_for

EXAMPLES = {
    "LeaderWorkerSet": "quickstart/lws.yaml",
    "ModelServing": "modelserving-pd/ms.yaml",
    "DisaggregatedSet": "disaggregated-pd/ds.yaml",
}


def help_of(capsys, *argv: str) -> str:
    assert main([*argv, "--help"]) == 0
    return " ".join(capsys.readouterr().out.split())  # argparse wraps lines


def test_the_top_level_help_lists_every_registered_api_with_its_description(capsys):
    text = help_of(capsys)
    for kind, workload in registered().items():
        assert kind in text and " ".join(workload.words.description.split()) in text


@pytest.mark.parametrize("command", ["render", "plan", "simulate"])
def test_each_command_names_every_registered_api(capsys, command):
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    summary = next(c.help for c in sub._choices_actions if c.dest == command)
    text = f"{summary} {help_of(capsys, command)}"
    assert all(kind in text for kind in registered()), text
    assert kinds() in text or command == "simulate"


def test_update_order_is_taken_by_the_apis_whose_arguments_say_so():
    assert (
        kinds_taking("update_order")
        == [k for k, w in registered().items() if "update_order" in w.arguments.option_names]
        == ["LeaderWorkerSet"]
    )
    assert option_refused(workload_for("LeaderWorkerSet"), "update_order", "--update-order") is None
    assert option_refused(workload_for("ModelServing"), "update_order", "--update-order") == (
        "--update-order does not apply to a ModelServing (only LeaderWorkerSet takes it)"
    )


@pytest.mark.parametrize("kind", ["ModelServing", "DisaggregatedSet"])
@pytest.mark.parametrize("command", ["plan", "simulate"])
def test_update_order_is_refused_where_it_means_nothing(capsys, kind, command):
    path = str(REPO_ROOT / "examples" / EXAMPLES[kind])
    argv = ["plan", path, path] if command == "plan" else ["simulate", "--from", path, "--to", path]
    assert main([*argv, "--update-order", "RolloutFirst"]) == 2
    err = capsys.readouterr().err
    assert "--update-order" in err and f"does not apply to a {kind}" in err and "LeaderWorkerSet" in err


def test_update_order_still_plans_a_leaderworkerset(capsys):
    path = str(REPO_ROOT / "examples" / EXAMPLES["LeaderWorkerSet"])
    assert main(["plan", path, path, "--update-order", "RolloutFirst"]) == 0
    assert capsys.readouterr().out.strip() == "no changes"


def test_the_gang_provider_flag_names_the_apis_by_their_gang_facts(capsys):
    text = help_of(capsys, "render")
    for kind, workload in registered().items():
        if workload.gang.fixed is None:
            assert kind in text.split("--gang-provider {kubernetes,volcano}")[-1]
        else:
            assert f"{kind} ({workload.gang.fixed})" in text
