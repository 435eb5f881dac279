"""README: the Install / languages / RBAC / continuous sections exist once, each saying what is
tested here and what needs the Pulumi CLI, a cluster or GitHub; the docs they link exist."""

from __future__ import annotations

import re

import pytest
from conftest import REPO_ROOT

README = (REPO_ROOT / "README.md").read_text()
SECTIONS = ("Install", "Using it from TypeScript / Go / YAML", "RBAC", "Running continuously")


def _section(title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## )", README, re.DOTALL | re.MULTILINE)
    assert match and README.count(f"\n## {title}\n") == 1, title
    return match.group(1)


@pytest.mark.parametrize("title", SECTIONS)
def test_section_names_what_is_tested_and_what_is_not(title):
    body = _section(title)
    assert "**Tested here**" in body
    assert re.search(r"\*\*(Needs|Not tested here)", body), title
    for link in re.findall(r"\]\(([^)]+)\)", body):
        assert (REPO_ROOT / link).exists(), link


def test_quickstart_commands_unchanged():
    assert "make demo    # sets up .venv" in README and "make test    # sets up .venv" in README
