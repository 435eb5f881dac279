"""API discovery over real HTTP against kmock: ``LiveCluster.serves_api`` (per-pod values
admission-policy's refusal, issue 28; ``GET /apis`` then ``/apis/<group>/<version>``, once per
backend), an optional kind (PodGroup, Workload, a CRD) skipped without a LIST when its API is not
served, and a 404 on a kind every cluster serves read as the cluster fault it is."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("kmock")

from kmock import ResourceInfo
from support.kmock_helpers import Fault, FaultyEmulator, discovery_paths, kmock_client, object_requests

from pulumi_lws.cluster.live import LiveCluster
from pulumi_lws.cluster.resilience import RetryPolicy
from pulumi_lws.core.contract.ports import ClusterError, ObserveError
from pulumi_lws.lws.observe import lws_scope

pytestmark = pytest.mark.kmock(cls=FaultyEmulator)
POLICIES = "admissionregistration.k8s.io/v1beta1/mutatingadmissionpolicies"
KIND = "MutatingAdmissionPolicy"


@pytest.mark.asyncio
async def test_discovery_tells_a_served_policy_api_from_a_missing_one(kmock):
    kmock.resources[POLICIES] = ResourceInfo(kind=KIND, namespaced=False)
    live = LiveCluster(kmock_client(str(kmock.url)))
    assert await asyncio.to_thread(live.serves_api, "admissionregistration.k8s.io/v1beta1", KIND) is True
    assert await asyncio.to_thread(live.serves_api, "admissionregistration.k8s.io/v1", KIND) is False


@pytest.mark.asyncio
async def test_forbidden_discovery_cannot_tell(kmock):
    kmock.resources[POLICIES] = ResourceInfo(kind=KIND, namespaced=False)
    kmock.inject(Fault("GET", "/apis/admissionregistration.k8s.io/v1beta1", status=403, reason="Forbidden"))
    live = LiveCluster(kmock_client(str(kmock.url)))
    assert await asyncio.to_thread(live.serves_api, "admissionregistration.k8s.io/v1beta1", KIND) is None


# ---- optional kinds are decided by discovery; kinds every cluster serves never read as "not installed"

NS = "serving"


def _list_requests(kmock, plural: str) -> list:
    return [r for r in object_requests(kmock) if r.resource.plural == plural]


@pytest.mark.asyncio
async def test_discovery_is_asked_once_per_backend(kmock):
    kmock.resources[POLICIES] = ResourceInfo(kind=KIND, namespaced=False)
    live = LiveCluster(kmock_client(str(kmock.url)))
    for _ in range(3):
        assert await asyncio.to_thread(live.serves_api, "admissionregistration.k8s.io/v1beta1", KIND) is True
        assert await asyncio.to_thread(live.serves_api, "scheduling.volcano.sh/v1beta1", "PodGroup") is False
    assert discovery_paths(kmock) == ["/apis", "/apis/admissionregistration.k8s.io/v1beta1"]


@pytest.mark.asyncio
async def test_an_optional_kind_the_cluster_does_not_serve_is_never_listed(kmock):
    live = LiveCluster(kmock_client(str(kmock.url)))
    snapshot = await asyncio.to_thread(live.observe, lws_scope(NS, "web"))
    assert snapshot.list("PodGroup") == [] and snapshot.list("Workload") == []
    assert not _list_requests(kmock, "podgroups") and not _list_requests(kmock, "workloads")
    assert {r.resource.plural for r in object_requests(kmock)} == {
        "statefulsets",
        "deployments",
        "pods",
        "controllerrevisions",
        "services",
    }


@pytest.mark.asyncio
async def test_a_404_on_a_kind_every_cluster_serves_is_a_fault_naming_the_request(kmock):
    kmock.inject(Fault("GET", f"/apis/apps/v1/namespaces/{NS}/deployments", 404, "NotFound", "not found", times=None))
    live = LiveCluster(kmock_client(str(kmock.url)), retry=RetryPolicy(attempts=1))
    with pytest.raises(ObserveError) as raised:
        await asyncio.to_thread(live.observe, lws_scope(NS, "web"))
    message = str(raised.value)
    assert message.startswith(f"observe failed: LIST Deployment in namespace {NS} selected by ")
    assert f"(GET /apis/apps/v1/namespaces/{NS}/deployments)" in message
    assert "every Kubernetes API server serves apps/v1 Deployment" in message and "\n" not in message


@pytest.mark.asyncio
async def test_a_404_on_an_optional_kind_discovery_lists_is_a_fault(kmock):
    kmock.resources["scheduling.k8s.io/v1beta1/podgroups"] = ResourceInfo(kind="PodGroup", namespaced=True)
    kmock.inject(
        Fault("GET", f"/apis/scheduling.k8s.io/v1beta1/namespaces/{NS}/podgroups", 404, "NotFound", times=None)
    )
    live = LiveCluster(kmock_client(str(kmock.url)), retry=RetryPolicy(attempts=1))
    with pytest.raises(ObserveError, match=r"API discovery lists scheduling\.k8s\.io/v1beta1 PodGroup"):
        await asyncio.to_thread(live.observe, lws_scope(NS, "web"))


@pytest.mark.asyncio
async def test_without_discovery_only_the_api_servers_own_404_means_not_installed(kmock):
    """Discovery refused (403 on /apis): an optional kind is LISTed, and a 404 counts as "not
    installed" only as the API server answers it (a Kubernetes Status in JSON), never as a
    proxy's page."""
    kmock.inject(Fault("GET", "/apis", 403, "Forbidden", times=None))
    live = LiveCluster(kmock_client(str(kmock.url)), retry=RetryPolicy(attempts=1))
    snapshot = await asyncio.to_thread(live.observe, lws_scope(NS, "web"))
    assert snapshot.list("PodGroup") == [] and _list_requests(kmock, "podgroups")  # listed, kmock's Status 404

    kmock.inject(
        Fault("GET", f"/apis/scheduling.k8s.io/v1beta1/namespaces/{NS}/podgroups", 404, body="<h1>404</h1>", times=None)
    )
    with pytest.raises(ObserveError, match=r"HTTP 404 \(text/html, not a Kubernetes answer\).*no Kubernetes Status"):
        await asyncio.to_thread(
            LiveCluster(kmock_client(str(kmock.url)), retry=RetryPolicy(attempts=1)).observe, lws_scope(NS, "web")
        )


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "fault, shown",
    [
        (Fault("GET", "/apis", 404, "NotFound", times=None), "HTTP 404 NotFound"),
        (
            Fault("GET", "/apis", 200, body="<html>sign in</html>", times=None),
            "malformed response (HTTP 200, text/html",
        ),
        (
            Fault("GET", "/apis", 200, body='{"kind": "Status"}', content_type="application/json", times=None),
            "HTTP 200, a 'Status' (not an APIGroupList)",
        ),
    ],
)
async def test_discovery_that_no_api_server_answers_is_a_fault(kmock, fault, shown):
    kmock.inject(fault)
    live = LiveCluster(kmock_client(str(kmock.url)), retry=RetryPolicy(attempts=1))
    with pytest.raises(ClusterError) as raised:
        await asyncio.to_thread(live.serves_api, "scheduling.volcano.sh/v1beta1", "PodGroup")
    message = str(raised.value)
    assert message.startswith(
        f"API discovery failed: GET /apis on cluster context 'kmock' at {str(kmock.url).rstrip('/')}"
    )
    assert shown in message and "every Kubernetes API server serves it" in message


def test_a_kind_not_every_cluster_serves_must_be_optional():
    from pulumi_lws.core.contract.facts import KindRef, check_facts
    from pulumi_lws.workloads import workload_for

    lws = workload_for("LeaderWorkerSet")
    facts = dict(api_version=lws.api_version, words=lws.words, arguments=lws.arguments, gang=lws.gang, rbac=lws.rbac)
    assert check_facts("LeaderWorkerSet", observes=lws.observes, **facts) == []
    observes = (*lws.observes, KindRef("Widget", "example.com/v1"))
    assert check_facts("LeaderWorkerSet", observes=observes, **facts) == [
        "observes: not served by every cluster, mark optional=True: ['Widget example.com/v1']"
    ]
    for workload in ("LeaderWorkerSet", "ModelServing", "DisaggregatedSet"):
        optional = {r.kind for r in workload_for(workload).observes if r.optional}
        assert optional <= {"PodGroup", "Workload", "DisaggregatedSetRoleScaler"}, workload
        assert "PodGroup" in optional
