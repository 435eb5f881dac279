"""Controller mode of the three components under Pulumi's mock engine: exactly one upstream custom
resource (right apiVersion/kind, the spec as written, the ``pulumi.com/waitFor`` await or the
user's ``pulumi.com/skipAwait``), the same validation (bad input registers nothing), the stage the
controller will take in the outputs, no action executed, and a missing CRD as one clear error
naming the controller before anything registers. Operator-free mode records Events on update."""

from __future__ import annotations

import copy
import pathlib
from typing import Any

import pulumi
import pytest
import yaml
from conftest import fresh_mock_runtime
from support.fakes_component import FakeActuator, FakeObserver
from support.malformed import recording_mocks

from pulumi_lws.backend import use_backend
from pulumi_lws.components.controller import WAIT_FOR, ControllerNotInstalledError
from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.core.contract.ports import EmptyObserver
from pulumi_lws.core.contract.snapshot import EMPTY
from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.sim.driver.pulumi_engine import run_program
from pulumi_lws.workloads import workload_for

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAMPLES = {
    "LeaderWorkerSet": yaml.safe_load((ROOT / "examples" / "quickstart" / "lws.yaml").read_text()),
    "ModelServing": yaml.safe_load((ROOT / "examples" / "modelserving-pd" / "ms.yaml").read_text()),
    "DisaggregatedSet": yaml.safe_load((ROOT / "examples" / "disaggregated-pd" / "ds.yaml").read_text()),
}
KINDS = tuple(SAMPLES)


def component(kind: str):
    import pulumi_lws

    return getattr(pulumi_lws, kind)


def program(kind: str, manifest: dict, **extra: Any):
    def run():
        c = component(kind)("w", {"manifest": manifest, "mode": "controller", **extra})
        for key in ("revision", "stage", "blocker", "remaining_stages", "actions"):
            pulumi.export(key, getattr(c, key))

    return run


@pytest.mark.parametrize("kind", KINDS)
def test_registers_exactly_one_custom_resource_with_the_await(kind):
    manifest, workload = copy.deepcopy(SAMPLES[kind]), workload_for(kind)
    actuator = FakeActuator()
    result = run_program(program(kind, manifest), EmptyObserver(), actuator)
    [cr] = result.manifests
    assert (cr["apiVersion"], cr["kind"]) == (workload.api_version, kind)
    assert cr["spec"] == manifest["spec"]  # unchanged: the user's spec, not a re-serialised model
    assert cr["metadata"]["name"] == manifest["metadata"]["name"]
    assert cr["metadata"]["annotations"][WAIT_FOR] == "condition=Available"
    # the stage is the operator-free planner's on the same observation; the controller acts, not us
    expected = workload.reconcile(workload.parse(manifest), EMPTY, workload.options()).stage
    assert result.outputs["revision"] == expected.target_revision
    assert result.outputs["stage"]["replicas"] == expected.replicas
    assert len(result.outputs["remaining_stages"]) == len(expected.remaining)
    assert result.outputs["actions"] == [] and actuator.calls == []


@pytest.mark.parametrize("kind", KINDS)
def test_skip_await_is_honoured(kind):
    manifest = copy.deepcopy(SAMPLES[kind])
    manifest["metadata"].setdefault("annotations", {})["pulumi.com/skipAwait"] = "true"
    [cr] = run_program(program(kind, manifest), EmptyObserver(), FakeActuator()).manifests
    assert WAIT_FOR not in cr["metadata"]["annotations"]
    assert cr["metadata"]["annotations"]["pulumi.com/skipAwait"] == "true"


@pytest.mark.parametrize("kind", KINDS)
def test_invalid_input_registers_nothing(kind):
    manifest = copy.deepcopy(SAMPLES[kind])
    manifest["metadata"]["name"] = "Not_A_Name"
    registered: list[Any] = []
    fresh_mock_runtime(recording_mocks(registered))
    with use_backend(FakeObserver(), FakeActuator()), pytest.raises(SpecError):
        component(kind)("bad", {"manifest": manifest, "mode": "controller"})
    assert registered == []


@pytest.mark.parametrize("kind", KINDS)
def test_a_missing_crd_is_one_error_naming_the_controller(kind):
    workload = workload_for(kind)
    cluster = SimCluster()
    registered: list[Any] = []
    fresh_mock_runtime(recording_mocks(registered))
    with use_backend(cluster, cluster), pytest.raises(ControllerNotInstalledError) as info:
        component(kind)("w", {"manifest": copy.deepcopy(SAMPLES[kind]), "mode": "controller"})
    assert registered == []
    message = str(info.value)
    assert workload.upstream.crd_name in message and workload.upstream.controller in message
    assert 'mode "operator-free"' in message

    cluster.create(
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": workload.upstream.crd_name},
        }
    )
    result = run_program(program(kind, copy.deepcopy(SAMPLES[kind])), cluster, cluster)
    assert [m["kind"] for m in result.manifests] == [kind]


@pytest.mark.parametrize(
    "kind,option",
    [
        ("LeaderWorkerSet", "update_order"),
        ("ModelServing", "max_groups_in_flight"),
        ("DisaggregatedSet", "progress_deadline_seconds"),
    ],
)
def test_operator_free_options_are_refused_in_controller_mode(kind, option):
    registered: list[Any] = []
    fresh_mock_runtime(recording_mocks(registered))
    value = {"update_order": "RolloutFirst", "max_groups_in_flight": 1, "progress_deadline_seconds": 60}[option]
    with use_backend(FakeObserver(), FakeActuator()), pytest.raises(SpecError) as info:
        component(kind)("w", {"manifest": copy.deepcopy(SAMPLES[kind]), "mode": "controller", option: value})
    assert registered == [] and "operator-free" in str(info.value)


def test_an_unknown_mode_names_the_field():
    fresh_mock_runtime(recording_mocks([]))
    with use_backend(FakeObserver(), FakeActuator()), pytest.raises(SpecError) as info:
        component("LeaderWorkerSet")("w", {"manifest": SAMPLES["LeaderWorkerSet"], "mode": "operator"})
    assert info.value.errors[0].path == "mode"


def test_operator_free_up_records_events_and_preview_does_not():
    manifest = copy.deepcopy(SAMPLES["LeaderWorkerSet"])
    cluster = SimCluster()

    def run():
        component("LeaderWorkerSet")("w", {"manifest": manifest})

    run_program(run, cluster, cluster, preview=True)
    assert cluster.list("Event") == []
    result = run_program(run, cluster, cluster)
    cluster.apply(result.manifests, "w", dependencies=result.dependencies)
    events = cluster.list("Event")
    assert events == [] or all(e["source"]["component"] == "pulumi-lws" for e in events)
    cluster.step(cluster.clock.now + 60)
    manifest["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["image"] = "nginx:1.29"
    run_program(run, cluster, cluster)
    reasons = {e["reason"] for e in cluster.list("Event")}
    assert "RollingUpdateStarted" in reasons
