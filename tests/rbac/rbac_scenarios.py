"""Scenarios of the RBAC tests: per API, workload manifests covering every kind it renders and
every action kind it plans (Ordinal and Hash LeaderWorkerSets, kubernetes and Volcano gangs,
exclusive placement, adoption; ModelServing; DisaggregatedSet with an External role), and, per
API, controller mode (:func:`controller_scenarios`: every scope shape its observe can have)."""

from __future__ import annotations

import copy
import pathlib
from dataclasses import dataclass
from typing import Any

import yaml
from conftest import REPO_ROOT

EXAMPLES = REPO_ROOT / "examples"
NS = "serving"


def _load(path: pathlib.Path) -> dict[str, Any]:
    doc = yaml.safe_load(path.read_text())
    doc.setdefault("metadata", {})["namespace"] = NS
    return doc


def _with(doc: dict[str, Any], **spec: Any) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    out["spec"].update(spec)
    return out


@dataclass(frozen=True)
class Scenario:
    name: str
    manifest: dict[str, Any]
    gang_provider: str = "kubernetes"
    adoption: bool = False
    mode: str = "operator-free"

    @property
    def api(self) -> str:
        return self.manifest["kind"]


def scenarios() -> list[Scenario]:
    lws = _load(EXAMPLES / "quickstart" / "lws.yaml")
    hash_lws = _load(EXAMPLES / "hash" / "lws.yaml")
    exclusive = copy.deepcopy(lws)
    exclusive["metadata"].setdefault("annotations", {})["leaderworkerset.sigs.k8s.io/exclusive-topology"] = (
        "topology.kubernetes.io/zone"
    )
    ms = _load(EXAMPLES / "modelserving-pd" / "ms.yaml")
    ds = _load(EXAMPLES / "disaggregated-pd" / "ds.yaml")
    external = copy.deepcopy(ds)
    external["spec"]["roles"][1]["scaling"] = {"mode": "External"}
    volcano_ms = copy.deepcopy(ms)
    del volcano_ms["spec"]["schedulerName"]  # upstream's default: volcano, one PodGroup per ServingGroup
    ds_gang = copy.deepcopy(ds)
    ds_gang["spec"]["roles"][0]["spec"]["scheduling"] = {}
    ds_hash = copy.deepcopy(ds)
    ds_hash["spec"]["roles"][0]["spec"]["groupIdentity"] = "Hash"
    per_pod = {"pulumi-lws.io/per-pod-values": "admission-policy"}
    admission = copy.deepcopy(lws)
    admission["metadata"].setdefault("annotations", {}).update(per_pod)
    ds_admission = copy.deepcopy(ds)
    ds_admission["spec"]["roles"][0].setdefault("metadata", {}).setdefault("annotations", {}).update(per_pod)
    return [
        Scenario("lws-ordinal", lws),
        Scenario("lws-hash", hash_lws),
        Scenario("lws-gang-kubernetes", _with(lws, scheduling={})),
        Scenario("lws-gang-volcano", _with(lws, scheduling={}), gang_provider="volcano"),
        Scenario("lws-exclusive-placement", exclusive),
        Scenario("lws-adoption", lws, adoption=True),
        Scenario("lws-per-pod-admission-policy", admission),
        Scenario("ms-pd", ms),
        Scenario("ms-adoption", ms, adoption=True),
        Scenario("ds-pd", ds),
        Scenario("ms-volcano", volcano_ms),
        Scenario("ds-external-scaling", external),
        Scenario("ds-hash-role", ds_hash),
        Scenario("ds-gang-kubernetes", ds_gang),
        Scenario("ds-gang-volcano", ds_gang, gang_provider="volcano"),
        Scenario("ds-per-pod-admission-policy", ds_admission),
    ]


APIS = ("LeaderWorkerSet", "ModelServing", "DisaggregatedSet")


def controller_scenarios() -> list[Scenario]:
    """Controller mode per API: the plain sample, and what widens the observed scope (gang
    objects, exclusive placement: Nodes, an External role: its scalers)."""
    by_name = {s.name: s for s in scenarios()}
    picks = {
        "lws-controller": "lws-ordinal",
        "lws-controller-hash": "lws-hash",
        "lws-controller-gang": "lws-gang-kubernetes",
        "lws-controller-exclusive": "lws-exclusive-placement",
        "ms-controller": "ms-pd",
        "ms-controller-volcano": "ms-volcano",
        "ds-controller": "ds-pd",
        "ds-controller-external": "ds-external-scaling",
    }
    return [Scenario(name, by_name[source].manifest, mode="controller") for name, source in picks.items()]
