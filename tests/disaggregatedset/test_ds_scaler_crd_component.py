"""``role_scaler_crd`` under Pulumi's mock engine: two DisaggregatedSets with External roles in one
stack share ONE CRD registration (retain_on_delete, upstream's schema), neither set declares the
CRD itself, and each set declares only its own scaler."""

from __future__ import annotations

import pulumi
from support.fakes_component import FakeActuator
from test_ds_external import manifest

from pulumi_lws.core.contract.ports import EmptyObserver
from pulumi_lws.disaggregatedset import external
from pulumi_lws.sim.driver.pulumi_engine import run_program


def test_two_sets_in_one_stack_share_one_crd_registration():
    def program():
        from pulumi_lws import DisaggregatedSet
        from pulumi_lws.components.disaggregatedset_crd import role_scaler_crd

        crd = role_scaler_crd()
        assert role_scaler_crd() is crd  # a second call returns the same resource
        for name in ("pd", "pd2"):
            DisaggregatedSet(name, {"manifest": manifest(name=name)}, opts=pulumi.ResourceOptions(depends_on=[crd]))

    result = run_program(program, EmptyObserver(), FakeActuator())
    crds = [
        r
        for r in result.registrations.values()
        if r.type == "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"
    ]
    assert len(crds) == 1 and crds[0].name == external.CRD_NAME and crds[0].retain_on_delete
    assert "DisaggregatedSet" not in crds[0].parent  # the program's, not a child of either set
    assert [m["metadata"]["name"] for m in result.manifests if m["kind"] == "CustomResourceDefinition"] == [
        external.CRD_NAME
    ]
    assert (
        next(m for m in result.manifests if m["kind"] == "CustomResourceDefinition")["spec"]
        == external.scaler_crd()["spec"]
    )
    scalers = sorted(m["metadata"]["name"] for m in result.manifests if m["kind"] == external.SCALER_KIND)
    assert scalers == ["pd-decode", "pd2-decode"]


def test_a_second_program_run_registers_its_own_crd():
    def program():
        from pulumi_lws.components.disaggregatedset_crd import role_scaler_crd

        role_scaler_crd()

    for _ in range(2):  # memoised per program run: the second run is not handed the first run's resource
        result = run_program(program, EmptyObserver(), FakeActuator())
        assert sum(r.type.endswith("CustomResourceDefinition") for r in result.registrations.values()) == 1
