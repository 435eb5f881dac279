"""Per-pod values ``admission-policy`` on a DisaggregatedSet role (issue 28): the role's child
LeaderWorkerSets carry the annotation, so their pods get upstream's per-pod values at creation
from their own policy, and the other role's pods stay in ``template`` mode; a bad value on a role
names the role's field."""

from __future__ import annotations

import copy

import pytest
from support.ds_helpers import NS, ds_manifest, role
from support.sim_cycle import up

from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.workloads import workload_for

W = workload_for("DisaggregatedSet")
P = "leaderworkerset.sigs.k8s.io"
PER_POD = "pulumi-lws.io/per-pod-values"


def manifest(value: str = "admission-policy") -> dict:
    prefill = role("prefill", 2, size=3)
    prefill["spec"]["leaderWorkerTemplate"]["subGroupPolicy"] = {"subGroupSize": 2}
    prefill["metadata"] = {"annotations": {PER_POD: value}}
    return ds_manifest(prefill, role("decode", 1, size=2))


def test_only_the_admission_role_gets_a_policy_and_its_pods_their_labels_at_creation() -> None:
    cluster = SimCluster(seed=5)
    cluster.kubelet.config.instant = True
    spec = W.parse(copy.deepcopy(manifest()))
    for _ in range(6):
        up(W, spec, cluster)
        cluster.step(cluster.clock.now + 2.0)
    policies = cluster.store.list("MutatingAdmissionPolicy", "")
    assert len(policies) == 1 and "-prefill" in policies[0]["metadata"]["name"]
    pods = cluster.store.list("Pod", NS)
    prefill = [p for p in pods if p["metadata"]["labels"].get("disaggregatedset.x-k8s.io/role") == "prefill"]
    decode = [p for p in pods if p["metadata"]["labels"].get("disaggregatedset.x-k8s.io/role") == "decode"]
    assert len(prefill) == 6 and len(decode) == 2
    admitted = cluster.store.admitted
    for pod in prefill:
        change = admitted[f"{NS}/{pod['metadata']['name']}"]
        assert change["labels"][f"{P}/role"] in ("leader", "worker")
        assert f"{P}/subgroup-key" in change["labels"]  # upstream's per-pod subgroup key, at creation
    assert not any(f"{NS}/{p['metadata']['name']}" in admitted for p in decode)


def test_a_bad_value_on_a_role_names_the_role_field() -> None:
    with pytest.raises(SpecError) as err:
        W.parse(manifest("webhook"))
    assert any(e.path.startswith("spec.roles[0]") and PER_POD in e.path for e in err.value.errors), [
        e.path for e in err.value.errors
    ]


def test_the_disaggregatedset_wide_argument_reaches_every_ordinal_role_a_role_choice_wins() -> None:
    from pulumi_lws.components.args import build_spec

    ds = ds_manifest(
        role("prefill", 1, size=2), role("decode", 1, size=2), role("embed", 1, size=2, groupIdentity="Hash")
    )
    ds["spec"]["roles"][1]["metadata"] = {"annotations": {PER_POD: "template"}}
    spec = build_spec("DisaggregatedSet", "pd", {"manifest": ds, "per_pod_values": "admission-policy"}).spec
    modes = {r.name: spec.role_spec_as_lws(r).metadata.annotations.get(PER_POD) for r in spec.roles}
    assert modes == {"prefill": "admission-policy", "decode": "template", "embed": None}
    assert "role prefill: per-pod values: admission-policy" in W.mode_notes(spec)["perPodValues"]
    with pytest.raises(SpecError) as err:
        build_spec("DisaggregatedSet", "pd", {"manifest": ds, "per_pod_values": "webhook"})
    assert [e.path for e in err.value.errors if PER_POD in e.path] == [f"metadata.annotations[{PER_POD}]"]
