"""``pulumi-lws simulate --check-capacity`` (issue 24 item 5): a change whose surge group does not
fit the node pool ends blocked with the shortfall (exit 1), the same change without the flag runs
as before, and a scenario file with its addNodes event converges with the flag; a program
scenario refuses the flag (exit 2: the program sets the component argument)."""

from __future__ import annotations

import pytest
import yaml
from support.capacity_helpers import CASES, GPU, scenario

from pulumi_lws.cli import main
from pulumi_lws.core.features.fit import INSUFFICIENT_CAPACITY
from pulumi_lws.core.k8s.yamlio import dump_documents

API = pytest.mark.parametrize("api", sorted(CASES))


def change_files(tmp_path, api):
    old, new = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old.write_text(dump_documents([CASES[api][0]("img:1")]))
    new.write_text(dump_documents([CASES[api][0]("img:2")]))
    return str(old), str(new)


@API
def test_a_change_that_does_not_fit_the_pool_ends_blocked_with_the_shortfall(tmp_path, capsys, api):
    old, new = change_files(tmp_path, api)
    pool = ["--nodes", str(CASES[api][1] + 1), "--gpus-per-node", "8"]
    code = main(["simulate", "--from", old, "--to", new, *pool, "--check-capacity"])
    out, _ = capsys.readouterr()
    assert code == 1
    assert f"blocked ({INSUFFICIENT_CAPACITY}): {CASES[api][3]}" in out
    code = main(["simulate", "--from", old, "--to", new, *pool])
    out, _ = capsys.readouterr()
    assert INSUFFICIENT_CAPACITY not in out


@API
def test_a_scenario_with_added_nodes_converges_with_the_flag(tmp_path, capsys, api):
    sc = scenario(api, check=None)
    path = tmp_path / "sc.yaml"
    path.write_text(yaml.safe_dump(sc))
    assert main(["simulate", str(path), "--check-capacity"]) == 0
    out, _ = capsys.readouterr()
    assert CASES[api][3] in out and "add 3 nodes" in out and f"{GPU}" in out


def test_a_program_scenario_refuses_the_flag(tmp_path, capsys):
    program = tmp_path / "__main__.py"
    program.write_text("")
    path = tmp_path / "sc.yaml"
    path.write_text(yaml.safe_dump({"program": "__main__.py", "manifest": "lws.yaml"}))
    (tmp_path / "lws.yaml").write_text(dump_documents([CASES["LeaderWorkerSet"][0]("img:1")]))
    assert main(["simulate", str(path), "--check-capacity"]) == 2
    assert "pure-engine choice" in capsys.readouterr().err


def annotated_file(tmp_path, api: str, image: str, name: str):
    from pulumi_lws.core.features.control import CHECK_CAPACITY_ANNOTATION

    doc = CASES[api][0](image)
    doc["metadata"]["annotations"] = {CHECK_CAPACITY_ANNOTATION: "true"}
    path = tmp_path / name
    path.write_text(dump_documents([doc]))
    return str(path)


@API
def test_render_steady_of_an_annotated_manifest_is_the_converged_fleet(tmp_path, capsys, api):
    """The steady-state expansion is the converged fleet, not a rollout: the check is off there."""
    path = annotated_file(tmp_path, api, "img:1", "w.yaml")
    for pool in ([], ["--nodes", "4", "--gpus-per-node", "8"]):  # none (unbounded), or exactly full
        assert main(["render", path, "--stage", "steady", *pool]) == 0, capsys.readouterr().err
        assert INSUFFICIENT_CAPACITY not in capsys.readouterr().out


@API
def test_a_cluster_without_nodes_is_not_checked(tmp_path, capsys, api):
    """simulate --from/--to without a pool runs on one unbounded node (no Node object): nothing to judge by."""
    old = annotated_file(tmp_path, api, "img:1", "old.yaml")
    new = annotated_file(tmp_path, api, "img:2", "new.yaml")
    assert main(["simulate", "--from", old, "--to", new, "--check-capacity"]) == 0
    assert INSUFFICIENT_CAPACITY not in capsys.readouterr().out
