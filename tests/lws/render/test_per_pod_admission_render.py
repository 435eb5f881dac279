"""Per-pod values ``admission-policy`` (issue 28): what the expansion renders, its validation and
its apply order. The simulated admission of these policies is tested in
tests/lws/e2e/test_per_pod_admission_sim.py."""

from __future__ import annotations

import copy
from typing import Any

import kubernetes_validate
import pytest

from pulumi_lws.core.contract.dependencies import check_dependency_order
from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.reconcile import reconcile
from pulumi_lws.lws.render.admission import (
    BINDING_KIND,
    POLICY_KIND,
    POLICY_VERSIONS,
    SERVED_SINCE,
    mode_line,
    policy_name,
)
from pulumi_lws.sim.cluster.cel import parse

PER_POD = "pulumi-lws.io/per-pod-values"
TPU = {"limits": {"google.com/tpu": "4"}}


def manifest(
    *,
    mode: str | None = "admission-policy",
    size: int = 9,
    subgroup: int | None = 4,
    leader_tpu: bool = False,
    annotations: dict[str, str] | None = None,
    replicas: int = 2,
) -> dict[str, Any]:
    ann = dict(annotations or {})
    if mode is not None:
        ann[PER_POD] = mode
    lwt: dict[str, Any] = {
        "size": size,
        "leaderTemplate": {
            "spec": {"containers": [{"name": "l", "image": "img:1", **({"resources": TPU} if leader_tpu else {})}]}
        },
        "workerTemplate": {"spec": {"containers": [{"name": "w", "image": "img:1", "resources": TPU}]}},
    }
    if subgroup:
        lwt["subGroupPolicy"] = {"subGroupSize": subgroup}
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "test-sample", "namespace": "default", "annotations": ann},
        "spec": {"replicas": replicas, "leaderWorkerTemplate": lwt},
    }


def render(m: dict[str, Any]) -> tuple[list[dict[str, Any]], Any]:
    result = reconcile(LeaderWorkerSet.from_manifest(copy.deepcopy(m)), Snapshot())
    return [dict(x) for x in result.manifests], result.dependencies


def by_kind(manifests: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [m for m in manifests if m["kind"] == kind]


def test_template_mode_renders_no_policy_and_the_same_objects_as_before() -> None:
    """Default (no annotation) and an explicit ``template`` render the very same manifests."""
    default, _ = render(manifest(mode=None))
    explicit, _ = render(manifest(mode="template"))
    assert not by_kind(default, POLICY_KIND) and not by_kind(default, BINDING_KIND)
    strip = [{**m, "metadata": {**m["metadata"], "annotations": {}}} for m in explicit]
    assert [m["kind"] for m in default] == [m["kind"] for m in explicit]
    assert [m.get("spec") for m in default] == [m.get("spec") for m in strip]


def test_policy_and_binding_come_first_and_every_statefulset_depends_on_them() -> None:
    manifests, deps = render(manifest())
    name = "pulumi-lws.default.test-sample"
    assert [m["kind"] for m in manifests[:2]] == [POLICY_KIND, BINDING_KIND]
    assert all(m["metadata"]["name"] == name and "namespace" not in m["metadata"] for m in manifests[:2])
    assert deps[(BINDING_KIND, name)] == ((POLICY_KIND, name),)
    statefulsets = by_kind(manifests, "StatefulSet")
    assert len(statefulsets) == 3
    for sts in statefulsets:
        assert {(POLICY_KIND, name), (BINDING_KIND, name)} <= set(deps[("StatefulSet", sts["metadata"]["name"])])
    check_dependency_order(manifests, deps)


def test_binding_scopes_the_policy_to_this_leaderworkerset_pods() -> None:
    manifests, _ = render(manifest())
    binding = by_kind(manifests, BINDING_KIND)[0]
    assert binding["spec"] == {
        "policyName": "pulumi-lws.default.test-sample",
        "matchResources": {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "default"}},
            "objectSelector": {"matchLabels": {L.NAME: "test-sample"}},
        },
    }
    policy = by_kind(manifests, POLICY_KIND)[0]["spec"]
    assert policy["matchConstraints"]["resourceRules"] == [
        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}
    ]
    assert policy["failurePolicy"] == "Fail" and policy["reinvocationPolicy"] == "Never"


@pytest.mark.parametrize("version", POLICY_VERSIONS)
def test_rendered_policy_objects_validate_against_every_release_serving_their_version(version: str) -> None:
    """Strict kubernetes-validate for each bundled Kubernetes release that serves the version
    (v1alpha1 from 1.32, v1beta1 from 1.34, v1 from 1.36); the pod-bearing objects against 1.35."""
    m = manifest(
        annotations={
            "pulumi-lws.io/admission-policy-api-version": version,
            L.EXCLUSIVE_TOPOLOGY: "cloud.google.com/gke-nodepool",
            L.SUBGROUP_EXCLUSIVE_TOPOLOGY: "kubernetes.io/hostname",
        },
        leader_tpu=True,
    )
    manifests, _ = render(m)
    since = tuple(int(x) for x in SERVED_SINCE[version][0].split("."))
    releases = [
        r
        for r in ("1.32.0", "1.33.0", "1.34.0", "1.35.0", "1.36.0", "1.37.0")
        if tuple(map(int, r.split(".")[:2])) >= since
    ]
    served = []
    for release in releases:
        try:
            for obj in manifests[:2]:
                assert obj["apiVersion"] == f"admissionregistration.k8s.io/{version}"
                kubernetes_validate.validate(obj, release, strict=True)
            served.append(release)
        except kubernetes_validate.utils.SchemaNotFoundError:
            continue  # a later release dropped this pre-GA version
    assert served and served[0] == f"{SERVED_SINCE[version][0]}.0"
    for obj in manifests[2:]:
        kubernetes_validate.validate(obj, "1.35.0", strict=True)


def test_every_rendered_expression_parses_as_cel() -> None:
    m = manifest(annotations={L.EXCLUSIVE_TOPOLOGY: "zone", L.SUBGROUP_EXCLUSIVE_TOPOLOGY: "host"}, leader_tpu=True)
    policy = render(m)[0][0]["spec"]
    expressions = [c["expression"] for c in policy["matchConditions"]] + [v["expression"] for v in policy["variables"]]
    for mutation in policy["mutations"]:
        expressions.append((mutation.get("applyConfiguration") or mutation.get("jsonPatch"))["expression"])
    for expression in expressions:
        parse(expression)  # the CEL grammar (a nested ?: in the middle needs parentheses)
    assert [mu["patchType"] for mu in policy["mutations"]] == ["ApplyConfiguration"] * 3 + ["JSONPatch"] * 2


def test_policy_precomputes_one_group_key_per_leader_ordinal() -> None:
    policy = render(manifest(replicas=3))[0][0]["spec"]
    keys = next(v["expression"] for v in policy["variables"] if v["name"] == "groupKeys")
    from pulumi_lws.lws import names

    for i in range(3):
        assert f'"{i}": "{names.group_key("default", "test-sample", i)}"' in keys
    assert '"3"' not in keys


def test_worker_template_carries_the_subgroup_tables_and_downward_tpu_env() -> None:
    manifests, _ = render(manifest())
    worker = next(m for m in manifests if m["metadata"]["name"] == "test-sample-1")
    tmpl = worker["spec"]["template"]
    ann = tmpl["metadata"]["annotations"]
    assert ann["pulumi-lws.io/subgroup-tpu-hostnames.1"] == ",".join(
        f"test-sample-1-{j}.test-sample" for j in range(5, 9)
    )  # the LWS docs' example: hostnames of the TPU workers of the same subgroup only
    assert ann["pulumi-lws.io/tpu-containers"] == "1"
    assert set(k for k in ann if k.startswith("pulumi-lws.io/subgroup-key.")) == {
        "pulumi-lws.io/subgroup-key.0",
        "pulumi-lws.io/subgroup-key.1",
    }
    assert L.SUBGROUP_INDEX not in tmpl["metadata"]["labels"]  # the policy sets it per pod
    env = {e["name"]: e for e in tmpl["spec"]["containers"][0]["env"]}
    assert (
        env["TPU_WORKER_ID"]["valueFrom"]["fieldRef"]["fieldPath"]
        == "metadata.annotations['pulumi-lws.io/tpu-worker-id.0']"
    )
    assert env["TPU_NAME"]["value"] == "test-sample-1"


def test_leader_drops_the_static_exclusive_term_the_policy_replaces() -> None:
    topo = {L.EXCLUSIVE_TOPOLOGY: "zone"}
    template_mode, _ = render(manifest(mode="template", annotations=topo))
    admission, _ = render(manifest(annotations=topo))
    leader = lambda ms: next(m for m in by_kind(ms, "StatefulSet") if m["metadata"]["name"] == "test-sample")  # noqa: E731
    assert "affinity" in leader(template_mode)["spec"]["template"]["spec"]
    assert "affinity" not in leader(admission)["spec"]["template"]["spec"]


@pytest.mark.parametrize(
    ("annotations", "group_identity", "path", "fragment"),
    [
        (
            {PER_POD: "webhook"},
            None,
            f"metadata.annotations[{PER_POD}]",
            'supported values: "template", "admission-policy"',
        ),
        ({PER_POD: "admission-policy"}, "Hash", f"metadata.annotations[{PER_POD}]", "groupIdentity Ordinal"),
        (
            {PER_POD: "admission-policy", "pulumi-lws.io/admission-policy-api-version": "v2"},
            None,
            "metadata.annotations[pulumi-lws.io/admission-policy-api-version]",
            '"v1alpha1", "v1beta1", "v1"',
        ),
    ],
)
def test_bad_per_pod_values_name_the_field(
    annotations: dict, group_identity: str | None, path: str, fragment: str
) -> None:
    m = manifest(mode=None, annotations=annotations, subgroup=None)
    if group_identity:
        m["spec"]["groupIdentity"] = group_identity
    with pytest.raises(SpecError) as err:
        LeaderWorkerSet.from_manifest(m)
    assert any(e.path == path and fragment in e.message for e in err.value.errors), err.value.errors


def test_mode_line_states_the_mode_and_the_kubernetes_it_needs() -> None:
    admission = LeaderWorkerSet.from_manifest(manifest())
    assert mode_line(admission).startswith(
        "per-pod values: admission-policy (MutatingAdmissionPolicy admissionregistration.k8s.io/v1beta1"
    )
    assert "Kubernetes >= 1.34" in mode_line(admission)
    assert policy_name(admission) == "pulumi-lws.default.test-sample"
    assert mode_line(LeaderWorkerSet.from_manifest(manifest(mode=None))).startswith("per-pod values: template")


def test_component_argument_is_the_manifest_annotation() -> None:
    from pulumi_lws.components.args import build_spec

    built = build_spec(
        "LeaderWorkerSet", "test-sample", {"manifest": manifest(mode=None), "per_pod_values": "admission-policy"}
    )
    assert built.spec.metadata.annotations[PER_POD] == "admission-policy"
    with pytest.raises(SpecError) as err:
        build_spec("LeaderWorkerSet", "test-sample", {"manifest": manifest(mode=None), "per_pod_values": "webhook"})
    assert [e.path for e in err.value.errors] == [f"metadata.annotations[{PER_POD}]"]


def test_the_mode_is_not_part_of_the_revision_nor_of_what_rollback_restores() -> None:
    """Switching modes makes no new revision (no group is rolled as a new revision; the templates
    change in place like an exclusive-topology annotation) and rollback restores only covered
    spec fields, never the mode."""
    from pulumi_lws.lws import rollback
    from pulumi_lws.lws.revision import revision_key

    template = LeaderWorkerSet.from_manifest(manifest(mode=None))
    admission = LeaderWorkerSet.from_manifest(manifest())
    assert revision_key(template) == revision_key(admission)
    assert rollback.covered(template) == rollback.covered(admission)
    assert all(path[0] == "spec" for path in rollback.covered(admission))


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from pulumi_lws.lws.group_shape import subgroup_index  # noqa: E402
from pulumi_lws.sim.cluster.cel import LazyVariables, evaluate  # noqa: E402


def _policy_variables(size: int, sgs: int) -> list[tuple[str, str]]:
    policy = render(manifest(size=size, subgroup=sgs, replicas=1))[0][0]["spec"]
    return [(v["name"], v["expression"]) for v in policy["variables"]]


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_cel_subgroup_index_and_tpu_worker_id_are_upstreams(data) -> None:
    """The policy's CEL ``subgroup`` and ``tpuWorkerID`` equal upstream's ``getSubGroupIndex`` and
    ``addTPUVariablesSubGroup`` arithmetic for every valid shape and worker."""
    sgs = data.draw(st.integers(1, 8))
    size = data.draw(st.sampled_from([k * sgs for k in range(1, 5)] + [k * sgs + 1 for k in range(1, 5)]))
    worker = data.draw(st.integers(1, size - 1)) if size > 1 else 0
    leader_tpus = data.draw(st.booleans())
    annotations = {L.SIZE: str(size), L.SUBGROUP_SIZE: str(sgs), L.SUBGROUP_POLICY_TYPE: "LeaderWorker"}
    if leader_tpus:
        annotations[L.LEADER_REQUESTS_TPUS] = "true"
    pod = {"metadata": {"labels": {L.POD_INDEX: str(worker), L.WORKER_INDEX: str(worker)}, "annotations": annotations}}
    activation: dict[str, Any] = {"object": pod}
    activation["variables"] = LazyVariables(_policy_variables(size, sgs), activation)
    if worker == 0:
        return
    assert evaluate("variables.subgroup", activation) == subgroup_index(size, sgs, worker)
    expected_id = (worker if leader_tpus else worker - 1) % sgs
    assert evaluate("variables.tpuWorkerID", activation) == expected_id


@settings(max_examples=80, deadline=None)
@given(st.integers(-50, 50), st.integers(-9, 9).filter(bool))
def test_cel_int_division_truncates_toward_zero_like_go(a: int, b: int) -> None:
    quotient = int(a / b)  # exact for these magnitudes; Go's truncation
    assert evaluate(f"{a} / {b}", {}) == quotient
    assert evaluate(f"{a} % {b}", {}) == a - b * quotient
