"""The source plugin as the Pulumi CLI installs it (docs/languages.md names the CLI sources).

* install: the CLI runs ``pip install -r requirements.txt`` in the plugin directory; pip itself
  (offline, ``--dry-run``) resolves that file to this project with its runtime dependencies.
"""

from __future__ import annotations

import json
import subprocess
import sys

import tomllib
from conftest import REPO_ROOT


def _pyproject() -> dict:
    return tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())


def _pip_resolves(requirements: str, cwd) -> list[dict]:
    """What ``pip install -r <requirements>`` run in ``cwd`` (as the CLI's toolchain runs it) would
    install: pip's own resolution, offline, nothing installed (``--dry-run --report``)."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--no-build-isolation", "--no-index"]
        + ["--quiet", "--report", "-", "-r", requirements],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["install"]


def _names(requirements: list[str]) -> set[str]:
    from packaging.requirements import Requirement

    return {Requirement(r).name for r in requirements}


def test_pip_installs_this_package_and_its_dependencies_from_the_root_requirements():
    (item,) = _pip_resolves("requirements.txt", REPO_ROOT)  # the CLI's pip runs in the plugin directory
    assert item["metadata"]["name"] == _pyproject()["project"]["name"]
    assert item["download_info"] == {"url": REPO_ROOT.as_uri(), "dir_info": {"editable": True}}
    runtime = {r for r in item["metadata"].get("requires_dist", []) if "extra ==" not in r}
    assert _names(runtime) == _names(_pyproject()["project"]["dependencies"])
    assert {"pulumi", "pulumi-kubernetes", "lightkube"} <= _names(runtime)
