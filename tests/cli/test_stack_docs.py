"""The samples of README.md and docs/stacks.md are what ``pulumi-lws preview`` prints when tried as
they say (issue 25: "docs true when tried"): the quickstart's own stack after its first rollout,
previewing an image change (tree, diagnostics, outputs, counts; ``--diff``), and the two program
errors of tests/cli/stack_project."""

from __future__ import annotations

import pathlib
import shutil

import pytest
from conftest import REPO_ROOT

from pulumi_lws.cli import main

QUICKSTART = REPO_ROOT / "examples" / "quickstart"
STACK_PROJECT = pathlib.Path(__file__).resolve().parent / "stack_project"
README = (REPO_ROOT / "README.md").read_text()
STACKS = (REPO_ROOT / "docs" / "stacks.md").read_text()
IMAGE = "image=nginxinc/nginx-unprivileged:1.28"


def _block_after(text: str, marker: str) -> str:
    """The body of the first fenced block after ``marker``."""
    start = text.index("```\n", text.index(marker)) + 4
    return text[start : text.index("```", start)]


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def quickstart(tmp_path_factory) -> pathlib.Path:
    root = tmp_path_factory.mktemp("docs") / "quickstart"
    shutil.copytree(QUICKSTART, root, ignore=shutil.ignore_patterns(".pulumi-lws", "__pycache__"))
    assert main(["up", str(root / "from-other-resources"), "--until-complete"]) == 0
    return root / "from-other-resources"


def test_the_preview_samples_are_what_preview_prints(quickstart, capsys):
    capsys.readouterr()
    code, out, _ = _run(capsys, "preview", str(quickstart), "--config", IMAGE)
    assert code == 0
    full = _block_after(STACKS, "`pulumi-lws preview examples/quickstart/from-other-resources --config image=")
    assert out == full  # docs/stacks.md: the whole output
    readme = _block_after(README, "Your own program on the simulated cluster")
    command, _, shown = readme.partition("\n")
    assert command == f"$ pulumi-lws preview examples/quickstart/from-other-resources --config {IMAGE}"
    assert out.startswith(shown) and shown.count("\n") > 20  # the README: up to the stage table
    code, out, _ = _run(capsys, "preview", str(quickstart), "--diff", "--config", IMAGE)
    excerpt = _block_after(STACKS, "The same with `--diff` (excerpt):")
    assert excerpt.endswith("...\n") and out.startswith(excerpt.removesuffix("...\n"))


@pytest.mark.parametrize(
    "marker, edit",
    [
        ('`"size": 0`', lambda text: text.replace('"size": 2,', '"size": 0,', 1)),
        ("a `raise ValueError(...)` added at", lambda text: text + 'raise ValueError("no image configured")\n'),
    ],
)
def test_the_error_samples_are_what_up_prints(marker, edit, tmp_path, capsys):
    project = tmp_path / "inference"
    shutil.copytree(STACK_PROJECT, project, ignore=shutil.ignore_patterns(".pulumi-lws", "__pycache__"))
    (project / "Pulumi.secure.yaml").unlink()
    main_py = project / "__main__.py"
    main_py.write_text(edit(main_py.read_text()))
    code, _, err = _run(capsys, "up", str(project))
    assert code == 2
    assert err.replace(str(project), "/tmp/inference") == _block_after(STACKS, marker)
