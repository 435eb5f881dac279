"""Bad input through every entry point: ``render``, ``plan``, ``simulate --from/--to`` and the
Pulumi component. Each malformed LeaderWorkerSet exits 2 (the documented "bad input" code) with
a message naming the field, prints no traceback, and registers nothing.

The rows are the strict pod-template table (test_podspec_validation.CASES), the upstream
validation table (test_api_validation.CREATE_CASES, rows that expect an error) and the families
every API is fed alike (malformed.family_rows): one manifest per row, fed unchanged to every
entry point.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from conftest import fresh_mock_runtime
from support.fakes_component import FakeActuator, FakeObserver
from support.malformed import assert_rejected, family_rows, recording_mocks, write_manifest
from test_api_validation import BASE, CREATE_CASES, merge
from test_podspec_validation import CASES as TEMPLATE_CASES
from test_podspec_validation import GOOD, put

from pulumi_lws.backend import use_backend
from pulumi_lws.core.contract.errors import SpecError

ROWS: list[tuple[str, dict[str, Any], str]] = (
    [(f"template-{rid}", put(GOOD, path, value), expected[0][0]) for rid, path, value, expected in TEMPLATE_CASES]
    + [(f"rule-{rid}", merge(BASE, patch), expected[0][0]) for rid, patch, expected in CREATE_CASES if expected]
    + family_rows(
        GOOD, ["spec.leaderWorkerTemplate.workerTemplate"], ["spec.replicas", "spec.leaderWorkerTemplate.size"]
    )
)


def test_the_table_has_at_least_fifty_inputs() -> None:
    assert len(ROWS) >= 50 and len({r[0] for r in ROWS}) == len(ROWS)


def _field_named(err: str, field: str) -> bool:
    # the message names the field path (map keys may print as [key] or .key)
    return field in err or field.split("[")[0] in err


@pytest.mark.parametrize("manifest,field", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_every_cli_entry_point_exits_2_naming_the_field(tmp_path, capsys, manifest, field) -> None:
    bad = write_manifest(tmp_path, "bad.yaml", manifest)
    good = write_manifest(
        tmp_path,
        "good.yaml",
        copy.deepcopy(GOOD) if manifest.get("metadata", {}).get("namespace") == "team-a" else copy.deepcopy(BASE),
    )
    assert_rejected(
        capsys,
        (["render", bad], ["plan", good, bad], ["simulate", "--from", good, "--to", bad]),
        field,
        named=_field_named,
    )


@pytest.mark.parametrize("manifest,field", [r[1:] for r in ROWS][::3], ids=[r[0] for r in ROWS][::3])
def test_the_component_raises_before_registering_anything(manifest, field) -> None:

    from pulumi_lws import LeaderWorkerSet

    registered: list[Any] = []
    fresh_mock_runtime(recording_mocks(registered))
    with use_backend(FakeObserver(), FakeActuator()), pytest.raises(SpecError) as info:
        LeaderWorkerSet("bad", {"manifest": manifest})
    assert registered == []
    assert any(_field_named(str(e), field) for e in info.value.errors)
