"""``LiveCluster.serves_api`` (per-pod values admission-policy's refusal, issue 28) over real HTTP
against kmock: API discovery of ``/apis/<group>/<version>``."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("kmock")

from kmock import ResourceInfo
from support.kmock_helpers import Fault, FaultyEmulator, kmock_client

from pulumi_lws.cluster.live import LiveCluster

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
