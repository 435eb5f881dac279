"""Every repository path the docs, README, CHANGELOG and docstrings name exists (a moved test or
module leaves no dangling reference: a reader who follows one finds the file)."""

from __future__ import annotations

import re
import subprocess

from conftest import REPO_ROOT

#: ``tests/...py``, ``pulumi_lws/...py``, ``docs/...md``, ``examples/...`` as written in prose
_PATH = re.compile(r"(?<![\w/.-])((?:tests|pulumi_lws|docs|bench|tools)/[A-Za-z0-9_/.-]+\.(?:py|md))(?![\w/])")


def _tracked(*patterns: str) -> list[str]:
    out = subprocess.run(["git", "ls-files", *patterns], cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_every_named_path_exists() -> None:
    sources = [
        f for f in _tracked("docs", "README.md", "CHANGELOG.md", "pulumi_lws", "bench") if f.endswith((".md", ".py"))
    ]
    assert sources
    missing = {
        f"{source}: {path}"
        for source in sources
        for path in _PATH.findall((REPO_ROOT / source).read_text(encoding="utf-8"))
        if not (REPO_ROOT / path).exists()
    }
    assert not missing, "dangling paths:\n" + "\n".join(sorted(missing))
