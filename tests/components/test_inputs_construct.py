"""Inputs as the component provider's ``Construct`` hands them over (the SDK's provider server
deserializes them with ``keep_unknowns``): a bare ``pulumi.output.UNKNOWN`` inside plain data (the
unknown sentinel of an input with no dependency) is planned like an unknown Output — never an
``AssertionError`` — and passed through to the children unknown. The gRPC path itself is
tested in tests/engine/test_provider_over_grpc.py."""

from __future__ import annotations

import pulumi
from pulumi.output import UNKNOWN, Unknown

from pulumi_lws.components.inputs import contains_outputs
from pulumi_lws.core.contract.ports import EmptyObserver
from pulumi_lws.sim.driver.pulumi_engine import run_program


class _NoActions:
    def execute(self, namespace, actions):
        return [a.describe() for a in actions]


def _template(image) -> dict:
    return {"spec": {"containers": [{"name": "vllm", "image": image}]}}


def test_a_bare_unknown_counts_as_an_output():
    assert contains_outputs({"a": [{"b": UNKNOWN}]}) and not contains_outputs({"a": [{"b": "x"}]})


def test_a_bare_unknown_in_plain_args_is_planned_and_passed_through():
    def program():
        from pulumi_lws import LeaderWorkerSet

        lws = LeaderWorkerSet("llm", {"replicas": 1, "size": 1, "worker_template": _template(UNKNOWN)})
        pulumi.export("stage", lws.stage)

    result = run_program(
        program, EmptyObserver(), _NoActions(), preview=True, resource_outputs=lambda args: {}
    )  # computed outputs unknown in the preview
    assert result.outputs["stage"]["assumptions"] == [
        "worker_template.spec.containers[0].image is unknown in this preview; passed through to the children "
        "(it cannot change this stage: every object is created)"
    ]
    statefulsets = [m for m in result.manifests if m["kind"] == "StatefulSet"]
    # the mock monitor hands an unknown input over as an Unknown (the placeholder never reaches a child)
    assert statefulsets and all(
        isinstance(m["spec"]["template"]["spec"]["containers"][0]["image"], Unknown) for m in statefulsets
    )
