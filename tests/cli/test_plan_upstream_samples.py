"""Every LeaderWorkerSet of the mirrored upstream samples (tests/manifests_upstream) survives a
one-image change through ``plan --diff`` and ``simulate --from/--to``: exit 0 (converged) or 1
with a named blocker, never 2 or 3; the diff shows the image line."""

from __future__ import annotations

import copy
import pathlib

import pytest
import yaml

from pulumi_lws.cli import main
from pulumi_lws.cli.documents import read

SAMPLES = pathlib.Path(__file__).resolve().parents[1] / "manifests_upstream"
CASES = [
    (path, doc.name) for path in sorted(SAMPLES.glob("*.yaml")) for doc in read(path) if doc.kind == "LeaderWorkerSet"
]


def test_the_walk_covers_every_sample_with_a_leaderworkerset():
    assert len({p for p, _ in CASES}) >= 17


def one_image_change(path: pathlib.Path, name: str, tmp_path: pathlib.Path) -> tuple[pathlib.Path, str, str]:
    """NEW: the same file with the worker template's first container image changed."""
    docs = read(path)
    out = []
    for d in docs:
        data = copy.deepcopy(d.data)
        if d.kind == "LeaderWorkerSet" and d.name == name:
            container = data["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]
            old_image = container["image"]
            container["image"] = f"{old_image}-next"
        out.append(data)
    new = tmp_path / path.name
    new.write_text(yaml.safe_dump_all(out, sort_keys=False))
    return new, old_image, f"{old_image}-next"


@pytest.mark.parametrize("path, name", CASES, ids=[f"{p.stem}:{n}" for p, n in CASES])
def test_one_image_change_plans_and_simulates(tmp_path, capsys, path, name):
    new, before, after = one_image_change(path, name, tmp_path)
    code = main(["plan", str(path), str(new), "--name", name, "--diff"])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    assert code == 0 or "blocked: " in out
    assert any(line.startswith("+") and after in line for line in out.splitlines())
    assert any(line.startswith("-") and line.rstrip().endswith(before) for line in out.splitlines())
    code = main(["simulate", "--from", str(path), "--to", str(new), "--name", name])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    assert (code == 0 and f"{name}: converged" in out) or "blocked: " in out
