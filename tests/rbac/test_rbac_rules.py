"""pulumi_lws.rbac as a pure function: what each API may plan and render is declared and checked
against the code, rules are namespaced unless they must not be, and the RBAC YAML is valid."""

from __future__ import annotations

import ast

import pytest
import yaml
from conftest import REPO_ROOT, validate_manifest
from rbac_scenarios import APIS, NS, scenarios

from pulumi_lws import rbac
from pulumi_lws.cluster.live import LiveCluster
from pulumi_lws.cluster.resources import resource_classes
from pulumi_lws.core.contract.snapshot import EMPTY
from pulumi_lws.sim.driver.expansion import steady_state
from pulumi_lws.workloads import workload_for

#: the packages whose planners build each API's actions (DisaggregatedSet nests LeaderWorkerSet; the
#: LeaderWorkerSet failure pipeline's retain/release finalizer actions are built in core/features/retention.py)
API_PACKAGES = {
    "LeaderWorkerSet": ("lws", "core/features/retention.py"),
    "ModelServing": ("modelserving",),
    "DisaggregatedSet": ("lws", "core/features/retention.py", "disaggregatedset"),
}
CONSTANTS = {"SCALER_KIND": "DisaggregatedSetRoleScaler"}


def _literal_actions(package: str) -> set[tuple[str, str]]:
    """(verb, kind) of every ``Action(verb, kind, ...)`` call in a package's sources."""
    found = set()
    root = REPO_ROOT / "pulumi_lws" / package
    for path in root.rglob("*.py") if root.is_dir() else [root]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Action" and len(node.args) >= 2:
                verb, kind = node.args[0], node.args[1]
                kind_value = kind.value if isinstance(kind, ast.Constant) else CONSTANTS.get(getattr(kind, "id", ""))
                assert isinstance(verb, ast.Constant) and kind_value, f"{path}: Action with a computed verb/kind"
                found.add((verb.value, kind_value))
    return found


@pytest.mark.parametrize("api", APIS)
def test_declared_actions_are_exactly_what_the_planners_build(api):
    literal = set().union(*(_literal_actions(p) for p in API_PACKAGES[api]))
    assert literal == set(rbac.api_actions(api)), f"update the rbac.actions fact of {api}"


def test_every_actuator_verb_has_its_requests():
    handlers = set(LiveCluster.__dict__["_handlers"](LiveCluster.__new__(LiveCluster)))
    assert handlers <= set(rbac.VERB_REQUESTS), f"verbs without RBAC: {sorted(handlers - set(rbac.VERB_REQUESTS))}"


def test_kind_table_matches_the_live_backend():
    for gang in ("kubernetes", "volcano"):
        for kind, res in resource_classes(gang).items():
            info = res._api_info
            ours = rbac.kinds()[rbac.resolve(kind, gang)]
            assert (ours.group, ours.plural) == (info.resource.group, info.plural), kind


def _rendered(scenario) -> set[str]:
    workload = workload_for(scenario.api)
    spec = workload.parse(scenario.manifest)
    gang = rbac.fixed_gang_provider(scenario.api) or scenario.gang_provider
    first = workload.reconcile(spec, EMPTY, workload.options(gang_provider=gang)).manifests
    steady = steady_state(scenario.manifest, gang_provider=gang).reconciled.manifests
    return {rbac.kind_of_manifest(m) for m in (*first, *steady)}


@pytest.mark.parametrize("api", APIS)
def test_scenarios_render_every_kind_the_api_declares(api):
    """No pulumi-kubernetes rule an API can be given is unused by its renderer, and vice versa."""
    rendered = set().union(*(_rendered(s) for s in scenarios() if s.api == api))
    assert rendered == rbac.api_renders(api)


def test_pulumi_kubernetes_manages_exactly_the_rendered_kinds():
    for scenario in scenarios():
        policy = rbac.policy_for_manifest(scenario.manifest, gang_provider=scenario.gang_provider)
        managed = {
            (g.group, g.resource) for g in policy.grants if g.who == rbac.PULUMI_KUBERNETES and g.verb == "create"
        }
        expected = {(rbac.kinds()[k].group, rbac.kinds()[k].plural) for k in _rendered(scenario)}
        assert managed == expected, scenario.name
        for group, resource in managed:
            verbs = {
                g.verb
                for g in policy.grants
                if (g.group, g.resource) == (group, resource) and g.who == rbac.PULUMI_KUBERNETES
            }
            assert verbs == set(rbac.MANAGED_VERBS), (scenario.name, resource)
        pk = {(g.resource, g.verb) for g in policy.grants if g.who == rbac.PULUMI_KUBERNETES}
        # await: Services watch their Endpoints; rendered StatefulSets/Deployments skip the built-in await
        assert {("endpoints", "list"), ("endpoints", "watch"), ("events", "list"), ("events", "watch")} <= pk
        assert not {r for r, _ in pk} & {"replicasets", "persistentvolumeclaims"} and ("pods", "watch") not in pk


def test_await_watches_follow_skip_await():
    """A StatefulSet without ``pulumi.com/skipAwait`` would need its Pods watched."""
    with_await = rbac.policy("LeaderWorkerSet", NS, scope_kinds=("Pod",), nodes=False, rendered={"StatefulSet"})
    assert with_await.allows("", "pods", "watch", cluster=False)
    skipped = rbac.policy(
        "LeaderWorkerSet", NS, scope_kinds=("Pod",), nodes=False, rendered={"StatefulSet"}, awaited=()
    )
    assert not skipped.allows("", "pods", "watch", cluster=False) and skipped.allows("", "pods", "list", cluster=False)


#: per-pod values admission-policy: pulumi-kubernetes manages the cluster-scoped policy and binding
ADMISSION_RULES = [
    {"apiGroups": ["admissionregistration.k8s.io"], "resources": [plural], "verbs": sorted(rbac.MANAGED_VERBS)}
    for plural in ("mutatingadmissionpolicies", "mutatingadmissionpolicybindings")
]


def test_namespaced_by_default_cluster_scoped_only_for_nodes():
    for scenario in scenarios():
        policy = rbac.policy_for_manifest(scenario.manifest, gang_provider=scenario.gang_provider)
        cluster = policy.rules(cluster=True)
        if "per-pod-admission-policy" in scenario.name:
            assert [r for r in cluster if r in ADMISSION_RULES] == ADMISSION_RULES, scenario.name
            cluster = [r for r in cluster if r not in ADMISSION_RULES]
        spec = workload_for(scenario.api).parse(scenario.manifest)
        if workload_for(scenario.api).scope(spec).nodes:
            assert cluster == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]}], scenario.name
        else:
            assert cluster == [], scenario.name
    assert any(workload_for(s.api).scope(workload_for(s.api).parse(s.manifest)).nodes for s in scenarios())


def test_no_write_verb_on_what_nobody_writes():
    policy = rbac.policy_for_manifest(scenarios()[0].manifest)
    writes = {(g.resource, g.verb) for g in policy.grants if g.verb in ("create", "patch", "update", "delete")}
    assert not {w for w in writes if w[1] == "update"}  # SSA patches; nothing here PUTs
    assert ("pods", "create") not in writes and ("nodes", "patch") not in writes
    assert not [g for g in policy.grants if g.verb in ("*", "deletecollection", "escalate", "bind", "impersonate")]


def test_rbac_manifests_are_valid_and_bind_the_service_account():
    policies = [rbac.policy_for_manifest(s.manifest, gang_provider=s.gang_provider) for s in scenarios()]
    other = dict(scenarios()[0].manifest, metadata={"name": "other", "namespace": "team-b"})
    policies.append(rbac.policy_for_manifest(other))
    docs = rbac.manifests(policies, subject_namespace="pulumi-operator", subject_name="lws-stack")
    for doc in docs:
        validate_manifest(doc)
    kinds = [(d["kind"], d["metadata"].get("namespace")) for d in docs]
    assert kinds == [
        ("Role", NS),
        ("RoleBinding", NS),
        ("Role", "team-b"),
        ("RoleBinding", "team-b"),
        ("ClusterRole", None),
        ("ClusterRoleBinding", None),
    ]
    assert all(
        d["subjects"] == [{"kind": "ServiceAccount", "name": "lws-stack", "namespace": "pulumi-operator"}]
        for d in docs
        if d["kind"].endswith("Binding")
    )
    only_namespaced = rbac.manifests([rbac.policy_for_manifest(scenarios()[0].manifest)])
    assert [d["kind"] for d in only_namespaced] == ["Role", "RoleBinding"]
    yaml.safe_dump_all(docs)  # plain data


def test_an_unknown_rendered_kind_is_refused():
    with pytest.raises(ValueError, match=r"rbac\.renders"):
        rbac.policy("ModelServing", NS, scope_kinds=("Pod",), nodes=False, rendered={"Deployment"})


def test_a_bare_pod_group_follows_the_gang_provider():
    assert rbac.kinds()[rbac.resolve("PodGroup", "volcano")].group == "scheduling.volcano.sh"
    assert rbac.kinds()[rbac.resolve("PodGroup")].group == "scheduling.k8s.io"
    with pytest.raises(KeyError, match="Frobnicator"):
        rbac.resolve("Frobnicator")


def test_docs_list_every_grant_reason():
    text = (REPO_ROOT / "docs" / "rbac.md").read_text()
    for verb in rbac.VERB_REQUESTS:
        assert f"`{verb}`" in text, verb
