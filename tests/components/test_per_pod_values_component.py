"""Per-pod values ``admission-policy`` through the components under Pulumi's mock engine (issue
28): a cluster that does not serve the policy API is one error naming the Kubernetes version and
the ``template`` fallback, before anything registers (LeaderWorkerSet and a DisaggregatedSet role);
a cluster that serves it gets the policy and binding registered before the StatefulSets."""

from __future__ import annotations

import copy
import pathlib
from typing import Any

import pytest
import yaml
from conftest import fresh_mock_runtime
from support.malformed import recording_mocks

from pulumi_lws.backend import use_backend
from pulumi_lws.components.controller import RequiredApiMissingError
from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.sim.driver.pulumi_engine import run_program

ROOT = pathlib.Path(__file__).resolve().parents[2]
LWS = yaml.safe_load((ROOT / "examples" / "quickstart" / "lws.yaml").read_text())
DS = yaml.safe_load((ROOT / "examples" / "disaggregated-pd" / "ds.yaml").read_text())
PER_POD = "pulumi-lws.io/per-pod-values"
BETA = ("admissionregistration.k8s.io/v1beta1", "MutatingAdmissionPolicy")


def ds_with_admission_role() -> dict[str, Any]:
    ds = copy.deepcopy(DS)
    role = ds["spec"]["roles"][0]
    role.setdefault("metadata", {}).setdefault("annotations", {})[PER_POD] = "admission-policy"
    return ds


def build(kind: str, args: dict[str, Any]) -> Any:
    import pulumi_lws

    return getattr(pulumi_lws, kind)("w", args)


@pytest.mark.parametrize(
    ("kind", "args"),
    [
        ("LeaderWorkerSet", {"manifest": LWS, "per_pod_values": "admission-policy"}),
        ("DisaggregatedSet", {"manifest": ds_with_admission_role()}),
    ],
)
def test_an_unserved_policy_api_is_one_error_before_anything_registers(kind: str, args: dict[str, Any]) -> None:
    cluster = SimCluster()
    cluster.unserved_apis.add(BETA)
    registered: list[Any] = []
    fresh_mock_runtime(recording_mocks(registered))
    with use_backend(cluster, cluster), pytest.raises(RequiredApiMissingError) as info:
        build(kind, copy.deepcopy(args))
    assert registered == []
    message = str(info.value)
    assert "does not serve admissionregistration.k8s.io/v1beta1 MutatingAdmissionPolicy" in message
    assert "Kubernetes 1.34" in message and "Kubernetes 1.36" in message
    assert 'per_pod_values "template"' in message


def test_template_mode_never_asks_discovery() -> None:
    cluster = SimCluster()
    cluster.unserved_apis.add(BETA)  # would refuse, but nothing needs the policy API
    asked: list[tuple[str, str]] = []
    serves = cluster.serves_api
    cluster.serves_api = lambda v, k: asked.append((v, k)) or serves(v, k)  # type: ignore[method-assign]

    def program() -> None:
        build("LeaderWorkerSet", {"manifest": copy.deepcopy(LWS)})

    result = run_program(program, cluster, cluster)
    assert asked == []
    assert not [m for m in result.manifests if m["kind"].startswith("MutatingAdmissionPolicy")]


def test_served_policy_api_registers_policy_and_binding_first() -> None:
    cluster = SimCluster()

    def program() -> None:
        build("LeaderWorkerSet", {"manifest": copy.deepcopy(LWS), "per_pod_values": "admission-policy"})

    result = run_program(program, cluster, cluster)
    kinds = [m["kind"] for m in result.manifests]
    assert kinds[:2] == ["MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"]
    assert "StatefulSet" in kinds
