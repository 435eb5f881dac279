"""Fault injection into every LIST the live observer issues, for the three APIs' scopes
(LeaderWorkerSet, ModelServing, DisaggregatedSet — each kind of the scope, plus Nodes), over
real HTTP against kmock (:class:`kmock_helpers.FaultyEmulator`).

The cluster holds what each API's first reconcile declares. Documented outcome per fault
(docs/live-cluster.md, "When the API server fails"):

- 500 / 429 (Retry-After) / a timeout: the LIST is retried; the snapshot is the fault-free one;
- a 409, or a 500 that persists past the retry budget: :class:`ObserveError` naming the LIST
  (kind, namespace, selector), the context and the HTTP status — no snapshot, so nothing is
  planned from the part that was read.

Then the next reconcile (no fault) observes the fault-free snapshot and plans the same stage.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
from typing import Any

import pytest

pytest.importorskip("kmock")

from kmock import ResourceInfo
from support.kmock_helpers import CLIENT_TIMEOUT, HANG, Fault, FaultyEmulator, kmock_client

from pulumi_lws.cluster.live import LiveCluster
from pulumi_lws.cluster.resilience import RetryPolicy
from pulumi_lws.cluster.resources import kind_refs, resource_classes
from pulumi_lws.core.contract.ports import ObserveError, Scope, selector_text
from pulumi_lws.core.contract.snapshot import EMPTY
from pulumi_lws.disaggregatedset.observe import ds_scope
from pulumi_lws.workloads import workload_for

pytestmark = pytest.mark.kmock(cls=FaultyEmulator)

NS = "serving"
CONTAINERS = {"containers": [{"name": "s", "image": "nginx:1"}]}


def _lws() -> dict:
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "lws", "namespace": NS},
        "spec": {"replicas": 2, "leaderWorkerTemplate": {"size": 2, "workerTemplate": {"spec": CONTAINERS}}},
    }


def _ms() -> dict:
    role = {
        "replicas": 1,
        "workerReplicas": 1,
        "entryTemplate": {"spec": CONTAINERS},
        "workerTemplate": {"spec": CONTAINERS},
    }
    return {
        "apiVersion": "workload.serving.volcano.sh/v1alpha1",
        "kind": "ModelServing",
        "metadata": {"name": "ms", "namespace": NS},
        "spec": {
            "replicas": 2,
            "schedulerName": "volcano",
            "template": {"roles": [{"name": "prefill", **role}, {"name": "decode", **copy.deepcopy(role)}]},
        },
    }


def _ds() -> dict:
    role = {"replicas": 1, "leaderWorkerTemplate": {"size": 2, "workerTemplate": {"spec": CONTAINERS}}}
    return {
        "apiVersion": "disaggregatedset.x-k8s.io/v1",
        "kind": "DisaggregatedSet",
        "metadata": {"name": "ds", "namespace": NS},
        "spec": {"roles": [{"name": "prefill", "spec": role}, {"name": "decode", "spec": copy.deepcopy(role)}]},
    }


def _scopes(api: str, spec: Any) -> Scope:
    """The widest scope the API reads: its kinds plus Nodes (and, for DisaggregatedSet, the
    DisaggregatedSetRoleScaler LIST of External roles where the backend has it)."""
    if api == "DisaggregatedSet" and "scalers" in inspect.signature(ds_scope).parameters:
        return ds_scope(spec.namespace, spec.name, nodes=True, scalers=True)
    return workload_for(api).scope(spec, nodes=True)


APIS = {
    "LeaderWorkerSet": (_lws, "kubernetes"),
    "ModelServing": (_ms, "volcano"),
    "DisaggregatedSet": (_ds, "kubernetes"),
}


def _list_path(kind: str, gang_provider: str) -> str:
    if kind == "Node":
        return "/api/v1/nodes"
    info = resource_classes(gang_provider)[kind]._api_info
    group, version = info.resource.group, info.resource.version
    prefix = f"/api/{version}" if not group else f"/apis/{group}/{version}"
    return f"{prefix}/namespaces/{NS}/{info.plural}"


def _lists(api: str) -> list[tuple[str, str]]:
    make, _ = APIS[api]
    scope = _scopes(api, workload_for(api).parse(make()))
    return [(api, kind) for kind in (*scope.kinds, "Node")]


CASES = [case for api in APIS for case in _lists(api)]


def seed(kmock, api: str) -> Any:
    """What the API's first reconcile declares (plus a Node), every optional API of its widest
    scope served (API discovery lists it, so each of its LISTs is sent); returns the parsed spec."""
    make, provider = APIS[api]
    workload = workload_for(api)
    spec = workload.parse(make())
    for kind in _scopes(api, spec).kinds:
        ref = kind_refs(provider)[kind]
        if ref.optional:
            kmock.resources[f"{ref.api_version}/{ref.resource}"] = ResourceInfo(kind=ref.kind, namespaced=True)
    for m in workload.reconcile(spec, EMPTY, workload.options()).manifests:
        info = resource_classes(provider)[m["kind"]]._api_info
        resource = "/".join(p for p in (info.resource.group, info.resource.version, info.plural) if p)
        kmock.objects[(resource, NS, m["metadata"]["name"])] = copy.deepcopy(dict(m))
    kmock.objects[("v1/nodes", None, "node-a")] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"}}
    return spec


def cluster(kmock, waits: list[float], provider: str) -> LiveCluster:
    return LiveCluster(
        kmock_client(str(kmock.url), timeout=CLIENT_TIMEOUT),
        gang_provider=provider,
        now=lambda: 0.0,
        retry=RetryPolicy(sleep=waits.append, jitter=0.0),
    )


def _objects(snapshot) -> list[tuple[str, str]]:
    return sorted((o["kind"], o["metadata"]["name"]) for o in snapshot)


_BASELINES: dict[str, tuple[list[tuple[str, str]], str]] = {}  # api -> the fault-free (objects, stage summary)


async def _baseline(kmock, api: str):
    """Seed the cluster; the fault-free observation and stage of that seed (computed once per API:
    the seed is deterministic)."""
    spec = seed(kmock, api)
    if api not in _BASELINES:
        snapshot = await asyncio.to_thread(cluster(kmock, [], APIS[api][1]).observe, _scopes(api, spec))
        stage = workload_for(api).reconcile(spec, snapshot, workload_for(api).options()).stage
        assert _objects(snapshot), "the seeded cluster is observed"
        _BASELINES[api] = (_objects(snapshot), stage.summary())
    return (spec, *_BASELINES[api])


async def _next_reconcile_converges(kmock, api: str, spec, objects, summary) -> None:
    kmock.faults.clear()
    snapshot = await asyncio.to_thread(cluster(kmock, [], APIS[api][1]).observe, _scopes(api, spec))
    assert _objects(snapshot) == objects
    assert workload_for(api).reconcile(spec, snapshot, workload_for(api).options()).stage.summary() == summary


def test_every_api_scope_kind_is_fault_injected():
    for api in APIS:
        assert {kind for a, kind in CASES if a == api} >= {
            *_scopes(api, workload_for(api).parse(APIS[api][0]())).kinds,
            "Node",
        }
    assert len(CASES) >= 7 + 1 + 5 + 1 + 7 + 1


@pytest.mark.asyncio
@pytest.mark.parametrize("api, kind", CASES, ids=[f"{a}-{k}" for a, k in CASES])
@pytest.mark.parametrize(
    "fault, waits_expected",
    [
        ({"status": 500}, 0.5),
        ({"status": 429, "reason": "TooManyRequests", "retry_after": 2}, 2.0),
        ({"delay": HANG}, 0.5),
    ],
    ids=["500", "429-retry-after", "timeout"],
)
async def test_a_transient_list_failure_is_retried_and_the_snapshot_is_whole(kmock, api, kind, fault, waits_expected):
    spec, objects, summary = await _baseline(kmock, api)
    waits: list[float] = []
    kmock.inject(Fault("GET", _list_path(kind, APIS[api][1]), **fault))

    snapshot = await asyncio.to_thread(cluster(kmock, waits, APIS[api][1]).observe, _scopes(api, spec))

    assert _objects(snapshot) == objects and waits[0] == waits_expected  # Retry-After, else the first backoff
    await _next_reconcile_converges(kmock, api, spec, objects, summary)


@pytest.mark.asyncio
@pytest.mark.parametrize("api, kind", CASES, ids=[f"{a}-{k}" for a, k in CASES])
@pytest.mark.parametrize(
    "fault, shown",
    [
        ({"status": 409, "reason": "Conflict", "message": "conflict"}, "HTTP 409 Conflict: conflict"),
        ({"status": 500, "times": None}, "HTTP 500 InternalError: injected fault (gave up after 5 attempts)"),
    ],
    ids=["409", "500-persistent"],
)
async def test_a_failed_list_fails_the_observe_naming_the_list_and_context(kmock, api, kind, fault, shown):
    spec, objects, summary = await _baseline(kmock, api)
    kmock.inject(Fault("GET", _list_path(kind, APIS[api][1]), **fault))
    scope = _scopes(api, spec)

    with pytest.raises(ObserveError) as raised:
        await asyncio.to_thread(cluster(kmock, [], APIS[api][1]).observe, scope)

    message = str(raised.value)
    selector = selector_text(scope.selector_for(kind))
    where = "LIST Node" if kind == "Node" else f"LIST {kind} in namespace {NS} selected by {selector}"
    assert message.startswith(
        f"observe failed: {where} on cluster context 'kmock' at {str(kmock.url).rstrip('/')}: {shown}"
    ), message
    assert "nothing was planned from the partial read" in message
    await _next_reconcile_converges(kmock, api, spec, objects, summary)
