"""Pod templates are built fresh and share what lies below their containers with the parsed spec
(docs/performance.md "Rendering"): rendering never mutates the spec, renders the same objects
twice, and never shares a dict between two places of one manifest (a YAML dump needs no alias)."""

from __future__ import annotations

import copy

import pytest
import yaml
from conftest import TESTS_DIR

from pulumi_lws.core.contract.snapshot import EMPTY
from pulumi_lws.lws.api import LeaderWorkerSet
from pulumi_lws.lws.reconcile import ReconcileOptions, reconcile

INPUTS = TESTS_DIR / "golden" / "ordinal" / "inputs"
CASES = sorted(p.stem for p in INPUTS.glob("*.yaml"))


def _spec_templates(lws: LeaderWorkerSet) -> dict:
    lwt = lws.spec.leader_worker_template
    return copy.deepcopy(
        {"leader": lwt.leader_template, "worker": lwt.worker_template, "claims": lwt.volume_claim_templates}
    )


def _ids(value, seen: dict, path: str) -> None:
    if isinstance(value, (dict, list)):
        assert id(value) not in seen, f"{path} is the same object as {seen[id(value)]}"
        seen[id(value)] = path
        for k, v in value.items() if isinstance(value, dict) else enumerate(value):
            _ids(v, seen, f"{path}.{k}")


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("gang", ["kubernetes", "volcano"])
def test_rendering_leaves_the_spec_alone_and_repeats_itself(case: str, gang: str) -> None:
    lws = LeaderWorkerSet.from_manifest(INPUTS / f"{case}.yaml")
    before = _spec_templates(lws)
    options = ReconcileOptions(gang_provider=gang)
    first = copy.deepcopy(list(reconcile(lws, EMPTY, options).manifests))
    second = list(reconcile(lws, EMPTY, options).manifests)
    assert _spec_templates(lws) == before
    assert second == first
    for m in second:
        _ids(m, {}, f"{m['kind']}/{m['metadata']['name']}")
        assert "&id" not in yaml.safe_dump(m)
