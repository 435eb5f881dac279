"""Extraction of the LeaderWorkerSet YAML examples from the seeds' LWS docs page.

The examples are vendored as tests/conformance/lws-docs-examples.json (so a clone without
the steering repository's shared folder runs every test); tests/conformance/test_vendored.py
re-extracts them from that folder's reference/seeds/002_*.txt when it exists and fails on any drift.
"""

from __future__ import annotations

import json
import re

from conftest import CONFORMANCE_DIR

DOCS_EXAMPLES = CONFORMANCE_DIR / "lws-docs-examples.json"
SEED_PAGE_GLOB = "002_*.txt"


TOP_LEVEL = re.compile(r"^(apiVersion|kind|metadata|spec):")


def extract_lws_examples(text: str) -> list[str]:
    """YAML blocks starting at ``apiVersion: leaderworkerset.x-k8s.io/v1``, de-indented."""
    lines, blocks, i = text.splitlines(), [], 0
    while i < len(lines):
        if lines[i].strip() != "apiVersion: leaderworkerset.x-k8s.io/v1":
            i += 1
            continue
        indent = len(lines[i]) - len(lines[i].lstrip())
        j = i + 1
        while j < len(lines):
            line = lines[j][indent:] if lines[j][:indent].strip() == "" else lines[j].lstrip()
            if "•" in line or (line and not line.startswith(" ") and not TOP_LEVEL.match(line)):
                break
            j += 1
        blocks.append("\n".join(line[indent:] for line in lines[i:j]))
        i = j
    return blocks


def vendored_examples() -> list[str]:
    return json.loads(DOCS_EXAMPLES.read_text())["examples"]
