"""Scenario loading (no planner needed)."""

from __future__ import annotations

import pytest

from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.sim.cluster.clock import Clock
from pulumi_lws.sim.driver.scenario import load_scenario, merge_patch

BASE = """
manifest: {apiVersion: leaderworkerset.x-k8s.io/v1, kind: LeaderWorkerSet, metadata: {name: s}, spec: {replicas: 2}}
"""


def test_defaults_and_engine_choice():
    sc = load_scenario(BASE)
    assert sc.default_engine == "pure" and sc.interval == 10 and sc.start == "empty"


def test_unknown_keys_are_errors():
    with pytest.raises(SpecError) as exc:
        load_scenario(BASE + "stop: {maxtime: 3}\nbogus: 1\nfaults: [{at: 1, type: boom, pod: x}]\n")
    text = str(exc.value)
    assert "stop.maxtime: unknown field" in text and "bogus: unknown field" in text and "faults[0].type" in text


def test_nodes_kubelet_updates_faults():
    sc = load_scenario(
        BASE
        + """
nodes: [{name: gpu, count: 2, labels: {zone: a}, capacity: {nvidia.com/gpu: 8}}]
kubelet: {readySeconds: 3, overrides: [{group: 1, readySeconds: 9, after: 5}]}
updates: [{at: 5, patch: {spec: {replicas: 3}}}]
faults: [{at: 7, type: node-loss, node: gpu-0}]
"""
    )
    assert [n["name"] for n in sc.nodes] == ["gpu-0", "gpu-1"] and sc.nodes[0]["labels"]["zone"] == "a"
    assert sc.kubelet.default.ready == 3 and sc.kubelet.overrides[0].group == "1"
    assert sc.updates[0].apply_to(sc.manifest)["spec"]["replicas"] == 3
    assert sc.faults[0].target == "gpu-0"


def test_merge_patch_deletes_with_null():
    assert merge_patch({"a": {"b": 1, "c": 2}}, {"a": {"b": None, "d": 3}}) == {"a": {"c": 2, "d": 3}}


def test_clock_orders_events_deterministically():
    c = Clock(seed=3)
    fired = []
    c.schedule(5, "b", lambda: fired.append("b"))
    c.schedule(2, "a", lambda: fired.append("a"))
    c.schedule(5, "c", lambda: fired.append("c"))
    assert c.advance_to(10) == ["a", "b", "c"] and c.now == 10
    assert Clock(seed=3).rng.random() == Clock(seed=3).rng.random()
    with pytest.raises(ValueError):
        c.advance_to(1)


@pytest.mark.parametrize(
    "field, value", [("file", "../hash/lws.yaml"), ("file", "/etc/hosts"), ("manifest", "../hash/lws.yaml")]
)
def test_a_program_scenario_path_outside_the_program_directory_is_a_field_error(field, value):
    """Workspace edits stay inside the copy of the project: refused when the scenario loads (exit 2), not at run time."""
    from conftest import REPO_ROOT

    doc = {
        "program": str(REPO_ROOT / "examples" / "quickstart" / "__main__.py"),
        "manifest": "lws.yaml",
        "updates": [{"at": 5, "file": "lws.yaml", "patch": {"spec": {"replicas": 2}}}],
    }
    if field == "file":
        doc["updates"][0]["file"] = value
    else:
        doc["manifest"] = value
    with pytest.raises(SpecError, match="must be a relative path inside the program directory"):
        load_scenario(doc)
