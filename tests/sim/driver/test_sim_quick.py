"""``pulumi-lws simulate --from OLD.yaml --to NEW.yaml``: a scenario built in memory from a change
(pulumi_lws/sim/driver/quick.py) and its argument handling (pulumi_lws/cli/simulate.py)."""

from __future__ import annotations

import copy
import pathlib

import pytest
import yaml
from conftest import REPO_ROOT

from pulumi_lws.cli import main
from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.lws.rollout.budget import DEADLOCK_717, REMEDIES_717
from pulumi_lws.sim.driver.quick import GPU, OPTIONS, ZONE_LABEL, scenario_from_change
from pulumi_lws.sim.driver.runner import simulate
from pulumi_lws.sim.driver.scenario import load_scenario

EXAMPLES = REPO_ROOT / "examples"
QUICKSTART = EXAMPLES / "quickstart"
GPU717 = EXAMPLES / "gpu-717"


def load(path: pathlib.Path) -> dict:
    return yaml.safe_load(path.read_text())


def quickstart_change() -> tuple[dict, dict]:
    old = load(QUICKSTART / "lws.yaml")
    new = copy.deepcopy(old)
    new["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["image"] = (
        "nginxinc/nginx-unprivileged:1.28"
    )
    return old, new


def gpu717_change() -> tuple[dict, dict]:
    """1 group x 8 GPUs (2 pods x 4) -> 2 groups x 4 GPUs (2 pods x 2), one edit."""
    old = load(GPU717 / "lws.yaml")
    new = copy.deepcopy(old)
    new["spec"]["replicas"] = 2
    new["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["resources"] = {"limits": {GPU: 2}}
    return old, new


@pytest.fixture
def files(tmp_path):
    """Write manifests to tmp_path; returns the path of each."""

    def write(name: str, doc) -> str:
        path = tmp_path / name
        path.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc))
        return str(path)

    return write


def shape(row) -> tuple:
    return (row.replicas, row.partition, tuple(g.state for g in row.groups), row.live, row.available)


# ---- the pure function ----------------------------------------------------------------------


def test_scenario_from_change_is_converged_start_plus_one_update_at_zero():
    old, new = quickstart_change()
    before = copy.deepcopy((old, new))
    sc = scenario_from_change(old, new)
    assert (old, new) == before  # arguments untouched
    assert sc.start == "converged" and sc.engine == "pure" and sc.default_engine == "pure"
    assert sc.name == "leaderworkerset-sample" and sc.namespace == "default" and sc.program is None
    assert sc.manifest == old and len(sc.updates) == 1
    assert sc.updates[0].at == 0 and sc.updates[0].apply_to(old) == new
    assert sc.nodes == [] and sc.update_order is None and sc.objects == [] and sc.faults == []
    assert sc.kubelet.default == load_scenario({"manifest": old}).kubelet.default  # default readiness


def test_pool_nodes_gpus_zones_and_readiness():
    old, new = gpu717_change()
    sc = scenario_from_change(old, new, nodes=5, gpus_per_node=8, zones=2, ready_seconds=7, update_order="RolloutFirst")
    assert [n["name"] for n in sc.nodes] == [f"node-{i}" for i in range(5)]
    assert [n["labels"][ZONE_LABEL] for n in sc.nodes] == ["zone-a", "zone-b", "zone-a", "zone-b", "zone-a"]
    assert all(n["labels"]["kubernetes.io/hostname"] == n["name"] for n in sc.nodes)
    assert all(n["capacity"][GPU] == 8 and "cpu" in n["capacity"] for n in sc.nodes)
    assert sc.kubelet.default.ready == 7 and sc.update_order == "RolloutFirst"
    no_gpu = scenario_from_change(old, old, nodes=2)
    assert all(GPU not in n["capacity"] and n["labels"][ZONE_LABEL] == "zone-a" for n in no_gpu.nodes)


def test_quickstart_change_matches_the_example_scenario_first_and_last_rows():
    result = simulate(scenario_from_change(*quickstart_change()))
    example = simulate(load_scenario(QUICKSTART / "scenario-pure.yaml"))
    assert result.exit_code == 0 and result.trace.converged and not result.trace.violations
    assert result.engine == "pure" and result.final_blocker is None
    rows, ref = result.trace.rows, example.trace.rows
    converged_on_4 = (4, 0, ("U",) * 4, 4, 4)  # 4 groups, all updated and ready
    assert shape(rows[0]) == shape(ref[0]) == converged_on_4
    assert shape(rows[-1]) == shape(ref[-1]) == converged_on_4
    assert [g.id for g in rows[0].groups] == [g.id for g in ref[0].groups]
    assert {g.revision for g in rows[-1].groups} == {g.revision for g in ref[-1].groups}  # same new revision
    assert rows[0].note == "before the rolling update" and "rolling update complete" in rows[-1].note
    assert (
        max(r.live for r in rows) <= 6 and min(r.available for r in rows[1:]) >= 2
    )  # R + maxSurge, R - maxUnavailable


def test_gpu717_change_deadlocks_on_one_8_gpu_node_and_rollout_first_converges():
    old, new = gpu717_change()
    blocked = simulate(scenario_from_change(old, new, nodes=1, gpus_per_node=8, max_time=60))
    assert blocked.exit_code == 1 and not blocked.trace.converged and not blocked.trace.violations
    assert blocked.final_blocker.code == DEADLOCK_717 and blocked.final_blocker.remedies == REMEDIES_717
    ok = simulate(scenario_from_change(old, new, nodes=1, gpus_per_node=8, update_order="RolloutFirst"))
    assert ok.exit_code == 0 and ok.trace.converged and not ok.trace.violations
    # the same change on an unbounded node is no deadlock
    assert simulate(scenario_from_change(old, new)).exit_code == 0


@pytest.mark.parametrize(
    "kwargs, path",
    [
        ({"zones": 2}, "--zones"),
        ({"nodes": 2, "zones": 3}, "--zones"),
        ({"nodes": 0}, "--nodes"),
        ({"gpus_per_node": 8}, "--gpus-per-node"),
        ({"nodes": 1, "ready_seconds": -1}, "--ready-seconds"),
        ({"update_order": "Sideways"}, "--update-order"),
    ],
)
def test_inconsistent_options_raise(kwargs, path):
    with pytest.raises(SpecError) as exc:
        scenario_from_change(*quickstart_change(), **kwargs)
    assert exc.value.kind == OPTIONS and [e.path for e in exc.value.errors] == [path]


def test_different_names_and_invalid_manifests_raise_with_field_paths():
    old, new = quickstart_change()
    other = copy.deepcopy(new)
    other["metadata"]["name"] = "other"
    with pytest.raises(SpecError) as exc:
        scenario_from_change(old, other)
    assert exc.value.errors[0].path == "metadata.name" and "same LeaderWorkerSet" in str(exc.value)
    bad = copy.deepcopy(new)
    bad["spec"]["replicas"] = -1
    with pytest.raises(SpecError) as exc:
        scenario_from_change(old, bad)
    assert "spec.replicas" in str(exc.value)


# ---- the command line -----------------------------------------------------------------------


def test_cli_quickstart_change_prints_header_table_and_summary(files, capsys):
    _old, new = quickstart_change()
    code = main(["simulate", "--from", str(QUICKSTART / "lws.yaml"), "--to", files("new.yaml", new)])
    out = capsys.readouterr().out
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("leaderworkerset-sample: change ") and "engine pure" in lines[0]
    assert "cluster 1 unbounded node, start converged on" in lines[0]
    assert "Stage 1" in out and "before the rolling update" in out and "rolling update complete" in out
    assert "leaderworkerset-sample: converged at t=" in out and "0 invariant violations" in out


def test_cli_gpu717_exit_1_with_blocker_and_remedies_then_0_with_rollout_first(files, capsys):
    _old, new = gpu717_change()
    args = [
        "simulate",
        "--from",
        str(GPU717 / "lws.yaml"),
        "--to",
        files("new.yaml", new),
        "--nodes",
        "1",
        "--gpus-per-node",
        "8",
    ]
    assert main(args) == 1
    captured = capsys.readouterr()
    assert "cluster 1 node (cpu 64, nvidia.com/gpu 8 in total)" in captured.out
    assert f"blocked: {DEADLOCK_717}: " in captured.out and "remedies:" in captured.out
    assert "pulumi-lws.io/update-order: RolloutFirst" in captured.out
    assert f"rollout ended blocked: {DEADLOCK_717}" in captured.err

    assert main(args + ["--update-order", "RolloutFirst"]) == 0
    captured = capsys.readouterr()
    assert "update order RolloutFirst" in captured.out and "converged at t=" in captured.out
    assert "blocked:" not in captured.out and captured.err == ""


def test_cli_json_markdown_plot_and_zones(files, tmp_path, capsys):
    old, new = gpu717_change()
    base = [
        "simulate",
        "--from",
        files("old.yaml", old),
        "--to",
        files("new.yaml", new),
        "--nodes",
        "4",
        "--gpus-per-node",
        "8",
        "--zones",
        "2",
        "--ready-seconds",
        "5",
    ]
    assert main(base + ["--format", "markdown", "--plot", str(tmp_path / "t.svg")]) == 0
    out = capsys.readouterr().out
    assert "4 nodes (cpu 256, nvidia.com/gpu 32 in total) in 2 zones" in out and "| Stage |" in out
    assert (tmp_path / "t.svg").read_text().startswith("<svg")
    assert main(base + ["--format", "json"]) == 0
    assert capsys.readouterr().out.lstrip().startswith(("{", "["))


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["x.yaml", "--from", "a.yaml", "--to", "b.yaml"],
            "give either SCENARIO or --from OLD.yaml --to NEW.yaml, not both",
        ),
        (["--from", "OLD"], "--from needs --to NEW.yaml"),
        (["--to", "NEW"], "--to needs --from OLD.yaml"),
        ([], "nothing to simulate"),
        (["--from", "OLD", "--to", "NEW", "--engine", "pulumi"], "runs the pure engine"),
        (
            [str(QUICKSTART / "scenario-pure.yaml"), "--nodes", "3", "--update-order", "RolloutFirst"],
            "--nodes, --update-order only with --from/--to",
        ),
        (["--from", "OLD", "--to", "NEW", "--zones", "2"], "simulate: --zones: needs --nodes (got 2)"),
        (
            ["--from", "OLD", "--to", "NEW", "--nodes", "2", "--zones", "3"],
            "--zones: must be between 1 and --nodes (2)",
        ),
    ],
)
def test_cli_usage_errors_exit_2(argv, message, files, capsys):
    argv = [
        files("old.yaml", quickstart_change()[0])
        if a == "OLD"
        else files("new.yaml", quickstart_change()[1])
        if a == "NEW"
        else a
        for a in argv
    ]
    assert main(["simulate", *argv]) == 2
    captured = capsys.readouterr()
    assert message in captured.err and captured.out == ""


def test_cli_invalid_lws_names_the_file_and_field_paths(files, capsys):
    old, new = quickstart_change()
    new["spec"]["replicas"] = -1
    new["spec"]["leaderWorkerTemplate"]["size"] = 0
    bad = files("bad.yaml", new)
    assert main(["simulate", "--from", str(QUICKSTART / "lws.yaml"), "--to", bad]) == 2
    err = capsys.readouterr().err
    assert f"simulate: --to {bad}: LeaderWorkerSet 'leaderworkerset-sample' is invalid (2 problems)" in err
    assert "spec.replicas: Invalid value: -1" in err and "spec.leaderWorkerTemplate.size: Invalid value: 0" in err

    assert (
        main(
            [
                "simulate",
                "--from",
                files("typo.yaml", {**old, "spec": {**old["spec"], "replicaz": 4}}),
                "--to",
                str(QUICKSTART / "lws.yaml"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "simulate: --from " in err and "replicaz" in err


def test_cli_different_names_missing_file_and_bad_yaml_exit_2(files, capsys):
    _old, new = quickstart_change()
    new["metadata"]["name"] = "renamed"
    assert main(["simulate", "--from", str(QUICKSTART / "lws.yaml"), "--to", files("new.yaml", new)]) == 2
    err = capsys.readouterr().err
    assert "metadata.name" in err and "old and new must name the same LeaderWorkerSet" in err
    assert "(old: 'leaderworkerset-sample', new: 'renamed')" in err

    assert main(["simulate", "--from", "/nonexistent/old.yaml", "--to", str(QUICKSTART / "lws.yaml")]) == 2
    assert "simulate: --from /nonexistent/old.yaml: " in capsys.readouterr().err

    assert main(["simulate", "--from", str(QUICKSTART / "lws.yaml"), "--to", files("broken.yaml", "spec: [\n")]) == 2
    assert "invalid YAML" in capsys.readouterr().err
