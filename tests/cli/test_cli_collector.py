"""The CLI's collector thresholds (cli/collector.py): raised while a command runs, the caller's
restored afterwards, whether the command returns, fails or raises."""

from __future__ import annotations

import argparse
import gc

import pytest
import yaml
from conftest import TESTS_DIR

import pulumi_lws.cli as cli
from pulumi_lws.cli.collector import COMMAND_THRESHOLDS, fewer_collections

EXAMPLES = TESTS_DIR.parent / "examples"


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


@pytest.mark.parametrize("command", ["render", "plan"])
def test_render_and_plan_run_with_the_collector_off_and_give_it_back(thresholds, command, tmp_path, capsys) -> None:
    from pulumi_lws.cli import plan as plan_command
    from pulumi_lws.cli import render as render_command

    module = {"render": render_command, "plan": plan_command}[command]
    seen = []
    real = module.run

    def run(args):
        seen.append((gc.isenabled(), gc.get_threshold()))
        return real(args)

    doc = tmp_path / "lws.yaml"
    doc.write_text(yaml.safe_dump(_sized("quickstart/lws.yaml", 3, "img:1")), encoding="utf-8")
    argv = ["render", str(doc)] if command == "render" else ["plan", str(doc), str(doc)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, "run", run)
        assert cli.main(argv) == 0
    assert seen == [(False, COMMAND_THRESHOLDS)]
    assert gc.isenabled() and gc.get_threshold() == thresholds


def test_a_command_leaves_a_disabled_collector_disabled(thresholds, tmp_path, capsys) -> None:
    doc = tmp_path / "lws.yaml"
    doc.write_text(yaml.safe_dump(_sized("quickstart/lws.yaml", 3, "img:1")), encoding="utf-8")
    gc.disable()
    try:
        assert cli.main(["render", str(doc)]) == 0
        assert not gc.isenabled()
    finally:
        gc.enable()


def _cyclic_garbage(argv: list[str]) -> int:
    """Objects in garbage cycles one run of ``argv`` leaves (the collector off while it runs)."""
    assert cli.main(argv) == 0  # warm: imports, first-call caches
    gc.collect()
    gc.disable()
    try:
        assert cli.main(argv) == 0
        return gc.collect()
    finally:
        gc.enable()


@pytest.mark.parametrize("example", ["quickstart/lws.yaml", "modelserving-pd/ms.yaml", "disaggregated-pd/ds.yaml"])
def test_render_and_plan_leave_no_garbage_cycle_that_grows_with_the_fleet(example, tmp_path, capsys) -> None:
    """What the collector being off leaves to the end: the same count at 20 and 200 groups (the
    argument parser's few hundred objects), so nothing per group waits for a collection."""
    counts = {}
    for groups in (20, 200):
        old, new = tmp_path / f"old{groups}.yaml", tmp_path / f"new{groups}.yaml"
        old.write_text(yaml.safe_dump(_sized(example, groups, "img:1")), encoding="utf-8")
        new.write_text(yaml.safe_dump(_sized(example, groups, "img:2")), encoding="utf-8")
        counts[groups] = (
            _cyclic_garbage(["render", str(new), "--stage", "steady"]),
            _cyclic_garbage(["plan", str(old), str(new), "--format", "json"]),
        )
    capsys.readouterr()
    assert counts[20] == counts[200], counts
    assert max(counts[200]) < 2_000, counts


def _sized(example: str, groups: int, image: str) -> dict:
    """The example's manifest with ``groups`` groups (every role's, for a DisaggregatedSet) and
    every container on ``image``."""
    doc = yaml.safe_load((EXAMPLES / example).read_text(encoding="utf-8"))
    spec = doc["spec"]
    for holder in [r["spec"] for r in spec.get("roles", [])] if doc["kind"] == "DisaggregatedSet" else [spec]:
        holder["replicas"] = groups
    _images(doc, image)
    return doc


def _images(value: object, image: str) -> None:
    if isinstance(value, dict):
        if "image" in value and "name" in value:
            value["image"] = image
        for v in value.values():
            _images(v, image)
    elif isinstance(value, list):
        for v in value:
            _images(v, image)
