"""Bad DisaggregatedSet input through every entry point: ``render``, ``plan``, ``simulate --from/--to``
and the Pulumi component. Each row of the validation table (tests/disaggregatedset/api/
test_ds_validation.BAD) and of the families every API is fed alike (malformed.family_rows: pod
templates, ObjectMeta, int32 fields) exits 2 naming the field, prints no traceback, and registers
nothing."""

from __future__ import annotations

import sys
from typing import Any

import pulumi
import pytest
from conftest import TESTS_DIR, fresh_mock_runtime
from support.fakes_component import FakeActuator
from support.malformed import assert_rejected, family_rows, put, recording_mocks, write_manifest

sys.path.insert(0, str(TESTS_DIR / "disaggregatedset" / "api"))
from ds_base import ds
from test_ds_validation import BAD

from pulumi_lws.backend import use_backend
from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.core.contract.snapshot import Snapshot

GOOD = ds()
pulumi_test = pulumi.runtime.test
R0 = "spec.roles[0]"
ROWS = (
    [(cid, manifest, path) for cid, manifest, path, _message, _kind in BAD]
    + family_rows(
        GOOD,
        [f"{R0}.spec.leaderWorkerTemplate.workerTemplate"],
        ["spec.slices", f"{R0}.spec.replicas", f"{R0}.spec.leaderWorkerTemplate.size"],
    )
    + [("role-label-value", put(GOOD, f"{R0}.metadata", {"labels": {"a": "b c"}}), f"{R0}.metadata.labels")]
)
#: the component names an unnamed manifest after its Pulumi resource, so a missing name is valid there
COMPONENT_ROWS = [r for r in ROWS if r[0] != "name-required"]


def test_the_table_is_big() -> None:
    assert len(ROWS) >= 40


@pytest.mark.parametrize("manifest,field", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_every_cli_entry_point_exits_2_naming_the_field(tmp_path, capsys, manifest, field) -> None:
    bad, good = write_manifest(tmp_path, "bad.yaml", manifest), write_manifest(tmp_path, "good.yaml", GOOD)
    assert_rejected(
        capsys,
        (
            ["render", bad],
            ["render", bad, "--stage", "steady"],
            ["plan", good, bad],
            ["simulate", "--from", good, "--to", bad],
        ),
        field,
    )


class _Observer:
    def __init__(self) -> None:
        self.calls: list = []

    def observe(self, scope):
        self.calls.append(scope)
        return Snapshot.of([])


@pytest.mark.parametrize("manifest,field", [r[1:] for r in COMPONENT_ROWS], ids=[r[0] for r in COMPONENT_ROWS])
def test_the_component_raises_before_registering_anything(manifest, field) -> None:

    from pulumi_lws import DisaggregatedSet

    registered: list[Any] = []
    fresh_mock_runtime(recording_mocks(registered))
    observer = _Observer()
    with use_backend(observer, FakeActuator()), pytest.raises(SpecError) as info:
        DisaggregatedSet("bad", {"manifest": manifest})
    assert registered == [] and observer.calls == []
    assert any(field in e.path for e in info.value.errors), [str(e) for e in info.value.errors]


@pulumi_test
def test_a_good_manifest_through_the_component_registers(mocks) -> None:
    """The control: the same backend with the table's base manifest observes and registers objects."""
    import pulumi

    from pulumi_lws import DisaggregatedSet

    observer = _Observer()
    with use_backend(observer, FakeActuator()):
        comp = DisaggregatedSet("good", {"manifest": GOOD})

    def check(_):
        assert observer.calls
        assert {a.typ for a in mocks.registered if a.custom} >= {
            "kubernetes:apps/v1:StatefulSet",
            "kubernetes:apps/v1:ControllerRevision",
        }

    return pulumi.Output.all(comp.urn, *[c.urn for c in comp.child_resources]).apply(check)
