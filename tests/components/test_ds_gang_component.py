"""DisaggregatedSet component's ``gang_provider`` / ``volcano_queue`` under Pulumi's mock engine
with the real reconcile: a role's ``spec.scheduling`` expands, in every child LeaderWorkerSet,
into the gang objects of the chosen provider exactly as the LeaderWorkerSet component's argument
of the same name does — Volcano: one ``scheduling.volcano.sh`` PodGroup per child group (with the
queue when asked, the pod templates naming it); kubernetes (default): the ``scheduling.k8s.io``
Workload + PodGroups and ``schedulingGroup`` on the pod templates. Every registered manifest
passes kubernetes-validate (strict, 1.35; the Volcano CRD kind has no schema there). Bad values
raise SpecError naming the field before anything registers; controller mode rejects them (the
upstream controller's gang scheduling is its own configuration)."""

from __future__ import annotations

import copy
import pathlib

import kubernetes_validate
import pytest
import yaml
from conftest import validate_manifest
from support.fakes_component import FakeActuator

from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.core.contract.ports import EmptyObserver
from pulumi_lws.disaggregatedset import names
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.render.scheduling import (
    VOLCANO_API,
    VOLCANO_GROUP_NAME,
    VOLCANO_QUEUE,
)
from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.sim.driver.pulumi_engine import run_program
from pulumi_lws.sim.driver.runner import Runner
from pulumi_lws.sim.driver.scenario import Scenario
from pulumi_lws.workloads import workload_for

ROOT = pathlib.Path(__file__).resolve().parents[2]
PD = yaml.safe_load((ROOT / "examples" / "disaggregated-pd" / "ds.yaml").read_text())
DS = workload_for("DisaggregatedSet")
REPLICAS = {"prefill": 6, "decode": 2}


def gang_manifest() -> dict:
    """The example with replica-level gang scheduling (``scheduling: {}``) on every role."""
    doc = copy.deepcopy(PD)
    for role in doc["spec"]["roles"]:
        role["spec"]["scheduling"] = {}
    return doc


def program(manifest: dict, **extra):
    def run():
        from pulumi_lws import DisaggregatedSet

        DisaggregatedSet("pd", {"manifest": manifest} | extra)

    return run


WAS_K8S = "1.37"  # first Kubernetes schema with scheduling.k8s.io/v1beta1 and schedulingGroup (as tests/lws)


def converged(doc: dict, provider: str | None = None) -> SimCluster:
    """The embedded cluster with ``doc`` rolled out and ready (every child's worker StatefulSets exist)."""
    runner = Runner(
        Scenario(name="pd", engine="pure", manifest=copy.deepcopy(doc), start="converged", gang_provider=provider),
        "pure",
    )
    runner.warm_up()
    return runner.cluster


def register(manifest: dict, cluster: SimCluster | None = None, **extra) -> list[dict]:
    """What one ``pulumi up`` registers (on ``cluster``, else an empty one), every manifest validated."""
    observer = cluster if cluster is not None else EmptyObserver()
    result = run_program(program(manifest, **extra), observer, cluster if cluster is not None else FakeActuator())
    for m in result.manifests:
        if m["apiVersion"].startswith("scheduling.k8s.io/") or "schedulingGroup" in str(m):
            kubernetes_validate.validate(dict(m), WAS_K8S, strict=True)
        else:
            validate_manifest(m)
    return result.manifests


def workers(manifests: list[dict]) -> list[dict]:
    """The worker StatefulSets of every child (one per group; the leader StatefulSet is the child's name)."""
    return [m for m in manifests if m["kind"] == "StatefulSet" and m["metadata"]["name"] not in children().values()]


def children() -> dict[str, str]:
    """role -> the name of its child LeaderWorkerSet at the spec's revision."""
    rev = DS.target_revision(DS.parse(gang_manifest()))
    return {role: names.child_lws("pd", 0, rev, role) for role in REPLICAS}


def pod_groups(manifests: list[dict], api: str) -> list[dict]:
    return [m for m in manifests if m["kind"] == "PodGroup" and m["apiVersion"] == api]


def test_volcano_renders_one_pod_group_per_child_group_with_the_queue():
    manifests = register(gang_manifest(), gang_provider="volcano", volcano_queue="inference")
    groups = pod_groups(manifests, VOLCANO_API)
    per_child = {
        child: sorted(
            int(g["metadata"]["labels"][L.GROUP_INDEX]) for g in groups if g["metadata"]["labels"][L.NAME] == child
        )
        for child in children().values()
    }
    assert per_child == {children()[role]: list(range(n)) for role, n in REPLICAS.items()}
    assert len(groups) == sum(REPLICAS.values())
    assert {g["spec"]["queue"] for g in groups} == {"inference"}
    assert {g["spec"]["minMember"] for g in groups} == {1}  # the size-1 workers reference it (upstream §6.1)
    assert not [m for m in manifests if m["kind"] == "Workload" or m["apiVersion"].startswith("scheduling.k8s.io")]


def test_volcano_steady_state_stamps_every_worker_statefulset_with_its_groups_pod_group():
    doc = gang_manifest()
    manifests = register(doc, converged(doc, "volcano"), gang_provider="volcano", volcano_queue="inference")
    groups = {g["metadata"]["name"]: g for g in pod_groups(manifests, VOLCANO_API)}
    assert len(groups) == sum(REPLICAS.values()) and {g["spec"]["queue"] for g in groups.values()} == {"inference"}
    sts = workers(manifests)
    assert len(sts) == sum(REPLICAS.values())
    named = [s["spec"]["template"]["metadata"]["annotations"][VOLCANO_GROUP_NAME] for s in sts]
    assert sorted(named) == sorted(groups)  # one PodGroup per group, each named by its group's workers
    assert not any("schedulingGroup" in s["spec"]["template"]["spec"] for s in sts)


def test_volcano_without_a_queue_leaves_it_to_volcano_and_a_role_annotation_wins():
    doc = gang_manifest()
    doc["spec"]["roles"][1]["metadata"] = {"annotations": {VOLCANO_QUEUE: "decode-q"}}
    manifests = register(doc, gang_provider="volcano")
    queues = {g["metadata"]["labels"][L.NAME]: g["spec"].get("queue") for g in pod_groups(manifests, VOLCANO_API)}
    assert queues == {children()["prefill"]: None, children()["decode"]: "decode-q"}


@pytest.mark.parametrize("extra", [{}, {"gang_provider": "kubernetes"}])
def test_kubernetes_provider_is_the_default(extra):
    doc = gang_manifest()
    manifests = register(doc, converged(doc), **extra)
    assert not pod_groups(manifests, VOLCANO_API)
    workloads = [m for m in manifests if m["kind"] == "Workload"]
    assert sorted(w["metadata"]["labels"][L.NAME] for w in workloads) == sorted(children().values())
    k8s_groups = {
        m["metadata"]["name"]
        for m in manifests
        if m["kind"] == "PodGroup" and m["apiVersion"].startswith("scheduling.k8s.io/")
    }
    sts = workers(manifests)
    assert len(sts) == sum(REPLICAS.values())
    assert {s["spec"]["template"]["spec"]["schedulingGroup"]["podGroupName"] for s in sts} <= k8s_groups
    assert not any(VOLCANO_GROUP_NAME in (s["spec"]["template"]["metadata"].get("annotations") or {}) for s in sts)


def test_without_scheduling_the_provider_adds_nothing():
    manifests = register(PD, gang_provider="volcano", volcano_queue="inference")
    assert not [m for m in manifests if m["kind"] in ("PodGroup", "Workload")]


@pytest.mark.parametrize(
    "extra, field",
    [
        ({"gang_provider": "yunikorn"}, "gangProvider"),
        ({"gang_provider": "volcano", "volcano_queue": 3}, "volcanoQueue"),
        ({"volcanoQueue": ""}, "volcanoQueue"),
    ],
)
def test_bad_gang_arguments_raise_before_anything_registers(extra, field):
    class Observer(EmptyObserver):
        calls = 0

        def observe(self, scope):
            Observer.calls += 1
            return super().observe(scope)

    with pytest.raises(SpecError) as err:
        run_program(program(gang_manifest(), **extra), Observer(), FakeActuator())
    assert field in str(err.value) and "DisaggregatedSet" in str(err.value)
    assert Observer.calls == 0


def test_controller_mode_rejects_the_gang_provider():
    with pytest.raises(SpecError) as err:
        run_program(
            program(gang_manifest(), mode="controller", gang_provider="volcano"), EmptyObserver(), FakeActuator()
        )
    assert "gangProvider" in str(err.value) and "operator-free" in str(err.value)
