"""What ``pip install -r <file>`` would install, asked of pip itself, offline.

The Pulumi CLI's Python toolchain installs a program's or a source plugin's dependencies with
``python -m pip install -r requirements.txt`` run in the directory holding that file
(sdk/python/toolchain/pip.go, ``InstallDependencies``); pip resolves a path requirement
(``.``, ``../..``) against that working directory. :func:`pip_resolves` runs pip the same way with
``--dry-run --report -`` (nothing is installed), ``--no-index`` (no network: a requirement that
needs an index fails) and ``--no-deps`` (only the file's own requirements are listed; their
dependencies are in each item's ``metadata.requires_dist``).
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
from typing import Any


def pip_resolves(requirements: str, cwd: pathlib.Path) -> list[dict[str, Any]]:
    """The ``install`` items of pip's installation report for ``-r requirements`` run in ``cwd``."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--no-build-isolation", "--no-index"]
        + ["--quiet", "--report", "-", "-r", requirements],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"pip could not resolve {cwd / requirements}:\n{done.stderr}"
    return json.loads(done.stdout)["install"]


def requirement_names(requirements: list[str]) -> set[str]:
    """The project names of PEP 508 requirement strings (markers and extras dropped)."""
    from packaging.requirements import Requirement

    return {Requirement(r).name for r in requirements}
