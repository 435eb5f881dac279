"""The three components inside a platform team's own ComponentResource (issue 15 item 6), under
the mock engine against the simulator.

``VllmService`` wraps one workload component, a Service and an HPA. For each component:
nesting changes none of the workload's children; a ``transforms`` label on every child (pod
templates included) converges and then causes no rollout and no change on two more reconciles;
renaming the component and moving it under the wrapper with ``aliases`` maps every old URN to a
new resource with the same inputs (nothing replaced); ``protect``, ``retain_on_delete`` and
explicit providers reach every child; destroy (the release hooks, then every registered object
deleted in the engine's order) leaves nothing behind, not even pods retained with the project's
finalizer — and without the hooks those pods would stay.

What the mock engine cannot show (emulated here, see docs/component.md): the real engine running
``transforms`` (sim/driver/pulumi_engine.py runs them as documented), resolving aliases (computed below
from the registered alias specs by Pulumi's documented child-alias rule), invoking delete hooks
under ``pulumi destroy --run-program`` (the test calls the registered hook), and its delete order
(the simulator's applier deletes dependents first, as the engine does).
"""

from __future__ import annotations

import copy
import pathlib
from typing import Any

import pulumi
import pytest
import yaml
from conftest import validate_manifest

from pulumi_lws.lws.rollout.failure.retention import RETAIN_FINALIZER, retain_actions
from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.sim.driver.pulumi_engine import EngineResult, run_program

ROOT = pathlib.Path(__file__).resolve().parents[2]
WORKER = {"spec": {"containers": [{"name": "vllm", "image": "nginxinc/nginx-unprivileged:1.27"}]}}
KINDS: dict[str, tuple[str, dict[str, Any]]] = {
    "LeaderWorkerSet": (
        "lws:index:LeaderWorkerSet",
        {"name": "llm", "replicas": 2, "size": 2, "worker_template": WORKER},
    ),
    "ModelServing": (
        "lws:index:ModelServing",
        {
            "manifest": yaml.safe_load((ROOT / "examples/modelserving-pd/ms.yaml").read_text()),
            "name": "llm",
            "replicas": 2,
        },
    ),
    "DisaggregatedSet": (
        "lws:index:DisaggregatedSet",
        {"manifest": yaml.safe_load((ROOT / "examples/disaggregated-pd/ds.yaml").read_text()), "name": "llm"},
    ),
}
TEAM = {"platform.example/team": "ml"}
STACK_URN = "urn:pulumi:sim::lws::pulumi:pulumi:Stack::lws-sim"


class VllmService(pulumi.ComponentResource):
    """A platform team's reusable component: one pulumi-lws workload, a Service and an HPA."""

    def __init__(
        self,
        name: str,
        kind: str,
        *,
        workload_name: str | None = None,
        workload_opts: pulumi.ResourceOptions | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        import pulumi_kubernetes as k8s

        import pulumi_lws

        super().__init__("platform:index:VllmService", name, {}, opts)
        args = copy.deepcopy(KINDS[kind][1])
        self.workload = getattr(pulumi_lws, kind)(
            workload_name or f"{name}-llm",
            args,
            pulumi.ResourceOptions.merge(pulumi.ResourceOptions(parent=self), workload_opts),
        )
        meta = {"name": f"{name}-api", "namespace": "default"}
        self.service = k8s.core.v1.Service(
            f"{name}-api",
            metadata=meta,
            spec={"selector": {"app.kubernetes.io/name": "llm"}, "ports": [{"port": 80, "targetPort": 8080}]},
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.workload]),
        )
        self.hpa = k8s.autoscaling.v2.HorizontalPodAutoscaler(
            f"{name}-hpa",
            metadata={**meta, "name": f"{name}-hpa"},
            spec={
                "scaleTargetRef": {
                    "apiVersion": "leaderworkerset.x-k8s.io/v1",
                    "kind": "LeaderWorkerSet",
                    "name": "llm",
                },
                "minReplicas": 1,
                "maxReplicas": 4,
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}},
                    }
                ],
            },
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({"stage": self.workload.stage})


def add_team_label(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
    """A platform-wide transform: a label on every Kubernetes object and on every pod template."""
    if not args.type_.startswith("kubernetes:") or args.type_.startswith("pulumi:providers:"):
        return None
    props = copy.deepcopy(dict(args.props))
    props["metadata"] = {
        **(props.get("metadata") or {}),
        "labels": {**((props.get("metadata") or {}).get("labels") or {}), **TEAM},
    }
    template = (props.get("spec") or {}).get("template")
    if isinstance(template, dict):
        template["metadata"] = {
            **(template.get("metadata") or {}),
            "labels": {**((template.get("metadata") or {}).get("labels") or {}), **TEAM},
        }
    return pulumi.ResourceTransformResult(props, args.opts)


def wrapped(kind: str, captured: list | None = None, **kw):
    def program():
        svc = VllmService("vllm", kind, **kw)
        if captured is not None:
            captured.append(svc.workload)
        pulumi.export("stage", svc.workload.stage)
        pulumi.export("actions", svc.workload.actions)
        pulumi.export("revision", svc.workload.revision)

    return program


def bare(kind: str, name: str = "llm", opts: pulumi.ResourceOptions | None = None):
    def program():
        import pulumi_lws

        workload = getattr(pulumi_lws, kind)(name, copy.deepcopy(KINDS[kind][1]), opts)
        pulumi.export("stage", workload.stage)
        pulumi.export("revision", workload.revision)

    return program


def workload_children(result: EngineResult, kind: str) -> dict[str, Any]:
    component = next(u for u, r in result.registrations.items() if r.type == KINDS[kind][0])
    return {u: r for u, r in result.registrations.items() if r.parent == component}


def manifests_by_key(result: EngineResult, names: set[str] | None = None) -> dict[tuple, dict]:
    return {
        (m["kind"], m["metadata"]["name"]): m
        for m in result.manifests
        if names is None or m["metadata"]["name"] in names
    }


def up(cluster: SimCluster, program, stack: str = "platform") -> tuple[EngineResult, Any]:
    result = run_program(program, cluster, cluster)
    applied = cluster.apply(result.manifests, stack_id=stack, dependencies=result.dependencies)
    cluster.settle()
    return result, applied


def converge(cluster: SimCluster, program, stack: str = "platform", rounds: int = 40) -> EngineResult:
    cluster.kubelet.config.instant = True
    for _ in range(rounds):
        result, _ = up(cluster, program, stack)
        if result.outputs["stage"]["complete"] and not result.outputs.get("actions"):
            return result
    raise AssertionError(f"did not converge in {rounds} reconciles: {result.outputs['stage']}")


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_nests_inside_a_platform_component_without_changing_its_children(kind):
    nested = run_program(wrapped(kind, workload_name="llm"), SimCluster(), SimCluster())
    alone = run_program(bare(kind), SimCluster(), SimCluster())
    wrapper = next(u for u, r in nested.registrations.items() if r.type == "platform:index:VllmService")
    component = next(u for u, r in nested.registrations.items() if r.type == KINDS[kind][0])
    assert nested.registrations[component].parent == wrapper
    children = workload_children(nested, kind)
    assert children and all(f"platform:index:VllmService${KINDS[kind][0]}$kubernetes:" in u for u in children)
    names = {m["metadata"]["name"] for m in alone.manifests}
    assert manifests_by_key(nested, names) == manifests_by_key(alone) and nested.stages == alone.stages
    siblings = {r.type for r in nested.registrations.values() if r.parent == wrapper}
    assert siblings == {
        KINDS[kind][0],
        "kubernetes:core/v1:Service",
        "kubernetes:autoscaling/v2:HorizontalPodAutoscaler",
    }
    service = next(u for u, r in nested.registrations.items() if r.name == "vllm-api")
    assert component in nested.registrations[service].dependencies or set(children) & set(
        nested.registrations[service].dependencies
    )
    for m in nested.manifests:
        validate_manifest(m)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_transform_label_on_every_child_causes_no_rollout(kind):
    cluster = SimCluster()
    program = wrapped(kind, opts=pulumi.ResourceOptions(transforms=[add_team_label]))
    steady = converge(cluster, program)
    labelled = [o for o in cluster.store.list("StatefulSet", "default") + cluster.store.list("Pod", "default")]
    assert labelled and all(o["metadata"]["labels"].get("platform.example/team") == "ml" for o in labelled)
    plain = run_program(wrapped(kind), SimCluster(), SimCluster())
    assert steady.outputs["revision"] == plain.outputs["revision"]  # the label is not part of the revision
    for _ in range(2):  # two more reconciles: no stage, no action, no change
        again, applied = up(cluster, program)
        assert again.outputs["stage"]["complete"] is True and again.outputs["actions"] == []
        assert not (applied.created or applied.updated or applied.replaced or applied.deleted), applied.lines()
        assert manifests_by_key(again) == manifests_by_key(steady)


def make_urn(parent: str, typ: str, name: str) -> str:
    """A URN as the engine builds it (the parent's qualified type chain, the root Stack left out)."""
    prefix, parent_type = "::".join(parent.split("::")[:2]), parent.split("::")[2]
    qualified = typ if parent_type == "pulumi:pulumi:Stack" else f"{parent_type}${typ}"
    return f"{prefix}::{qualified}::{name}"


def alias_urns(result: EngineResult, urn: str) -> set[str]:
    """Every URN the engine treats ``urn`` as having had: its alias specs, and (Pulumi's child-alias
    rule) each parent alias with the parent's name prefix of the child's name replaced."""
    reg = result.registrations[urn]
    out: set[str] = set()
    for spec in reg.aliases:
        if "urn" in spec:
            out.add(spec["urn"])
            continue
        parent = STACK_URN if spec.get("noParent") else (spec.get("parentUrn") or reg.parent)
        out.add(make_urn(parent, spec.get("type") or reg.type, spec.get("name") or reg.name))
    parent_reg = result.registrations.get(reg.parent)
    if parent_reg is not None:
        for parent_alias in alias_urns(result, reg.parent):
            alias_parent_name = parent_alias.rsplit("::", 1)[1]
            name = (
                alias_parent_name + reg.name[len(parent_reg.name) :]
                if reg.name.startswith(parent_reg.name)
                else reg.name
            )
            out.add(make_urn(parent_alias, reg.type, name))
    return out


def unmatched(old: EngineResult, new: EngineResult) -> list[str]:
    """Old URNs that no new resource is (or aliases): what the engine would delete and re-create."""
    known = {u: u for u in new.registrations} | {a: u for u in new.registrations for a in alias_urns(new, u)}
    return [u for u, r in old.registrations.items() if r.type != "pulumi:pulumi:Stack" and u not in known]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_rename_and_move_under_a_parent_with_aliases_replaces_nothing(kind):
    before = run_program(bare(kind, "llm"), SimCluster(), SimCluster())
    moved = wrapped(
        kind,
        workload_name="vllm-llm",
        workload_opts=pulumi.ResourceOptions(aliases=[pulumi.Alias(name="llm", parent=pulumi.ROOT_STACK_RESOURCE)]),
    )
    after = run_program(moved, SimCluster(), SimCluster())
    assert unmatched(before, after) == []
    # the same objects with the same inputs: no replacement, no diff
    names = {m["metadata"]["name"] for m in before.manifests}
    assert manifests_by_key(after, names) == manifests_by_key(before)
    # without the alias every old URN would be deleted and its object re-created
    assert (
        len(unmatched(before, run_program(wrapped(kind, workload_name="vllm-llm"), SimCluster(), SimCluster())))
        == len(before.registrations) - 1
    )


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_protect_retain_on_delete_and_explicit_providers_reach_every_child(kind):
    def program():
        import pulumi_kubernetes as k8s

        team = k8s.Provider("team-cluster")
        special = k8s.Provider("gpu-cluster")
        VllmService(
            "vllm",
            kind,
            opts=pulumi.ResourceOptions(protect=True, providers={"kubernetes": team}),
            workload_opts=pulumi.ResourceOptions(retain_on_delete=True),
        )
        VllmService("pinned", kind, workload_name="pinned-llm", workload_opts=pulumi.ResourceOptions(provider=special))

    result = run_program(program, SimCluster(), SimCluster())
    components = {r.name: u for u, r in result.registrations.items() if r.type == KINDS[kind][0]}
    kids = {n: {u: r for u, r in result.registrations.items() if r.parent == u_} for n, u_ in components.items()}
    protected = kids["vllm-llm"]
    assert protected and all(r.protect and r.retain_on_delete for r in protected.values())
    assert all("team-cluster" in r.provider for r in protected.values())
    assert result.registrations[components["vllm-llm"]].protect
    pinned = kids["pinned-llm"]
    assert pinned and all(
        "gpu-cluster" in r.provider and not r.protect and not r.retain_on_delete for r in pinned.values()
    )


def _objects(cluster: SimCluster) -> list[tuple[str, str]]:
    return sorted(
        (o["kind"], o["metadata"]["name"])
        for kind in ("StatefulSet", "Deployment", "Pod", "Service", "ControllerRevision", "HorizontalPodAutoscaler")
        for o in cluster.store.list(kind, "default")
    )


def _retain_one_group(cluster: SimCluster) -> list[str]:
    """What an exhausted restart budget leaves: one StatefulSet's pods finalized and deleted."""
    sts = max(cluster.store.list("StatefulSet", "default"), key=lambda s: s["metadata"]["name"])
    pods = [
        p
        for p in cluster.store.list("Pod", "default")
        if any(o.get("uid") == sts["metadata"]["uid"] for o in p["metadata"].get("ownerReferences") or [])
    ]
    assert pods
    cluster.execute("default", list(retain_actions(pods, "test: restart budget exhausted")))
    cluster.settle()
    return [p["metadata"]["name"] for p in pods]


def destroy(cluster: SimCluster, last: EngineResult, hooks: list, stack: str = "platform") -> list[str]:
    """``pulumi destroy --run-program``: the before-delete hooks, then every object deleted (the
    deletion order is returned: ``Kind/name``)."""
    for hook in hooks:
        hook(pulumi.ResourceHookArgs(urn="", id="", name=hook.name, type=""))
    deleted = cluster.apply([], stack_id=stack).deleted
    for _ in range(5):  # grace periods run out, the garbage collector follows owner references
        cluster.step(cluster.clock.now + 60)
        cluster.settle()
    return deleted


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_destroy_removes_everything_including_retained_pods(kind):
    for with_hooks in (True, False):
        cluster, captured = SimCluster(), []
        last = converge(cluster, wrapped(kind, captured))
        workloads = [
            u
            for u, r in last.registrations.items()
            if r.type in ("kubernetes:apps/v1:StatefulSet", "kubernetes:apps/v1:Deployment")
        ]
        hooks = {h for u in workloads for h in last.registrations[u].before_delete_hooks}
        assert hooks == {"vllm-vllm-llm-release-retained-pods"}  # bound on every workload child, by name
        retained = _retain_one_group(cluster)
        kept = [
            p
            for p in cluster.store.list("Pod", "default")
            if RETAIN_FINALIZER in (p["metadata"].get("finalizers") or [])
        ]
        assert sorted(p["metadata"]["name"] for p in kept) == sorted(retained)
        captured = []
        last = run_program(wrapped(kind, captured), cluster, cluster)  # the program destroy --run-program runs
        order = destroy(cluster, last, [captured[0]._release_hook] if with_hooks else [])
        position = {name: i for i, name in enumerate(order)}
        assert len(order) == len(last.manifests)  # everything the program registered
        for dependent, dependencies in last.dependencies.items():  # dependents go first (Pulumi's order)
            assert all(position[f"{dependent[0]}/{dependent[2]}"] < position[f"{d[0]}/{d[2]}"] for d in dependencies)
        if with_hooks:
            assert _objects(cluster) == []
        else:  # the finalizer keeps the retained pods forever; their StatefulSet (background) is gone
            assert {n for k, n in _objects(cluster) if k == "Pod"} == set(retained)
            assert not [n for k, n in _objects(cluster) if k in ("StatefulSet", "Deployment")]
