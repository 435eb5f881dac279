"""Bad ModelServing input through every entry point: ``render``, ``plan``, ``simulate --from/--to``
and the Pulumi component. Each row of the validation table (test_ms_validation.CASES) and of the
families every API is fed alike (malformed.family_rows: pod templates, ObjectMeta, int32 fields)
exits 2 naming the field, prints no traceback, and registers nothing."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import fresh_mock_runtime
from ms_base import BASE, merge
from support.fakes_component import FakeActuator, FakeObserver
from support.malformed import assert_rejected, family_rows, recording_mocks, write_manifest
from test_ms_validation import CASES

from pulumi_lws.backend import use_backend
from pulumi_lws.core.contract.errors import SpecError

R0, R1 = "spec.template.roles[0]", "spec.template.roles[1]"
ROWS = [(cid, merge(BASE, patch), expected[0][0]) for cid, patch, expected in CASES if expected] + family_rows(
    BASE, [f"{R0}.entryTemplate", f"{R1}.workerTemplate"], ["spec.replicas", f"{R0}.replicas", f"{R0}.workerReplicas"]
)
#: the component names an unnamed manifest after its Pulumi resource, so a missing name is valid there
COMPONENT_ROWS = [r for r in ROWS if r[0] != "crd-name-required"]


def test_the_table_is_big() -> None:
    assert len(ROWS) >= 60 and len({r[0] for r in ROWS}) == len(ROWS)


@pytest.mark.parametrize("manifest,field", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_every_cli_entry_point_exits_2_naming_the_field(tmp_path, capsys, manifest, field) -> None:
    bad, good = write_manifest(tmp_path, "bad.yaml", manifest), write_manifest(tmp_path, "good.yaml", BASE)
    assert_rejected(capsys, (["render", bad], ["plan", good, bad], ["simulate", "--from", good, "--to", bad]), field)


@pytest.mark.parametrize(
    "manifest,field", [r[1:] for r in COMPONENT_ROWS][::2], ids=[r[0] for r in COMPONENT_ROWS][::2]
)
def test_the_component_raises_before_registering_anything(manifest, field) -> None:

    from pulumi_lws import ModelServing

    registered: list[Any] = []
    fresh_mock_runtime(recording_mocks(registered))
    with use_backend(FakeObserver(), FakeActuator()), pytest.raises(SpecError) as info:
        ModelServing("bad", {"manifest": manifest})
    assert registered == []
    assert any(field in str(e) for e in info.value.errors)
