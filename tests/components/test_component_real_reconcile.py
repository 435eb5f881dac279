"""The component with the real planner and renderer."""

from __future__ import annotations

from conftest import REPO_ROOT, validate_manifest
from support.fakes_component import FakeActuator

from pulumi_lws.core.contract.ports import EmptyObserver
from pulumi_lws.lws import labels as L
from pulumi_lws.sim.driver.pulumi_engine import run_program

QUICKSTART = REPO_ROOT / "examples" / "quickstart" / "__main__.py"


def test_quickstart_creation_stage_on_an_empty_cluster():
    result = run_program(QUICKSTART, EmptyObserver(), FakeActuator())
    assert len(result.stages) == 1 and result.stages[0].policy == "lws/ordinal"
    by_kind: dict[str, list[dict]] = {}
    for m in result.manifests:
        by_kind.setdefault(m["kind"], []).append(m)
        assert m["metadata"]["namespace"] == "default"
        assert m["metadata"]["labels"][L.MANAGED_BY] == L.MANAGED_BY_VALUE
        validate_manifest(m)
    leader = next(s for s in by_kind["StatefulSet"] if s["metadata"]["name"] == "leaderworkerset-sample")
    assert leader["metadata"]["annotations"][L.SKIP_AWAIT] == "true"
    assert leader["spec"]["replicas"] == result.stages[0].replicas
    assert by_kind.get("Service") and by_kind.get("ControllerRevision")
    assert result.outputs["revision"] == result.stages[0].target_revision


def test_quickstart_preview_equals_update_manifests():
    preview = run_program(QUICKSTART, EmptyObserver(), FakeActuator(), preview=True)
    update = run_program(QUICKSTART, EmptyObserver(), FakeActuator())
    key = lambda m: (m["kind"], m["metadata"]["name"])  # noqa: E731
    assert sorted(preview.manifests, key=key) == sorted(update.manifests, key=key)
