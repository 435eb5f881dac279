"""Rollout control through the three components under Pulumi's mock engine: the ``paused`` argument
holds the stage (what the program registers is what the cluster shows), the outputs say paused,
``progress_deadline_seconds`` reaches the status as ``Progressing=False``, and bad control
arguments raise before anything registers."""

from __future__ import annotations

import copy

import pulumi
import pytest
from support import ds_helpers as DSH
from support import ms_helpers as MSH
from support.control_helpers import lws_harness, lws_manifest
from support.fakes_component import FakeActuator

from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.core.contract.ports import EmptyObserver
from pulumi_lws.core.features.control import PAUSED, PROGRESS_DEADLINE_EXCEEDED
from pulumi_lws.sim.cluster.kubelet import Override
from pulumi_lws.sim.driver.pulumi_engine import run_program

OUTPUTS = ("stage", "blocker", "status")


def program(component: str, manifest: dict, **extra):
    def run():
        import pulumi_lws

        res = getattr(pulumi_lws, component)(
            manifest["metadata"]["name"], {"manifest": copy.deepcopy(manifest)} | extra
        )
        for key in OUTPUTS:
            pulumi.export(key, getattr(res, key))

    return run


def lws_case(overrides=None):
    return lws_harness(lws_manifest(4, "img:1"), overrides=overrides), lws_manifest(4, "img:2")


def ms_case(overrides=None):
    old = MSH.ms_manifest(replicas=3, roles=[MSH.role("p", 1, workers=1)], mu=1, surge=1)
    h = MSH.Harness.create(old)
    h.cluster.kubelet.config.overrides.extend(overrides or [])
    return h, MSH.with_image(old, "img:2")


def ds_case(overrides=None):
    old = DSH.ds_manifest(DSH.role("prefill", 2, surge=1, unavailable=0), DSH.role("decode", 1, surge=1, unavailable=0))
    h = DSH.Harness.create(old)
    h.cluster.kubelet.config.overrides.extend(overrides or [])
    return h, DSH.with_image(old, "img:2")


CASES = {"LeaderWorkerSet": lws_case, "ModelServing": ms_case, "DisaggregatedSet": ds_case}


@pytest.mark.parametrize("component", sorted(CASES))
def test_the_paused_argument_registers_what_the_cluster_shows_and_says_paused(component) -> None:
    h, new = CASES[component]()
    h.change_spec(new)
    h.up()
    h.advance(3.0)
    held = run_program(program(component, new, paused=True), h.cluster, FakeActuator())
    observed = {(o["kind"], o["metadata"]["name"]): o for o in h.snapshot()}
    for m in held.manifests:
        ref = (m["kind"], m["metadata"]["name"])
        assert ref in observed, f"{ref} created while paused"
        assert m.get("spec") == observed[ref].get("spec"), ref  # as observed
    stage = held.outputs["stage"]
    assert stage["paused"] is True and stage["control"]["paused"] is True
    assert held.outputs["blocker"].startswith(f"{PAUSED}: rollout paused")
    resumed = run_program(program(component, new, paused=False), h.cluster, FakeActuator())
    assert resumed.outputs["stage"]["paused"] is False and not (resumed.outputs["blocker"] or "").startswith(PAUSED)


@pytest.mark.parametrize("component", sorted(CASES))
def test_the_progress_deadline_argument_reaches_the_status_condition(component) -> None:
    h, new = CASES[component](overrides=[Override(after=0.5, never_ready=True)])
    h.change_spec(new)
    for _ in range(4):
        h.up()
        h.advance(20.0)
    late = run_program(program(component, new, progress_deadline_seconds=30), h.cluster, FakeActuator()).outputs
    cond = [c for c in late["status"]["conditions"] if c["type"] == "Progressing"]
    assert cond and cond[0]["status"] == "False" and cond[0]["reason"] == PROGRESS_DEADLINE_EXCEEDED
    assert (
        late["stage"]["control"]["deadlineExceeded"] is True
        and late["stage"]["control"]["progressDeadlineSeconds"] == 30
    )
    relaxed = run_program(program(component, new, progress_deadline_seconds=0), h.cluster, FakeActuator()).outputs
    assert relaxed["stage"]["control"]["deadlineExceeded"] is False


@pytest.mark.parametrize("component", sorted(CASES))
@pytest.mark.parametrize(
    "extra,field", [({"paused": "yes"}, "paused"), ({"progress_deadline_seconds": -1}, "progressDeadlineSeconds")]
)
def test_bad_control_arguments_raise_before_anything_registers(component, extra, field) -> None:
    _, new = CASES[component]()
    with pytest.raises(SpecError, match=field):
        run_program(program(component, new, **extra), EmptyObserver(), FakeActuator())
