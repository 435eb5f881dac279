"""Every LeaderWorkerSet example on the seeds' LWS docs page renders to valid native objects.

The examples were extracted from the seeds' upstream docs page (002_*.txt), are vendored in
tests/conformance/lws-docs-examples.json and fed unchanged to ``pulumi-lws render``; every object it prints must pass strict
kubernetes-validate (1.35). The page's restartBackoff snippet is a fragment without a
workerTemplate; upstream's CRD rejects it and so do we, naming the field.
"""

from __future__ import annotations

import zlib

import pytest
import yaml
from conftest import validate_manifest
from support.seed_docs import vendored_examples

from pulumi_lws.cli import main

EXAMPLES = vendored_examples()
COMPLETE = [e for e in EXAMPLES if "workerTemplate" in e]
FRAGMENTS = [e for e in EXAMPLES if "workerTemplate" not in e]


def test_the_page_has_its_examples() -> None:
    assert len(COMPLETE) >= 15 and len(FRAGMENTS) == 1


@pytest.mark.parametrize(
    "example", COMPLETE, ids=lambda e: f"{yaml.safe_load(e)['metadata']['name']}-{zlib.crc32(e.encode()) % 10_000}"
)
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
    leader = next(
        o
        for o in objs
        if o["kind"] == "StatefulSet" and o["metadata"]["name"] == yaml.safe_load(example)["metadata"]["name"]
    )
    assert leader["spec"]["replicas"] == spec.get("replicas", 1)


def test_fragment_is_rejected_naming_the_field(tmp_path, capsys) -> None:
    path = tmp_path / "fragment.yaml"
    path.write_text(FRAGMENTS[0])
    assert main(["render", str(path)]) == 2
    err = capsys.readouterr().err
    assert "spec.leaderWorkerTemplate.workerTemplate: Required value" in err
