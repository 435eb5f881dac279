"""Every API call the live backend makes is allowed by the generated RBAC, and no reconcile rule is
unused: per API, each scenario of :mod:`rbac_scenarios` seeds kmock (the in-memory API server)
with the workload's steady-state objects and pods, then runs what one reconcile sends — observe
its scope, execute one action of every (verb, kind) the API plans on what was observed, record
the stage's Events twice (create, then bump) — and kmock's request log is matched against
:func:`pulumi_lws.rbac.policy_for_manifest` of that manifest with RBAC's rule semantics.

Adoption scenarios execute the planner's own ``disown`` actions (every observed object upstream
owns), not a list derived from the RBAC module. Controller mode runs the real component under
Pulumi's mock engine with the live backend on kmock (its CRD check and observe over HTTP) and
checks, for pulumi-kubernetes (which kmock cannot record), that the policy manages exactly the
kinds the component registers."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
from typing import Any

import pytest

pytest.importorskip("kmock")

from rbac_scenarios import APIS, NS, Scenario, controller_scenarios, scenarios
from support.kmock_helpers import kmock_client

from pulumi_lws import rbac
from pulumi_lws.cluster.live import LiveCluster
from pulumi_lws.core.contract.stage import Action
from pulumi_lws.lws import labels as L
from pulumi_lws.sim.driver.expansion import steady_state
from pulumi_lws.workloads import registered, workload_for


def rbac_verb(request: Any) -> str:
    """The RBAC verb the API server authorizes a request as (HTTP method + URL shape)."""
    method = request.method.name
    if method == "GET":
        return {"WATCH": "watch", "LIST": "list"}.get(request.action.name, "get")
    if method == "DELETE" and request.name is None:
        return "deletecollection"
    return {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}[method]


#: one Action of each verb, on an observed object (params as the planners build them)
PARAMS: dict[str, dict[str, Any]] = {
    "label": {"labels": {"example.com/rbac": "yes"}},
    "annotate": {"annotations": {"example.com/rbac": "yes"}},
    "ungate": {"gate": L.GROUP_REPLACEMENT_GATE},
    "set-condition": {"type": "example.com/RbacChecked", "status": "True", "reason": "Test"},
    "finalize": {"add": ["example.com/rbac"]},
    "delete": {"propagation": "Background"},
    "patch-status": {"status": {"replicas": 1}},
}


def _kmock_key(kind: str) -> str:
    k = rbac.kinds()[kind]
    version = {
        "apps": "v1",
        "": "v1",
        "scheduling.k8s.io": "v1beta1",
        "scheduling.volcano.sh": "v1beta1",
        "disaggregatedset.x-k8s.io": "v1",
    }[k.group]
    return "/".join(p for p in (k.group, version, k.plural) if p)


def _pods(owner: dict[str, Any]) -> list[dict[str, Any]]:
    template = owner["spec"]["template"]
    name = owner["metadata"]["name"]
    return [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"{name}-{i}",
                "namespace": NS,
                "labels": dict(template["metadata"].get("labels") or {}),
            },
            "spec": {**copy.deepcopy(template["spec"]), "schedulingGates": [{"name": L.GROUP_REPLACEMENT_GATE}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
        }
        for i in range(int(owner["spec"].get("replicas") or 1))
    ]


def serve_optional_apis(kmock: Any) -> None:
    """A cluster with every optional API installed (the gang APIs, the CRDs): API discovery lists
    them, so the observe LISTs each kind its scope names (a kind not served is not LISTed)."""
    from kmock import ResourceInfo

    for workload in registered().values():
        for ref in workload.observes:
            if ref.optional and ref.namespaced:
                kmock.resources[f"{ref.api_version}/{ref.resource}"] = ResourceInfo(kind=ref.kind, namespaced=True)


def seed(kmock: Any, scenario: Scenario) -> list[dict[str, Any]]:
    """The steady-state objects of ``scenario`` and their pods, each with a uid (and, for adoption,
    an ownerReference to the upstream CR), on a cluster serving every optional API; returns what
    was stored."""
    serve_optional_apis(kmock)
    workload = workload_for(scenario.api)
    gang = rbac.fixed_gang_provider(scenario.api) or scenario.gang_provider
    objects = [copy.deepcopy(dict(m)) for m in steady_state(scenario.manifest, gang_provider=gang).reconciled.manifests]
    # cluster-scoped configuration (per-pod values' MutatingAdmissionPolicy) is never read back
    objects = [m for m in objects if rbac.kinds()[rbac.kind_of_manifest(m)].namespaced]
    objects += [p for o in objects if o["kind"] in ("StatefulSet", "Deployment") for p in _pods(o)]
    for obj in objects:
        meta = obj["metadata"]
        meta["namespace"], meta["uid"] = NS, f"uid-{obj['kind']}-{meta['name']}"
        # upstream's shape: the CR owns what it creates; LWS Pods belong to their StatefulSet,
        # Kthena creates Pods itself (each owned by the ModelServing)
        if scenario.adoption and (obj["kind"] != "Pod" or scenario.api == "ModelServing"):
            meta["ownerReferences"] = [
                {
                    "apiVersion": f"{workload.upstream.group}/v1",
                    "kind": workload.upstream.owner_kinds[0],
                    "name": "upstream",
                    "uid": "uid-upstream-cr",
                    "controller": True,
                }
            ]
        kmock.objects[(_kmock_key(rbac.kind_of_manifest(obj) if obj["kind"] != "Pod" else "Pod"), NS, meta["name"])] = (
            obj
        )
    return objects


Call = tuple[str, str, str, bool, "str | None"]


def calls_since(kmock: Any, before: int) -> set[Call]:
    """kmock's requests after the first ``before`` but API discovery's, as (group,
    resource[/sub], verb, cluster-scoped, object name)."""
    calls = set()
    for request in list(kmock)[before:]:
        if request.method.name == "GET" and (request.resource is None or request.resource.plural is None):
            # API discovery (/api, /apis, /apis/<group>/<version>): every authenticated identity may
            # GET it (Kubernetes' default ClusterRole system:discovery), so no generated rule grants it
            assert request.url.path.split("/")[1] in ("api", "apis"), f"non-resource request {request.url}"
            continue
        assert request.resource is not None, f"non-resource request {request.method} {request.url}"
        resource = request.resource.plural + (f"/{request.subresource}" if request.subresource else "")
        calls.add((request.resource.group or "", resource, rbac_verb(request), request.namespace is None, request.name))
    return calls


def denied(policy: rbac.Policy, calls: set[Call]) -> list[Call]:
    return sorted((c for c in calls if not policy.allows(c[0], c[1], c[2], cluster=c[3], name=c[4])), key=str)


def unused(grants: set[rbac.Grant], calls: set[Call]) -> list[rbac.Grant]:
    """The grants no call of ``calls`` was authorized by."""
    return sorted(
        (g for g in grants if not any(g.allows(c[0], c[1], c[2], cluster=c[3], name=c[4]) for c in calls)), key=str
    )


def reconcile_calls(kmock: Any, scenario: Scenario, objects: list[dict[str, Any]]) -> set[Call]:
    """What one reconcile of ``scenario`` (seeded with ``objects``) sends (:func:`calls_since`)."""
    workload = workload_for(scenario.api)
    spec = workload.parse(scenario.manifest)
    gang = rbac.fixed_gang_provider(scenario.api) or scenario.gang_provider
    before = len(list(kmock))  # kmock's log spans the test: keep this reconcile's requests only
    live = LiveCluster(kmock_client(str(kmock.url)), gang_provider=gang, now=lambda: 1000.0)
    scope = workload.scope(spec)
    snapshot = live.observe(scope)
    planned = set(rbac.api_actions(scenario.api))
    # adoption: the planner's own disowns (core.adoption: every observed object the CR owns)
    actions = [
        a
        for a in workload.reconcile(spec, snapshot, workload.options(gang_provider=gang)).stage.actions
        if a.verb == "disown"
    ]
    assert bool(actions) == scenario.adoption, [a.describe() for a in actions]
    # deletes last, and each action on its own object, so no action meets an object another removed
    for n, (verb, kind) in enumerate(sorted(planned, key=lambda a: (a[0] == "delete", a))):
        observed = sorted(snapshot.list(kind), key=lambda o: o["metadata"]["name"]) if kind in scope.kinds else []
        if observed:
            meta = observed[n % len(observed)]["metadata"]
            actions.append(Action(verb, kind, meta["name"], PARAMS[verb], uid=meta.get("uid"), reason="rbac test"))
    assert actions, "the scenario observed nothing to act on"
    live.execute(NS, actions)
    if hasattr(live, "record_events"):  # the reconcile records its stage as Events
        from pulumi_lws.core.features.events import WorkloadRef, report_events

        stage = dataclasses.replace(
            workload.reconcile(spec, snapshot, workload.options(gang_provider=gang)).stage, actions=tuple(actions[:1])
        )  # one action's Event is enough: LIST, CREATE, GET+PATCH
        ref = WorkloadRef(workload.kind, workload.api_version, NS, workload.identity(spec)[1])
        assert report_events(live, ref, stage) and report_events(live, ref, stage)  # created, then bumped
    return calls_since(kmock, before)


@pytest.mark.asyncio
@pytest.mark.parametrize("api", APIS)
async def test_live_calls_are_allowed_and_no_reconcile_rule_is_unused(kmock, api):
    """Each scenario's calls are allowed by that manifest's RBAC; over the API's scenarios, every
    grant the reconcile is given is a call it made."""
    used: set = set()
    granted: set = set()
    ran = []
    for scenario in (s for s in scenarios() if s.api == api):
        objects = seed(kmock, scenario)
        calls = await asyncio.to_thread(reconcile_calls, kmock, scenario, objects)
        policy = rbac.policy_for_manifest(
            scenario.manifest, gang_provider=scenario.gang_provider, adoption=scenario.adoption
        )
        assert not denied(policy, calls), f"{scenario.name}: forbidden by the generated RBAC: {denied(policy, calls)}"
        used |= calls
        granted |= {g for g in policy.grants if g.who == rbac.RECONCILE}
        ran.append(scenario.name)
    assert len(ran) >= 2, ran
    assert not unused(granted, used), f"{api}: granted but never used by the reconcile: {unused(granted, used)}"
    # the recorder sees what it should: LISTs, action writes and Events
    assert {c[2] for c in used} >= {"list", "get", "patch", "delete", "create"}


CRDS = "apiextensions.k8s.io/v1/customresourcedefinitions"


def serve_crd(kmock: Any, workload: Any) -> None:
    """The API's CustomResourceDefinition, as installing its controller leaves it."""
    upstream = workload.upstream
    kmock.resources[CRDS] = {}
    kmock.objects[(CRDS, None, upstream.crd_name)] = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": upstream.crd_name},
        "spec": {
            "group": upstream.group,
            "scope": "Namespaced",
            "versions": [],
            "names": {"kind": workload.kind, "plural": upstream.plural},
        },
    }


def controller_up(kmock: Any, scenario: Scenario) -> tuple[set[Call], Any]:
    """``pulumi up`` of the real component in controller mode under Pulumi's mock engine, its
    backend the live one on kmock: (the calls it sent, the engine's result)."""
    import pulumi_lws
    from pulumi_lws.sim.driver.pulumi_engine import run_program

    def program() -> None:
        getattr(pulumi_lws, scenario.api)("w", {"manifest": copy.deepcopy(scenario.manifest), "mode": "controller"})

    before = len(list(kmock))
    live = LiveCluster(
        kmock_client(str(kmock.url)),
        gang_provider=(rbac.fixed_gang_provider(scenario.api) or "kubernetes"),
        now=lambda: 1000.0,
    )
    result = run_program(program, live, live)  # an update, not a preview: nothing may be written even then
    return calls_since(kmock, before), result


@pytest.mark.asyncio
@pytest.mark.parametrize("api", APIS)
async def test_controller_mode_calls_are_allowed_and_no_rule_is_unused(kmock, api):
    """Controller mode sends the CRD GET and the observe LISTs, nothing else (no action, no
    Event); each is allowed by that manifest's controller-mode RBAC, every reconcile grant is used,
    and pulumi-kubernetes is granted exactly the custom resource the component registers."""
    workload = workload_for(api)
    used: set = set()
    granted: set = set()
    ran = []
    for scenario in (s for s in controller_scenarios() if s.api == api):
        seed(kmock, scenario)  # the controller's native objects carry the labels the observe selects
        serve_crd(kmock, workload)
        calls, result = await asyncio.to_thread(controller_up, kmock, scenario)
        policy = rbac.policy_for_manifest(scenario.manifest, mode="controller")
        assert not denied(policy, calls), f"{scenario.name}: forbidden by the generated RBAC: {denied(policy, calls)}"
        assert {c[2] for c in calls} == {"get", "list"}, sorted(calls, key=str)  # reads only
        assert [c for c in calls if c[2] == "get"] == [
            ("apiextensions.k8s.io", "customresourcedefinitions", "get", True, workload.upstream.crd_name)
        ]
        [cr] = result.manifests  # pulumi-kubernetes' part: the one CR, and what its await watches
        assert (cr["apiVersion"].partition("/")[0], cr["kind"]) == (workload.upstream.group, api)
        assert cr["metadata"]["annotations"]["pulumi.com/waitFor"].startswith("condition=")
        managed = {(g.group, g.resource, g.verb) for g in policy.grants if g.who == rbac.PULUMI_KUBERNETES}
        assert managed == {(workload.upstream.group, workload.upstream.plural, v) for v in rbac.MANAGED_VERBS} | {
            ("", "events", "list"),
            ("", "events", "watch"),
        }
        used |= calls
        granted |= {g for g in policy.grants if g.who == rbac.RECONCILE}
        ran.append(scenario.name)
    assert len(ran) >= 2, ran
    assert not unused(granted, used), f"{api}: granted but never used in controller mode: {unused(granted, used)}"


@pytest.mark.asyncio
async def test_controller_mode_without_the_crd_sends_only_the_allowed_crd_get(kmock):
    """The missing-controller error comes from one GET the RBAC allows (not a 403 that would
    silently skip the check); nothing is observed or registered."""
    from pulumi_lws.components.controller import ControllerNotInstalledError

    scenario = controller_scenarios()[0]
    kmock.resources[CRDS] = {}
    with pytest.raises(ControllerNotInstalledError, match=workload_for(scenario.api).upstream.crd_name):
        await asyncio.to_thread(controller_up, kmock, scenario)
    calls = calls_since(kmock, 0)
    policy = rbac.policy_for_manifest(scenario.manifest, mode="controller")
    assert calls == {
        ("apiextensions.k8s.io", "customresourcedefinitions", "get", True, workload_for(scenario.api).upstream.crd_name)
    } and not denied(policy, calls)
