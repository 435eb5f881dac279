"""RBAC in controller mode (pure, the CLI flag, the component under the mock engine): exactly the
observe LISTs, one CRD GET by name (cluster-scoped) and pulumi-kubernetes on the custom resource —
no action, no Event write, no expanded kind — and mode/option mismatches refused before output."""

from __future__ import annotations

import pulumi
import pytest
import yaml
from conftest import validate_manifest
from rbac_scenarios import APIS, NS, controller_scenarios, scenarios

from pulumi_lws import rbac
from pulumi_lws.cli import build_parser, main
from pulumi_lws.components import controller
from pulumi_lws.components.rbac import ReconcilerRbac
from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.workloads import workload_for

SAMPLE = {api: next(s for s in controller_scenarios() if s.api == api) for api in APIS}
CRD_GROUP, CRDS = rbac.CRD.group, rbac.CRD.plural


def expected_grants(scenario) -> set[tuple[str, str, str, bool, tuple[str, ...]]]:
    """What controller mode needs, written out from the component's code path (controller.py):
    the scope's LISTs, the CRD GET by name, MANAGED_VERBS on the CR and its await's Events."""
    workload = workload_for(scenario.api)
    up = workload.upstream
    scope = workload.scope(workload.parse(scenario.manifest))
    gang = rbac.fixed_gang_provider(scenario.api) or "kubernetes"
    out = {
        (rbac.kinds()[rbac.resolve(k, gang)].group, rbac.kinds()[rbac.resolve(k, gang)].plural, "list", False, ())
        for k in scope.kinds
    }
    out |= {("", "nodes", "list", True, ())} if scope.nodes else set()
    out |= {(CRD_GROUP, CRDS, "get", True, (up.crd_name,))}
    out |= {(up.group, up.plural, verb, False, ()) for verb in rbac.MANAGED_VERBS}
    return out | {("", "events", "list", False, ()), ("", "events", "watch", False, ())}


@pytest.mark.parametrize("scenario", controller_scenarios(), ids=lambda s: s.name)
def test_controller_mode_grants_exactly_observe_crd_check_and_the_custom_resource(scenario):
    policy = rbac.policy_for_manifest(scenario.manifest, mode="controller")
    got = {(g.group, g.resource, g.verb, g.cluster, g.resource_names) for g in policy.grants}
    assert got == expected_grants(scenario)
    operator_free = rbac.policy_for_manifest(scenario.manifest)
    # what operator-free adds and controller mode must not carry: actions, Event writes, expanded kinds
    assert not [g for g in policy.grants if g.why.startswith(("action", "events:"))]
    assert not policy.allows("", "events", "create", cluster=False)
    assert not policy.allows("", "pods", "patch", cluster=False) and not policy.allows(
        "", "pods", "delete", cluster=False
    )
    assert not policy.allows("apps", "statefulsets", "patch", cluster=False)
    assert operator_free.allows("apps", "statefulsets", "patch", cluster=False)
    assert not operator_free.allows(
        CRD_GROUP, CRDS, "get", cluster=True, name=workload_for(scenario.api).upstream.crd_name
    )


def test_the_crd_grant_is_that_one_crd_read_by_name():
    up = workload_for("LeaderWorkerSet").upstream
    policy = rbac.policy_for_manifest(SAMPLE["LeaderWorkerSet"].manifest, mode="controller")
    assert policy.allows(CRD_GROUP, CRDS, "get", cluster=True, name=up.crd_name)
    assert not policy.allows(CRD_GROUP, CRDS, "get", cluster=True, name=workload_for("ModelServing").upstream.crd_name)
    assert not policy.allows(CRD_GROUP, CRDS, "get", cluster=True)  # a nameless request never matches resourceNames
    assert not policy.allows(CRD_GROUP, CRDS, "list", cluster=True, name=up.crd_name)
    assert policy.rules(cluster=True) == [
        {"apiGroups": [CRD_GROUP], "resources": [CRDS], "resourceNames": [up.crd_name], "verbs": ["get"]}
    ]


def test_controller_rbac_of_all_three_apis_is_valid_yaml_with_one_crd_rule_each():
    manifests = [SAMPLE[api].manifest for api in APIS] + [
        dict(SAMPLE["LeaderWorkerSet"].manifest, metadata={"name": "other", "namespace": "team-b"})
    ]
    text = rbac.rbac_yaml(manifests, mode="controller", service_account="pulumi-operator/lws-stack")
    assert (
        text.startswith("# least-privilege RBAC for `pulumi up` of LeaderWorkerSet serving/")
        and "in mode controller" in text
    )
    docs = list(yaml.safe_load_all(text))
    for doc in docs:
        validate_manifest(doc)  # kubernetes-validate, strict, 1.35
    assert [(d["kind"], d["metadata"].get("namespace")) for d in docs] == [
        ("Role", NS),
        ("RoleBinding", NS),
        ("Role", "team-b"),
        ("RoleBinding", "team-b"),
        ("ClusterRole", None),
        ("ClusterRoleBinding", None),
    ]
    cluster = docs[4]["rules"]
    assert sorted(r["resourceNames"][0] for r in cluster) == sorted(workload_for(a).upstream.crd_name for a in APIS)
    assert all(r["verbs"] == ["get"] and r["resources"] == [CRDS] for r in cluster)
    custom = {(r["apiGroups"][0], r["resources"][0]) for r in docs[0]["rules"] if "create" in r["verbs"]}
    assert custom == {(workload_for(a).upstream.group, workload_for(a).upstream.plural) for a in APIS}


def test_mode_mismatches_are_refused_naming_the_field():
    lws = SAMPLE["LeaderWorkerSet"].manifest
    with pytest.raises(SpecError, match=r"mode: .*supported values: \"operator-free\", \"controller\""):
        rbac.policy_for_manifest(lws, mode="operator")
    with pytest.raises(SpecError, match="adoption"):
        rbac.policy_for_manifest(lws, mode="controller", adoption=True)
    with pytest.raises(SpecError, match="gangProvider"):
        rbac.policy_for_manifest(lws, mode="controller", gang_provider="volcano")
    # ModelServing always observes Volcano's PodGroups: no option to refuse
    rbac.policy_for_manifest(SAMPLE["ModelServing"].manifest, mode="controller", gang_provider="volcano")
    with pytest.raises(ValueError, match="renders nothing"):
        rbac.policy(
            "LeaderWorkerSet", NS, scope_kinds=("Pod",), nodes=False, rendered={"StatefulSet"}, mode="controller"
        )


def test_the_modes_are_the_components_and_the_clis():
    assert rbac.MODES == controller.MODES
    render = build_parser()._subparsers._group_actions[0].choices["render"]
    [flag] = [a for a in render._actions if a.dest == "mode"]
    assert tuple(flag.choices) == rbac.MODES


def test_render_rbac_mode_controller(tmp_path, capsys):
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump_all([SAMPLE[api].manifest for api in APIS]))
    assert main(["render", str(path), "--rbac", "--mode", "controller", "--service-account", "ops/runner"]) == 0
    out = capsys.readouterr().out
    assert out == rbac.rbac_yaml(
        [SAMPLE[api].manifest for api in APIS], mode="controller", service_account="ops/runner"
    )
    assert main(["render", str(path), "--mode", "controller"]) == 2  # --mode means nothing without --rbac
    assert capsys.readouterr().err.startswith("render: --mode only with --rbac")
    assert main(["render", str(path), "--rbac", "--mode", "controller", "--gang-provider", "volcano"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "gangProvider" in captured.err


@pytest.mark.parametrize("api", APIS)
@pulumi.runtime.test
def test_component_in_controller_mode(mocks, api):
    component = ReconcilerRbac(
        "lws-rbac",
        {"manifests": [SAMPLE[api].manifest], "mode": "controller", "service_account": "pulumi-operator/lws-stack"},
    )

    def check(outputs):
        namespaces, cluster_role = outputs[:2]
        registered = {a.typ: a.inputs for a in mocks.registered if a.custom}
        assert namespaces == [NS] and cluster_role == "lws-rbac-controller"  # cluster-scoped CRD check; per-mode name
        assert set(registered) == {
            f"kubernetes:rbac.authorization.k8s.io/v1:{k}"
            for k in ("Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding")
        }
        role = registered["kubernetes:rbac.authorization.k8s.io/v1:Role"]["rules"]
        policy = rbac.policy_for_manifest(SAMPLE[api].manifest, mode="controller")
        assert role == policy.rules(cluster=False)
        assert registered["kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"]["rules"] == policy.rules(cluster=True)
        for doc in mocks.manifests():
            validate_manifest(doc)

    return pulumi.Output.all(
        component.role_namespaces, component.cluster_role, *[r.urn for r in component.resources]
    ).apply(check)


def test_component_refuses_a_mode_mismatch_before_registering(mocks):
    with pytest.raises(SpecError, match="mode"):
        ReconcilerRbac("bad", {"manifests": [], "mode": "operator"})
    with pytest.raises(SpecError, match="adoption"):
        ReconcilerRbac("bad", {"manifests": [SAMPLE["ModelServing"].manifest], "mode": "controller", "adoption": True})
    with pytest.raises(SpecError, match="gangProvider"):
        ReconcilerRbac("bad", {"manifests": [], "mode": "controller", "gang_provider": "volcano"})
    assert mocks.registered == []


def test_operator_free_adoption_disowns_what_upstream_owns():
    """LWS: the CR owns what pulumi-lws renders in its place (Pods belong to their StatefulSet);
    Kthena creates Pods itself, owned by the ModelServing, so their disown is granted too."""
    by = {s.name: s for s in scenarios()}
    lws = rbac.policy_for_manifest(by["lws-adoption"].manifest, adoption=True)
    ms = rbac.policy_for_manifest(by["ms-adoption"].manifest, adoption=True)
    plain_ms = rbac.policy_for_manifest(by["ms-pd"].manifest)
    assert ms.allows("", "pods", "patch", cluster=False) and not plain_ms.allows("", "pods", "patch", cluster=False)
    disowned = {g.why.rpartition(" ")[2] for g in lws.grants if g.why.startswith("action disown")}
    assert disowned == {"ControllerRevision", "Service", "StatefulSet"}  # Ordinal: no Deployment rendered


@pytest.mark.parametrize("api", APIS)
def test_the_two_modes_rbac_objects_never_share_a_name(api, tmp_path, capsys):
    """docs/modes.md: switching modes, the new mode's RBAC is applied while the old one still exists."""
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(SAMPLE[api].manifest))
    names = {}
    for mode in ("operator-free", "controller"):
        assert main(["render", str(path), "--rbac", "--mode", mode]) == 0
        docs = [d for d in yaml.safe_load_all(capsys.readouterr().out) if d]
        names[mode] = {(d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"]) for d in docs}
        assert {n for _, _, n in names[mode]} == {rbac.object_name("pulumi-lws", mode)}
    assert not names["operator-free"] & names["controller"]


@pytest.mark.parametrize("api", APIS)
def test_render_rbac_adoption_adds_disown_in_operator_free_mode_only(api, tmp_path, capsys):
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(SAMPLE[api].manifest))
    assert main(["render", str(path), "--rbac", "--adoption"]) == 0
    adopting = capsys.readouterr().out
    assert adopting.startswith("# least-privilege RBAC")
    expected = rbac.policy_for_manifest(SAMPLE[api].manifest, adoption=True)
    role = next(d for d in yaml.safe_load_all(adopting) if d and d["kind"] == "Role")
    assert role["rules"] == expected.rules(cluster=False)
    plain = rbac.policy_for_manifest(SAMPLE[api].manifest)
    assert set(expected.grants) > set(plain.grants) and any("disown" in g.why for g in expected.grants)
    assert main(["render", str(path), "--rbac", "--adoption", "--mode", "controller"]) == 2
    assert "adoption" in capsys.readouterr().err
    assert main(["render", str(path), "--adoption"]) == 2
    assert capsys.readouterr().err.startswith("render: --adoption only with --rbac")
