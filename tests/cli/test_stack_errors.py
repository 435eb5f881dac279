"""Errors in the user's own program under ``pulumi-lws preview|up`` (tests/cli/stack_project), shown as
Pulumi shows them: under the stack's diagnostics, the message, and the user's frame — exit 2, nothing
written. An invalid component input (a ``pulumi.RunError``) names the line of the user's program that
constructed the component, for all three APIs and inside the user's own component; any other
exception is shown with the user's frames only."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from pulumi_lws.cli import main

PROJECT = pathlib.Path(__file__).resolve().parent / "stack_project"
HEAD = "Diagnostics:\n  pulumi:pulumi:Stack (inference-dev):\n    error: "


@pytest.fixture
def project(tmp_path) -> pathlib.Path:
    target = tmp_path / "inference"
    shutil.copytree(PROJECT, target, ignore=shutil.ignore_patterns(".pulumi-lws", "__pycache__"))
    (target / "Pulumi.secure.yaml").unlink()  # the default stack is then the only one: dev
    return target


def _break(main_py: pathlib.Path, old: str, new: str) -> None:
    """Replace the first ``old`` in the program by ``new``."""
    text = main_py.read_text()
    assert old in text
    main_py.write_text(text.replace(old, new, 1))


def _line_of(main_py: pathlib.Path, code: str) -> int:
    return next(i for i, line in enumerate(main_py.read_text().splitlines(), 1) if code in line)


def _run(capsys, command: str, project: pathlib.Path) -> tuple[int, str, str]:
    code = main([command, str(project)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("command", ["preview", "up"])
@pytest.mark.parametrize(
    "old, new, message, constructor, function",
    [
        ('"size": 2,', '"size": 0,', "LeaderWorkerSet 'embed' is invalid", "lws = LeaderWorkerSet(", "<module>"),
        # nested in the user's own component: the frame inside Inference.__init__, not the outer one
        ('"size": 1,', '"size": 0,', "DisaggregatedSet 'pd' is invalid", "self.ds = DisaggregatedSet(", "__init__"),
        (
            '"workerReplicas": 0,',
            '"workerReplicas": -1,',
            "ModelServing 'chat' is invalid",
            "self.ms = ModelServing(",
            "__init__",
        ),
    ],
)
def test_an_invalid_component_input_shows_the_message_and_the_users_constructing_frame(
    project, capsys, command, old, new, message, constructor, function
):
    main_py = project / "__main__.py"
    _break(main_py, old, new)
    code, out, err = _run(capsys, command, project)
    assert code == 2 and out == ""
    assert err.startswith(HEAD + message)
    line = _line_of(main_py, constructor)
    assert f'      File "{main_py}", line {line}, in {function}\n        {constructor}\n' in err
    assert err.count('File "') == 1  # the innermost frame in the project only
    assert "Traceback" not in err and "site-packages" not in err and "pulumi_lws" not in err
    assert not (project / ".pulumi-lws").exists()


def test_an_invalid_input_from_another_resources_output_names_the_constructor_too(project, capsys):
    main_py = project / "__main__.py"
    _break(
        main_py,
        '"replicas": replicas,\n        "size": 2,',
        '"replicas": release.data.apply(lambda d: -1),\n        "size": 2,',
    )
    code, _, err = _run(capsys, "preview", project)
    assert code == 2 and err.startswith(HEAD + "LeaderWorkerSet 'embed' is invalid")
    assert "spec.replicas: Invalid value: -1" in err
    assert f'File "{main_py}", line {_line_of(main_py, "lws = LeaderWorkerSet(")}, in <module>' in err


def test_a_plain_exception_shows_the_users_frames_only(project, capsys):
    main_py = project / "__main__.py"
    main_py.write_text(
        main_py.read_text()
        + "\n\ndef image_tag(ref):\n    return ref.split(':')[2]\n\n\n"
        + "pulumi.export('tag', release.data.apply(lambda data: image_tag(data['image'])))\n"
    )
    code, out, err = _run(capsys, "up", project)
    assert code == 2 and out == ""
    assert err.startswith(
        HEAD + "Program failed with an unhandled exception:\n    Traceback (most recent call last):\n"
    )
    export_line, split_line = _line_of(main_py, "pulumi.export('tag'"), _line_of(main_py, "return ref.split")
    frames = [line.strip() for line in err.splitlines() if line.strip().startswith('File "')]
    assert frames == [
        f'File "{main_py}", line {export_line}, in <lambda>',
        f'File "{main_py}", line {split_line}, in image_tag',
    ]
    assert err.rstrip().endswith("IndexError: list index out of range")
    assert "site-packages" not in err and "pulumi_lws" not in err and "asyncio" not in err


def test_debug_shows_every_frame(project, capsys, monkeypatch):
    monkeypatch.setenv("PULUMI_LWS_DEBUG", "1")
    _break(project / "__main__.py", '"size": 2,', '"size": 0,')
    code, _, err = _run(capsys, "preview", project)
    assert code == 2 and "pulumi_lws/components" in err


@pytest.mark.parametrize("broken", [False, True])
def test_the_real_command_exits_without_asyncio_noise(project, broken):
    """``pulumi-lws up`` as a process: exit 0 (or 2 for a broken program) and nothing on stderr but
    the diagnostics — no "Exception ignored in BaseEventLoop.__del__" or "Task was destroyed" at exit."""
    if broken:
        _break(project / "__main__.py", '"size": 2,', '"size": 0,')
    root = pathlib.Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-m", "pulumi_lws.cli", "up", str(project), "--until-complete"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(root), "PYTHONWARNINGS": "default"},
    )
    assert done.returncode == (2 if broken else 0), done.stderr
    for noise in ("Exception ignored", "Task was destroyed", "Event loop is closed", "RuntimeWarning", "Traceback"):
        assert noise not in done.stderr
    assert done.stderr == "" if not broken else done.stderr.startswith(HEAD)
