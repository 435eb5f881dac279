"""The simulated API server's MutatingAdmissionPolicy admission and its CEL subset (generic: no
LeaderWorkerSet knowledge; the LWS policies are exercised in tests/lws/e2e)."""

from __future__ import annotations

from typing import Any

import pytest

from pulumi_lws.sim.cluster.admission import AdmissionDenied, PatchError, apply_json_patch, merge_apply
from pulumi_lws.sim.cluster.cel import CelError, CelUnsupported, evaluate, plain
from pulumi_lws.sim.cluster.simcluster import SimCluster

ACT = {"object": {"metadata": {"name": "p-1", "labels": {"i": "3"}}, "spec": {}}, "n": 7}


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("-7 / 2", -3),  # toward zero, as CEL and Go
        ("-7 % 3", -1),
        ("int(object.metadata.labels['i']) * 2 + 1", 7),
        ('string(n) + "x"', "7x"),
        ("[1] + [2]", [1, 2]),
        ('"i" in object.metadata.labels && !has(object.spec.affinity)', True),
        ("n > 3 ? (n > 5 ? 2 : 1) : 0", 2),
        ("true || 1 / 0 == 1", True),  # short-circuit
        ('Object{metadata: Object.metadata{labels: {"a": "b"}}}', {"metadata": {"labels": {"a": "b"}}}),
        ('[JSONPatch{op: "add", path: "/x", value: [1]}]', [{"op": "add", "path": "/x", "value": [1]}]),
        ("{'k': 'v'}['k']", "v"),
    ],
)
def test_subset_evaluates(expression: str, value: Any) -> None:
    assert plain(evaluate(expression, ACT)) == value


@pytest.mark.parametrize(
    "expression",
    ["[1].all(x, x > 0)", "object.metadata.name.size()", "1.5", "2u", 'b"x"', "size([1])", "Foo{a: 1}", "sha1('x')"],
)
def test_outside_the_subset_is_refused_by_name(expression: str) -> None:
    with pytest.raises(CelUnsupported):
        evaluate(expression, ACT)


@pytest.mark.parametrize(
    "expression",
    ['1 == "1"', "1 + 'a'", "n / 0", "object.metadata.labels['missing']", "undeclared", "n ? 1 : 2", "1 ? : "],
)
def test_errors_are_errors(expression: str) -> None:
    with pytest.raises(CelError):
        evaluate(expression, ACT)


def test_json_patch_adds_into_objects_and_arrays_and_refuses_missing_parents() -> None:
    doc = {"spec": {"a": {"list": [1]}}}
    out = apply_json_patch(
        doc, [{"op": "add", "path": "/spec/a/list/-", "value": 2}, {"op": "add", "path": "/spec/b", "value": {}}]
    )
    assert out == {"spec": {"a": {"list": [1, 2]}, "b": {}}} and doc == {"spec": {"a": {"list": [1]}}}
    with pytest.raises(PatchError):
        apply_json_patch(doc, [{"op": "add", "path": "/spec/missing/x", "value": 1}])


def test_apply_configuration_merges_maps_and_keeps_other_keys() -> None:
    pod = {"metadata": {"labels": {"a": "1"}, "name": "p"}}
    assert merge_apply(pod, {"metadata": {"labels": {"b": "2"}}}) == {
        "metadata": {"labels": {"a": "1", "b": "2"}, "name": "p"}
    }


def _policy(expression: str, failure: str = "Fail", selector: dict | None = None) -> list[dict[str, Any]]:
    spec = {
        "matchConstraints": {
            "resourceRules": [
                {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}
            ]
        },
        "variables": [{"name": "who", "expression": "object.metadata.name"}],
        "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": expression}}],
        "reinvocationPolicy": "Never",
        "failurePolicy": failure,
    }
    binding = {"policyName": "p", "matchResources": {"objectSelector": selector or {"matchLabels": {"app": "x"}}}}
    return [
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingAdmissionPolicy",
            "metadata": {"name": "p"},
            "spec": spec,
        },
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingAdmissionPolicyBinding",
            "metadata": {"name": "p"},
            "spec": binding,
        },
    ]


def _pod(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": labels},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }


def test_pod_creation_is_mutated_only_where_the_binding_selects() -> None:
    cluster = SimCluster()
    for obj in _policy('Object{metadata: Object.metadata{labels: {"seen": variables.who}}}'):
        cluster.store.create(obj)
    assert cluster.store.create(_pod("a", {"app": "x"}))["metadata"]["labels"] == {"app": "x", "seen": "a"}
    assert cluster.store.create(_pod("b", {"app": "y"}))["metadata"]["labels"] == {"app": "y"}


def test_a_failing_fail_policy_refuses_the_pod_and_an_ignore_policy_does_not() -> None:
    cluster = SimCluster()
    for obj in _policy("object.metadata.labels['missing']"):
        cluster.store.create(obj)
    with pytest.raises(AdmissionDenied, match='MutatingAdmissionPolicy "p"'):
        cluster.store.create(_pod("a", {"app": "x"}))
    assert cluster.store.get("Pod", "default", "a") is None
    ignore = SimCluster()
    for obj in _policy("object.metadata.labels['missing']", failure="Ignore"):
        ignore.store.create(obj)
    assert ignore.store.create(_pod("a", {"app": "x"}))["metadata"]["labels"] == {"app": "x"}
