"""The CLI's collector thresholds (cli/collector.py): raised while a command runs, the caller's
restored afterwards, whether the command returns, fails or raises."""

from __future__ import annotations

import argparse
import gc

import pytest

import pulumi_lws.cli as cli
from pulumi_lws.cli.collector import COMMAND_THRESHOLDS, fewer_collections


def _parser_running(handler):
    parser = argparse.ArgumentParser()
    parser.set_defaults(handler=handler)
    return parser


@pytest.fixture
def thresholds():
    before = gc.get_threshold()
    gc.set_threshold(701, 11, 12)  # the caller's own, distinguishable from the default
    yield (701, 11, 12)
    gc.set_threshold(*before)


@pytest.mark.parametrize("outcome", ["returns", "fails", "raises"])
def test_a_command_runs_with_the_raised_thresholds_and_gives_them_back(monkeypatch, thresholds, outcome) -> None:
    seen = []

    def handler(args):
        seen.append(gc.get_threshold())
        if outcome == "raises":
            raise RuntimeError("boom")
        return 0 if outcome == "returns" else 1

    monkeypatch.setattr(cli, "build_parser", lambda: _parser_running(handler))
    code = cli.main([])
    assert seen == [COMMAND_THRESHOLDS]
    assert gc.get_threshold() == thresholds
    assert code == {"returns": 0, "fails": 1, "raises": cli.X.INTERNAL_ERROR}[outcome]


def test_fewer_collections_restores_on_an_exception(thresholds) -> None:
    with pytest.raises(KeyError), fewer_collections():
        assert gc.get_threshold() == COMMAND_THRESHOLDS
        raise KeyError("x")
    assert gc.get_threshold() == thresholds


def test_a_real_command_leaves_the_thresholds_as_found(thresholds, capsys) -> None:
    assert cli.main(["--version"]) == 0
    assert cli.main(["render", "/nonexistent/lws.yaml"]) != 0
    assert gc.get_threshold() == thresholds
