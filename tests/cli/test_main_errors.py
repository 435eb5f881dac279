"""``pulumi-lws`` never shows a traceback for user error, and its exit codes are distinct and
documented (pulumi_lws/cli/exit_codes.py, README "Exit codes"): 0 done, 1 not converged,
2 bad input, 3 internal error, 130 interrupted, 141 closed pipe."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import time

import pytest
import yaml
from conftest import REPO_ROOT, TESTS_DIR

from pulumi_lws import __version__
from pulumi_lws.cli import exit_codes as X
from pulumi_lws.cli import main

SAMPLE = TESTS_DIR / "manifests_upstream" / "docs_examples_sample_lws.yaml"
ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n" for i in range(9)
)
DUPLICATE = SAMPLE.read_text().replace("spec:\n", "spec:\n  replicas: 1\n", 1)


def cli(
    *argv: str, stdin: bytes | None = None, env: dict | None = None, timeout: float = 60
) -> subprocess.CompletedProcess:
    """``python -m pulumi_lws.cli ARGV`` in a subprocess (the real entry point, real stdio)."""
    return subprocess.run(
        [sys.executable, "-m", "pulumi_lws.cli", *argv],
        check=False,
        input=stdin,
        capture_output=True,
        cwd=REPO_ROOT,
        env={**os.environ, **(env or {})},
        timeout=timeout,
    )


def bad_inputs(tmp_path) -> dict[str, tuple[str, str]]:
    """name -> (path argument, a phrase the one-line message must hold)."""
    files = {
        "non-utf8.yaml": b"kind: LeaderWorkerSet\nname: \xff\xfe\n",
        "empty.yaml": b"",
        "comments-only.yaml": b"# nothing here\n---\n",
        "alias-bomb.yaml": ALIAS_BOMB.encode(),
        "duplicate.yaml": DUPLICATE.encode(),
        "broken.yaml": b"kind: [unclosed\n",
        "list.yaml": b"- a\n- b\n",
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    return {
        "directory": (str(tmp_path), "is a directory"),
        "missing": (str(tmp_path / "nope.yaml"), "no such file"),
        "non-utf8": (str(tmp_path / "non-utf8.yaml"), "not UTF-8"),
        "empty": (str(tmp_path / "empty.yaml"), "empty"),
        "comments-only": (str(tmp_path / "comments-only.yaml"), "no YAML document"),
        "alias-bomb": (str(tmp_path / "alias-bomb.yaml"), "aliases expand"),
        "duplicate-key": (str(tmp_path / "duplicate.yaml"), "duplicate key 'replicas'"),
        "invalid-yaml": (str(tmp_path / "broken.yaml"), "invalid YAML"),
        "not-a-mapping": (str(tmp_path / "list.yaml"), "expected a mapping"),
    }


CASES = [
    "directory",
    "missing",
    "non-utf8",
    "empty",
    "comments-only",
    "alias-bomb",
    "duplicate-key",
    "invalid-yaml",
    "not-a-mapping",
]


@pytest.mark.parametrize("case", CASES)
def test_user_error_exits_2_with_one_message_in_process(capsys, tmp_path, case) -> None:
    path, needle = bad_inputs(tmp_path)[case]
    code = main(["render", path])
    out, err = capsys.readouterr()
    assert code == X.BAD_INPUT == 2
    assert out == "" and err.startswith("error: ") and needle in err and "Traceback" not in err


@pytest.mark.parametrize("case", ["directory", "missing", "non-utf8", "empty", "alias-bomb", "duplicate-key"])
def test_user_error_has_no_traceback_from_the_real_entry_point(tmp_path, case) -> None:
    path, needle = bad_inputs(tmp_path)[case]
    done = cli("render", path)
    assert done.returncode == 2 and done.stdout == b""
    err = done.stderr.decode()
    assert needle in err and "Traceback" not in err


def test_stdin_gets_the_same_checks() -> None:
    done = cli("render", "-", stdin=b"\xff\xfe")
    assert done.returncode == 2 and b"not UTF-8" in done.stderr and b"Traceback" not in done.stderr


def test_alias_bomb_is_refused_in_well_under_a_second(capsys, tmp_path) -> None:
    path, _ = bad_inputs(tmp_path)["alias-bomb"]
    assert len(ALIAS_BOMB) < 1200  # ~1 KB that would expand to 10**10 nodes
    started = time.perf_counter()
    assert main(["render", path]) == 2
    assert time.perf_counter() - started < 0.5
    assert "aliases expand" in capsys.readouterr().err


def test_closed_pipe_stops_quietly_with_141(tmp_path) -> None:
    doc = yaml.safe_load(SAMPLE.read_text())
    docs = []
    for i in range(20):  # ~2 MB of output: far more than a pipe buffer
        one = yaml.safe_load(yaml.safe_dump(doc))
        one["metadata"]["name"] = f"lws-{i}"
        one["spec"]["replicas"] = 50
        docs.append(one)
    path = tmp_path / "many.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    script = f'"{sys.executable}" -m pulumi_lws.cli render "{path}" | head -1; echo "status=${{PIPESTATUS[0]}}" >&2'
    done = subprocess.run(["bash", "-c", script], check=False, capture_output=True, cwd=REPO_ROOT, timeout=120)
    assert done.stdout.decode().startswith("# LeaderWorkerSet default/lws-0: ") and done.stdout.count(b"\n") == 1
    err = done.stderr.decode()
    assert f"status={X.BROKEN_PIPE}" in err and "Traceback" not in err and "Broken pipe" not in err


def test_interrupt_exits_130_with_one_line(capsys, monkeypatch) -> None:
    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr("pulumi_lws.cli.render.run", interrupted)
    assert main(["render", str(SAMPLE)]) == X.INTERRUPTED == 130
    assert capsys.readouterr().err == "interrupted\n"


@pytest.mark.parametrize("debug", [False, True])
def test_internal_error_exits_3_with_one_line_and_the_traceback_only_when_asked(capsys, monkeypatch, debug) -> None:
    def bug(args):
        raise AttributeError("'NoneType' object has no attribute 'get'")

    monkeypatch.setattr("pulumi_lws.cli.render.run", bug)
    if debug:
        monkeypatch.setenv(X.DEBUG_ENV, "1")
    else:
        monkeypatch.delenv(X.DEBUG_ENV, raising=False)
    assert main(["render", str(SAMPLE)]) == X.INTERNAL_ERROR == 3
    err = capsys.readouterr().err
    first = err.splitlines()[0]
    assert first == (
        "internal error: AttributeError: 'NoneType' object has no attribute 'get' "
        "(please report; rerun with PULUMI_LWS_DEBUG=1 for the traceback)"
    )
    assert ("Traceback" in err) is debug
    assert len(err.splitlines()) == 1 or debug


def test_usage_errors_exit_2(capsys) -> None:
    assert main(["render"]) == 2
    assert main(["no-such-command"]) == 2
    assert main([]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_version(capsys) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"pulumi-lws {__version__}\n"
    done = cli("--version")
    assert done.returncode == 0 and done.stdout.decode() == f"pulumi-lws {__version__}\n"


def test_help_lists_the_exit_codes(capsys) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for code, meaning in X.TABLE:
        assert f"{code:>3}  {meaning}" in out


def test_exit_codes_are_distinct_and_in_the_readme() -> None:
    codes = [code for code, _ in X.TABLE]
    assert len(set(codes)) == len(codes)
    assert (X.OK, X.NOT_CONVERGED, X.BAD_INPUT, X.INTERNAL_ERROR) == (0, 1, 2, 3)
    readme = (REPO_ROOT / "README.md").read_text()
    section = readme.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    for code in codes:
        assert f"\n| {code} | " in section
    assert X.DEBUG_ENV in section


def test_readme_says_how_to_run_the_command_after_make() -> None:
    readme = (REPO_ROOT / "README.md").read_text()
    section = readme.split("## Command line", 1)[1].split("\n## ", 1)[0]
    assert ". .venv/bin/activate" in section and ".venv/bin/pulumi-lws" in section
    assert "make demo" in readme and "make test" in readme
    assert (pathlib.Path(sys.executable).parent / "pulumi-lws").exists()  # the entry point next to the venv's python
