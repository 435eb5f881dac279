"""``pulumi-lws simulate --from OLD --to NEW``: multi-document files, ``--name``, exclusive
placement on an assumed pool, and a starting state that never converges (a named blocker, exit 1)."""

from __future__ import annotations

import yaml
from test_ordinal_cli import SEED, with_image, write
from test_plan_rules import MULTI, edited, multi

from pulumi_lws.cli import main

EXCLUSIVE = edited(
    SEED, ("metadata", "annotations"), {"leaderworkerset.sigs.k8s.io/exclusive-topology": "example.com/pool"}
)


def sim(capsys, *argv):
    code = main(["simulate", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_services_and_hpas_are_ignored(tmp_path, capsys):
    old = multi(tmp_path, "o.yaml", MULTI)
    new = multi(tmp_path, "n.yaml", [MULTI[0], with_image(SEED, "x:2"), MULTI[2]])
    code, out, err = sim(capsys, "--from", old, "--to", new)
    assert code == 0, err
    assert "converged" in out


def test_several_leaderworkersets_need_name(tmp_path, capsys):
    other = edited(SEED, ("metadata", "name"), "second")
    old = multi(tmp_path, "o.yaml", [SEED, other])
    new = multi(tmp_path, "n.yaml", [SEED, with_image(other, "x:2")])
    code, out, err = sim(capsys, "--from", old, "--to", new)
    assert code == 2 and "--name" in err and "LeaderWorkerSet/second" in err and "Traceback" not in err
    code, out, err = sim(capsys, "--from", old, "--to", new, "--name", "second")
    assert code == 0 and out.startswith("second: change")
    code, _, err = sim(capsys, "scenario.yaml", "--name", "second")
    assert code == 2 and "--name" in err


def test_exclusive_placement_runs_on_an_assumed_pool(tmp_path, capsys):
    old, new = write(tmp_path, "o.yaml", EXCLUSIVE), write(tmp_path, "n.yaml", with_image(EXCLUSIVE, "x:2"))
    code, out, err = sim(capsys, "--from", old, "--to", new)
    assert code == 0, err
    assert "4 domains of example.com/pool, assumed" in out.splitlines()[0]


def test_a_start_that_never_converges_is_a_named_blocker(tmp_path, capsys):
    old, new = write(tmp_path, "o.yaml", EXCLUSIVE), write(tmp_path, "n.yaml", with_image(EXCLUSIVE, "x:2"))
    code, out, err = sim(capsys, "--from", old, "--to", new, "--nodes", "2")
    assert code == 1 and "Traceback" not in err
    assert "never converges" in out and "topology-label-missing" in out and "example.com/pool" in out
    code, out, _ = sim(capsys, "--from", old, "--to", new, "--nodes", "2", "--format", "json")
    data = yaml.safe_load(out)
    assert code == 1 and data["converged"] is False and "topology-label-missing" in data["blocked"]


def test_max_time_bounds_the_simulated_rollout(tmp_path, capsys):
    """``--max-time S`` (a scenario's ``stop.maxTime``): a rollout needing longer ends at t=S, not
    converged, naming what it waits for (exit 1); a longer bound lets the same change converge; a bad value or the
    flag with a scenario file is bad input naming the flag (exit 2)."""
    old, new = write(tmp_path, "o.yaml", SEED), write(tmp_path, "n.yaml", with_image(SEED, "x:2"))
    code, out, err = sim(capsys, "--from", old, "--to", new, "--ready-seconds", "30", "--max-time", "20")
    assert code == 1 and "at t=20s" in out and "waiting-for-groups" in out and "Traceback" not in err
    code, out, err = sim(capsys, "--from", old, "--to", new, "--ready-seconds", "30", "--max-time", "3600")
    assert code == 0 and "converged" in out, err
    for bad in ("0", "-5", "inf", "nan"):
        code, _, err = sim(capsys, "--from", old, "--to", new, "--max-time", bad)
        assert code == 2 and "--max-time" in err and "Traceback" not in err, (bad, err)
    code, _, err = sim(capsys, "scenario.yaml", "--max-time", "60")
    assert code == 2 and "--max-time" in err
