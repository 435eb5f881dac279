"""Every LeaderWorkerSet example on the seeds' LWS docs page renders to valid native objects.

The examples are extracted from shared/reference/seeds/002_*.txt (the upstream docs page, as
mirrored) and fed unchanged to ``pulumi-lws render``; every object it prints must pass strict
kubernetes-validate (1.35). The page's restartBackoff snippet is a fragment without a
workerTemplate; upstream's CRD rejects it and so do we, naming the field.
"""
from __future__ import annotations

import re
import zlib

import pytest
import yaml

from conftest import SEEDS_DIR, validate_manifest
from pulumi_lws.cli import main

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
        blocks.append("\n".join(l[indent:] for l in lines[i:j]))
        i = j
    return blocks


def _seed_page() -> str:
    pages = sorted(SEEDS_DIR.glob("002_*.txt"))
    if not pages:
        pytest.fail(f"seed LWS docs page missing under {SEEDS_DIR}")
    return pages[0].read_text()


EXAMPLES = extract_lws_examples(_seed_page())
COMPLETE = [e for e in EXAMPLES if "workerTemplate" in e]
FRAGMENTS = [e for e in EXAMPLES if "workerTemplate" not in e]


def test_the_page_has_its_examples() -> None:
    assert len(COMPLETE) >= 15 and len(FRAGMENTS) == 1


@pytest.mark.parametrize("example", COMPLETE, ids=lambda e: f"{yaml.safe_load(e)['metadata']['name']}-{zlib.crc32(e.encode()) % 10_000}")
def test_render_prints_valid_objects(example: str, tmp_path, capsys) -> None:
    path = tmp_path / "lws.yaml"
    path.write_text(example)
    assert main(["render", str(path)]) == 0, capsys.readouterr().err
    objs = [d for d in yaml.safe_load_all(capsys.readouterr().out) if d]
    kinds = {o["kind"] for o in objs}
    assert {"StatefulSet", "Service", "ControllerRevision"} <= kinds
    for obj in objs:
        validate_manifest(obj)
    spec = yaml.safe_load(example)["spec"]
    leader = next(o for o in objs if o["kind"] == "StatefulSet" and o["metadata"]["name"] == yaml.safe_load(example)["metadata"]["name"])
    assert leader["spec"]["replicas"] == spec.get("replicas", 1)


def test_fragment_is_rejected_naming_the_field(tmp_path, capsys) -> None:
    path = tmp_path / "fragment.yaml"
    path.write_text(FRAGMENTS[0])
    assert main(["render", str(path)]) == 2
    err = capsys.readouterr().err
    assert "spec.leaderWorkerTemplate.workerTemplate: Required value" in err
