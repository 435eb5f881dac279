"""The live backend at the DisaggregatedSetRoleScaler boundary, over real HTTP against kmock: the
DS scope of a set with an External role LISTs the scaler kind once (selected by the DS name
label; kmock ignores selectors, so the client-side check keeps a foreign set's scaler out), a
cluster without the CRD reads no scaler (404 skipped), and the ``patch-status`` action writes
``status.replicas``/``status.selector`` with a uid-guarded JSON patch on the scaler's ``/status``
(kmock has no status-subresource semantics: the request is asserted as well as the object)."""

from __future__ import annotations

import asyncio
import json

import pytest

pytest.importorskip("kmock")

from support.kmock_helpers import kmock_client

from pulumi_lws.cluster.live import LiveCluster
from pulumi_lws.cluster.patches import status_patch
from pulumi_lws.cluster.resources import resource_classes
from pulumi_lws.disaggregatedset import external
from pulumi_lws.disaggregatedset import labels as DL
from pulumi_lws.lws.observe import LWS_KINDS
from pulumi_lws.workloads import workload_for

NS = "serving"
DS = workload_for("DisaggregatedSet")
SCALERS = "disaggregatedset.x-k8s.io/v1/disaggregatedsetrolescalers"


def manifest() -> dict:
    def role(name: str, external_: bool) -> dict:
        r = {
            "name": name,
            "spec": {
                "replicas": 2,
                "leaderWorkerTemplate": {
                    "size": 2,
                    "workerTemplate": {"spec": {"containers": [{"name": "s", "image": "nginx:1"}]}},
                },
            },
        }
        if external_:
            r["scaling"] = {"mode": "External"}
        return r

    return {
        "apiVersion": DS.api_version,
        "kind": "DisaggregatedSet",
        "metadata": {"name": "pd", "namespace": NS},
        "spec": {"roles": [role("prefill", False), role("decode", True)]},
    }


def scaler(name: str, ds: str, replicas: int, **extra) -> dict:
    return {
        "apiVersion": external.SCALER_API_VERSION,
        "kind": external.SCALER_KIND,
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": f"uid-{name}",
            "generation": 3,
            "labels": {DL.NAME: ds, DL.ROLE: "decode"},
        },
        "spec": {"replicas": replicas},
        **extra,
    }


def test_the_scaler_kind_has_a_resource_class():
    assert external.SCALER_KIND in DS.scope(DS.parse(manifest())).kinds
    res = resource_classes()[external.SCALER_KIND]
    assert (
        res._api_info.resource.group == "disaggregatedset.x-k8s.io"
        and res._api_info.plural == "disaggregatedsetrolescalers"
    )


@pytest.mark.asyncio
async def test_one_list_of_scalers_read_back_as_the_target(kmock):
    kmock.objects[(SCALERS, NS, "pd-decode")] = scaler("pd-decode", "pd", 5)
    kmock.objects[(SCALERS, NS, "other-decode")] = scaler("other-decode", "other", 9)
    spec = DS.parse(manifest())
    live = LiveCluster(kmock_client(str(kmock.url)))
    before = len(list(kmock))
    snapshot = await asyncio.to_thread(live.observe, DS.scope(spec))
    requests = list(kmock)[before:]
    assert len(requests) == len(LWS_KINDS) + 1  # the LWS kinds + exactly one LIST of scalers
    lists = [r for r in requests if r.resource is not None and r.resource.plural == "disaggregatedsetrolescalers"]
    assert len(lists) == 1 and lists[0].params.get("labelSelector") == f"{DL.NAME}=pd"
    assert [o["metadata"]["name"] for o in snapshot.list(external.SCALER_KIND)] == ["pd-decode"]  # foreign one filtered
    result = DS.reconcile(spec, snapshot)
    decode = [m for m in result.manifests if m["kind"] == "StatefulSet" and m["metadata"]["name"].endswith("-decode")]
    assert [m["spec"]["replicas"] for m in decode] == [5]  # the autoscaler's value is the role's target
    scaler_out = next(m for m in result.manifests if m["kind"] == external.SCALER_KIND)
    assert scaler_out["spec"] == {"replicas": 5}  # echoed, never re-seeded
    (action,) = [a for a in result.stage.actions if a.verb == "patch-status"]
    # status.replicas counts the role's groups the cluster runs (no child observed yet: 0)
    assert action.params["status"] == {
        "replicas": 0,
        "selector": external.selector(spec, "decode"),
        "observedGeneration": 3,
    }


@pytest.mark.asyncio
async def test_a_cluster_without_the_crd_reads_no_scaler(kmock):
    live = LiveCluster(kmock_client(str(kmock.url)))
    snapshot = await asyncio.to_thread(live.observe, DS.scope(DS.parse(manifest())))
    assert snapshot.list(external.SCALER_KIND) == []  # API not served: 404 skipped, nothing planned from it


@pytest.mark.asyncio
async def test_patch_status_is_a_uid_guarded_json_patch_on_the_status_subresource(kmock):
    kmock.objects[(SCALERS, NS, "pd-decode")] = scaler(
        "pd-decode", "pd", 4, status={"conditions": [{"type": "Ready", "status": "True"}]}
    )
    spec = DS.parse(manifest())
    live = LiveCluster(kmock_client(str(kmock.url)))
    snapshot = await asyncio.to_thread(live.observe, DS.scope(spec))
    (action,) = [a for a in DS.reconcile(spec, snapshot).stage.actions if a.verb == "patch-status"]
    before = len(list(kmock))
    lines = await asyncio.to_thread(live.execute, NS, [action])
    assert lines == [
        (
            f"patch-status {external.SCALER_KIND}/pd-decode: observedGeneration=3, replicas=0, "
            f"selector={external.selector(spec, 'decode')}"
        )
    ]
    patch = next(
        r for r in list(kmock)[before:] if str(r.url.path).endswith("/disaggregatedsetrolescalers/pd-decode/status")
    )
    assert patch.headers["Content-Type"] == "application/json-patch+json"
    ops = json.loads(patch.body)
    assert ops[0] == {"op": "test", "path": "/metadata/uid", "value": "uid-pd-decode"}
    assert {(o["op"], o["path"]) for o in ops[1:]} == {
        ("add", "/status/replicas"),
        ("add", "/status/selector"),
        ("add", "/status/observedGeneration"),
    }
    obj = kmock.objects[(SCALERS, NS, "pd-decode")].raw
    assert obj["status"]["replicas"] == 0 and obj["status"]["selector"] == external.selector(spec, "decode")
    assert obj["status"]["conditions"] == [{"type": "Ready", "status": "True"}]  # other status fields kept
    assert obj["spec"] == {"replicas": 4}


def test_status_patch_shapes():
    assert status_patch(None, {"replicas": 1}) == [{"op": "add", "path": "/status", "value": {"replicas": 1}}]
    assert status_patch({"x": 1}, {"replicas": 2}, "u") == [
        {"op": "test", "path": "/metadata/uid", "value": "u"},
        {"op": "add", "path": "/status/replicas", "value": 2},
    ]
