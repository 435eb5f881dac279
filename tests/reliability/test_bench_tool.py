"""bench/run.py as a tool: --help prints usage and runs nothing, --list, --only, --json and
--compare; bench_cli's rows are ratios of the CLI commands against the same run's I/O floor."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import bench_cli as C  # noqa: E402
import run as R  # noqa: E402


def _bench(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(BENCH / "run.py"), *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=BENCH.parent,
    )


def test_help_prints_usage_and_runs_no_row() -> None:
    done = _bench("--help", timeout=60)
    assert done.returncode == 0
    assert done.stdout.startswith("usage: bench/run.py") and "--quick" in done.stdout and "--only NAME" in done.stdout
    assert "|" not in done.stdout and done.stderr == ""


def test_list_names_every_section_and_row_once() -> None:
    done = _bench("--list", timeout=60)
    assert done.returncode == 0
    names = [line.strip() for line in done.stdout.splitlines() if line.startswith("  ")]
    assert len(names) == len(set(names)) and {
        "lws-reconcile",
        "cli-ms",
        "cli-simulate-ds",
        "cli-stack-lws",
        "ms-render",
    } <= set(names)
    assert [line.split(":")[0] for line in done.stdout.splitlines() if not line.startswith(" ")] == [
        "scale",
        "cli",
        "earlier",
    ]


def test_unknown_row_is_a_usage_error() -> None:
    done = _bench("--only", "nope", timeout=60)
    assert done.returncode == 2 and "unknown row or section: nope" in done.stderr


def test_only_runs_one_row_and_json_report_compares(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "bench.json"
    assert R.main(["--quick", "--only", "api-calls", "--json", str(report)]) == 0
    rows = json.loads(report.read_text())["rows"]
    assert [r["row"] for r in rows] == ["api-calls"] and rows[0]["ok"] is True
    capsys.readouterr()
    # a target met in the previous report and missed now is a regression: exit 1, named
    previous = {"format": 1, "rows": [{**rows[0], "value": "1"}]}
    worse = tmp_path / "previous.json"
    worse.write_text(json.dumps(previous))
    assert R.compare([{**rows[0], "ok": False, "value": "99"}], str(worse)) == 1
    assert "REGRESSION" in capsys.readouterr().out
    assert R.compare(rows, str(worse)) == 0
    assert R.compare(rows, str(tmp_path / "missing.json")) == 2


@pytest.mark.parametrize("kind", list(C.MANIFESTS))
def test_cli_rows_are_ratios_of_real_command_runs(kind: str) -> None:
    rows = C.command_rows(kind, 20, repeat=1)  # 10% of 20 groups: a budget of 2
    assert [r["figure"].split(":")[0] for r in rows] == [
        "render",
        "render --stage steady",
        "plan",
        "plan --format json",
    ]
    for r in rows:
        assert not r["value"].startswith("error"), r
        assert re.match(r"^\d+\.\dx the I/O floor \(", r["value"]), r["value"]
        assert r["ok"] or r["why"]


@pytest.mark.parametrize("kind", list(C.MANIFESTS))
def test_simulate_preview_and_up_rows_are_ratios_of_real_command_runs(kind: str) -> None:
    import bench_cli_stack as S

    rows = S.simulate_rows(kind, 20) + S.stack_rows(kind, 20)
    assert [r["figure"] for r in rows] == [
        f"{label}: {kind}, 20 groups" for label in ("simulate --from/--to", "preview", "up")
    ]
    for r in rows:
        assert re.match(r"^\d+\.\d\dx its floor \(\d+\.\d\d s CPU vs \d+\.\d\d s\)$", r["value"]), r["value"]
        assert r["ok"] or r["why"]


def test_the_plan_table_floor_writes_the_same_cells(tmp_path: Path) -> None:
    table = tmp_path / "out.txt"
    table.write_text("Stage  Replicas  R-0\n1      3         U\n10     3         u\n", encoding="utf-8")
    source = tmp_path / "in.yaml"
    source.write_text("a: 1\n", encoding="utf-8")
    assert C._table_floor([source], table, 1) >= 0
    written = (tmp_path / "out.floor").read_text(encoding="utf-8").splitlines()
    assert [line.split() for line in written] == [line.split() for line in table.read_text().splitlines()]
    assert len({len(line.rstrip()) for line in written[1:]}) == 1  # columns of the same widths
