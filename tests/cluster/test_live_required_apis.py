"""The gang and scheduler APIs a workload's rendered objects need are asked of API discovery before
anything registers (``Workload.required_apis``, ``components/controller.check_required_apis``):
ModelServing's default ``schedulerName: volcano`` renders Volcano PodGroups; a LeaderWorkerSet
with ``spec.scheduling`` renders ``scheduling.k8s.io/v1beta1`` Workload + PodGroups (gang provider
``kubernetes``) or Volcano PodGroups (``volcano``); a DisaggregatedSet role the same. A cluster
that does not serve one fails the component before registration, naming the group/version, the
field that asked for it and what to install or change; one that serves it is asked once per
reconcile (the preflight and the observe share the discovery answers).

Over HTTP against kmock (the live backend installed with ``use_backend``), the component under
Pulumi's mock engine in a worker thread."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

pytest.importorskip("kmock")

from conftest import fresh_mock_runtime
from kmock import ResourceInfo
from support.ds_helpers import ds_manifest
from support.ds_helpers import role as ds_role
from support.kmock_helpers import discovery_paths, kmock_client, object_requests
from support.malformed import recording_mocks
from support.ms_helpers import ms_manifest
from support.ms_helpers import role as ms_role

from pulumi_lws.backend import use_backend
from pulumi_lws.cluster.live import LiveCluster
from pulumi_lws.cluster.resilience import RetryPolicy
from pulumi_lws.components.controller import RequiredApiMissingError
from pulumi_lws.core.contract.facts import ALWAYS_SERVED
from pulumi_lws.core.contract.snapshot import EMPTY
from pulumi_lws.workloads import workload_for

VOLCANO = "scheduling.volcano.sh/v1beta1/podgroups"
WAS = ("scheduling.k8s.io/v1beta1/podgroups", "scheduling.k8s.io/v1beta1/workloads")
CONTAINERS = {"containers": [{"name": "c", "image": "nginx:1"}]}


def lws_manifest(scheduling: bool = True) -> dict[str, Any]:
    spec: dict[str, Any] = {"replicas": 2, "leaderWorkerTemplate": {"size": 2, "workerTemplate": {"spec": CONTAINERS}}}
    if scheduling:
        spec["scheduling"] = {}
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "w", "namespace": "default"},
        "spec": spec,
    }


def ms(scheduler: str | None = None) -> dict[str, Any]:
    manifest = ms_manifest(replicas=2, roles=[ms_role("prefill", workers=1)])
    if scheduler is None:
        del manifest["spec"]["schedulerName"]  # Kthena's default: volcano
    else:
        manifest["spec"]["schedulerName"] = scheduler
    return manifest


def ds_with_scheduling() -> dict[str, Any]:
    return ds_manifest(ds_role("prefill", 2), ds_role("decode", 1, scheduling={}))


def serve(kmock, *resources: str) -> None:
    for resource in resources:
        kind = {"podgroups": "PodGroup", "workloads": "Workload"}[resource.rsplit("/", 1)[1]]
        kmock.resources[resource] = ResourceInfo(kind=kind, namespaced=True)


def live(kmock, gang_provider: str = "kubernetes") -> LiveCluster:
    return LiveCluster(kmock_client(str(kmock.url)), gang_provider=gang_provider, retry=RetryPolicy(attempts=1))


def _up_refused(cluster: LiveCluster, kind: str, args: dict[str, Any]) -> tuple[str, list[str]]:
    import pulumi_lws

    registered: list[str] = []
    fresh_mock_runtime(recording_mocks(registered))
    with use_backend(cluster, cluster), pytest.raises(RequiredApiMissingError) as raised:
        getattr(pulumi_lws, kind)("w", args)
    return str(raised.value), registered


CASES = {
    "ms-default-volcano": (
        "ModelServing",
        lambda: {"manifest": ms()},
        "volcano",
        (
            "ModelServing default/ms: the cluster does not serve scheduling.volcano.sh/v1beta1 PodGroup. "
            "spec.schedulerName: volcano (Kthena's default) renders one Volcano PodGroup per ServingGroup",
            "install Volcano (its CRD podgroups.scheduling.volcano.sh)",
            "or set spec.schedulerName to the scheduler the cluster runs",
        ),
    ),
    "lws-kubernetes-gang": (
        "LeaderWorkerSet",
        lambda: {"manifest": lws_manifest()},
        "kubernetes",
        (
            "LeaderWorkerSet default/w: the cluster does not serve scheduling.k8s.io/v1beta1 Workload and PodGroup. "
            "spec.scheduling renders a Workload and its PodGroups",
            "GenericWorkload feature gate",
            'choose gang_provider "volcano"',
            "or remove spec.scheduling",
        ),
    ),
    "lws-volcano-gang": (
        "LeaderWorkerSet",
        lambda: {"manifest": lws_manifest(), "gang_provider": "volcano"},
        "volcano",
        (
            "the cluster does not serve scheduling.volcano.sh/v1beta1 PodGroup. "
            'spec.scheduling with gang_provider "volcano" renders a Volcano PodGroup per group',
            "install Volcano",
        ),
    ),
    "ds-role-gang": (
        "DisaggregatedSet",
        lambda: {"manifest": ds_with_scheduling()},
        "kubernetes",
        (
            "the cluster does not serve scheduling.k8s.io/v1beta1 Workload and PodGroup. "
            "spec.roles[1].spec.scheduling renders",
        ),
    ),
}


@pytest.mark.asyncio
@pytest.mark.parametrize("case", sorted(CASES))
async def test_an_unserved_gang_api_fails_before_anything_registers(kmock, case):
    kind, args, provider, shown = CASES[case]
    message, registered = await asyncio.to_thread(_up_refused, live(kmock, provider), kind, args())
    assert registered == []  # not even the component
    assert "\n" not in message
    for fragment in shown:
        assert fragment in message, (fragment, message)
    assert discovery_paths(kmock) == ["/apis"]  # the group is not listed: one request, no LIST
    assert object_requests(kmock) == []


@pytest.mark.asyncio
async def test_a_served_gang_api_is_asked_once_per_reconcile(kmock):
    """ModelServing on a cluster with Volcano: the preflight's discovery answers are the observe's
    (one ``/apis``, one Volcano resource list), PodGroups are LISTed and declared."""
    from pulumi_lws.sim.driver.pulumi_engine import run_program

    serve(kmock, VOLCANO)
    cluster = live(kmock, "volcano")

    def program() -> None:
        import pulumi_lws

        pulumi_lws.ModelServing("w", {"manifest": ms()})

    result = await asyncio.to_thread(run_program, program, cluster, cluster)
    assert [m["metadata"]["name"] for m in result.manifests if m["kind"] == "PodGroup"] == ["ms-0", "ms-1"]
    assert discovery_paths(kmock) == ["/apis", "/apis/scheduling.volcano.sh/v1beta1"]
    assert [r.resource.plural for r in object_requests(kmock)].count("podgroups") == 1


def test_no_gang_object_no_requirement():
    """A LeaderWorkerSet without ``spec.scheduling`` and a ModelServing with another scheduler
    render no gang object: nothing to ask before registering."""
    for kind, args, provider in (
        ("LeaderWorkerSet", {"manifest": lws_manifest(scheduling=False)}, "kubernetes"),
        ("ModelServing", {"manifest": ms("default-scheduler")}, "volcano"),
    ):
        workload = workload_for(kind)
        spec = workload.parse(args["manifest"])
        assert workload.required_apis(spec, provider) == ()


@pytest.mark.parametrize(
    "kind, manifest, provider",
    [
        ("LeaderWorkerSet", lws_manifest(), "kubernetes"),
        ("LeaderWorkerSet", lws_manifest(), "volcano"),
        ("LeaderWorkerSet", lws_manifest(scheduling=False), "kubernetes"),
        (
            "LeaderWorkerSet",
            {**lws_manifest(), "spec": {**lws_manifest()["spec"], "groupIdentity": "Hash"}},
            "kubernetes",
        ),
        ("ModelServing", ms(), "volcano"),
        ("ModelServing", ms("default-scheduler"), "volcano"),
        ("DisaggregatedSet", ds_with_scheduling(), "kubernetes"),
        ("DisaggregatedSet", ds_with_scheduling(), "volcano"),
    ],
)
def test_the_required_apis_are_exactly_the_optional_ones_the_expansion_renders(kind, manifest, provider):
    """What the preflight asks for is what the rendered objects need: every apiVersion/kind of the
    first stage's objects outside the APIs every cluster serves, and nothing else."""
    workload = workload_for(kind)
    spec = workload.parse(copy.deepcopy(manifest))
    options = workload.options(gang_provider=provider) if kind != "ModelServing" else workload.options()
    rendered = {
        (m["apiVersion"], m["kind"])
        for m in workload.reconcile(spec, EMPTY, options).manifests
        if m["apiVersion"] not in ALWAYS_SERVED
    }
    assert {(v, k) for v, k, _ in workload.required_apis(spec, provider)} == rendered
