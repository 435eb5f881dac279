"""Builders for DisaggregatedSet test manifests (plain dicts, camelCase, as a user writes them)."""

from __future__ import annotations

import copy
from typing import Any

from pulumi_lws.disaggregatedset.api import API_VERSION, KIND

POD = {"spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def role(
    name: str, replicas: Any = 1, *, scaling: str | None = None, metadata: dict | None = None, **spec: Any
) -> dict[str, Any]:
    """A role; extra keyword arguments go into its ``spec`` (``leaderWorkerTemplate`` gets POD)."""
    lwt = {"workerTemplate": copy.deepcopy(POD), **spec.pop("leaderWorkerTemplate", {})}
    out: dict[str, Any] = {"name": name, "spec": {"leaderWorkerTemplate": lwt, **spec}}
    if replicas is not None:
        out["spec"]["replicas"] = replicas
    if scaling is not None:
        out["scaling"] = {"mode": scaling}
    if metadata is not None:
        out["metadata"] = metadata
    return out


def ds(*roles: dict[str, Any], name: str = "ds", **spec: Any) -> dict[str, Any]:
    """A DisaggregatedSet manifest (prefill + decode when no roles are given)."""
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": name},
        "spec": {"roles": list(roles) or [role("prefill"), role("decode")], **spec},
    }


def merge(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for k, v in patch.items():
        out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out
