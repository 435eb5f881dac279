"""A valid base ModelServing and patch helpers shared by the ModelServing API tests."""

from __future__ import annotations

import copy
from typing import Any

from pulumi_lws.core.contract.errors import FieldError
from pulumi_lws.modelserving.api import ModelServing

POD = {"spec": {"containers": [{"name": "c", "image": "img:1"}]}}


def role(name: str = "prefill", **kw: Any) -> dict[str, Any]:
    out = {
        "name": name,
        "replicas": 1,
        "entryTemplate": copy.deepcopy(POD),
        "workerReplicas": 1,
        "workerTemplate": copy.deepcopy(POD),
    }
    out.update(kw)
    return {k: v for k, v in out.items() if v != "DELETE"}


BASE: dict[str, Any] = {
    "apiVersion": "workload.serving.volcano.sh/v1alpha1",
    "kind": "ModelServing",
    "metadata": {"name": "demo", "namespace": "ns"},
    "spec": {"replicas": 2, "template": {"roles": [role("prefill"), role("decode")]}},
}


def merge(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge ``patch`` into a copy of ``base``; a value ``"DELETE"`` removes the key; lists replace."""
    out = copy.deepcopy(base)
    for k, v in patch.items():
        if v == "DELETE":
            out.pop(k, None)
        elif isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def ms(patch: dict[str, Any] | None = None) -> ModelServing:
    return ModelServing.parse(merge(BASE, patch or {}))


def spec(**kw: Any) -> dict[str, Any]:
    return {"spec": kw}


def template(**kw: Any) -> dict[str, Any]:
    return {"spec": {"template": kw}}


def roles(*rs: dict[str, Any]) -> dict[str, Any]:
    return template(roles=list(rs))


def sg(type_: str = "ServingGroupRollingUpdate", **ruc: Any) -> dict[str, Any]:
    rs: dict[str, Any] = {"type": type_}
    if ruc:
        rs["rollingUpdateConfiguration"] = ruc
    return spec(rolloutStrategy=rs)


def role_ru(*rs: dict[str, Any], replicas: int = 2) -> dict[str, Any]:
    return {
        "spec": {
            "replicas": replicas,
            "rolloutStrategy": {"type": "RoleRollingUpdate"},
            "template": {"roles": list(rs)},
        }
    }


def pairs(errors: list[FieldError]) -> list[tuple[str, str]]:
    return [(e.path, e.message) for e in errors]
