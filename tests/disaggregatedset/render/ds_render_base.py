"""Builders for the DisaggregatedSet rendering/observation tests (plain manifests, the planner's ChildPlan)."""

from __future__ import annotations

import copy
from typing import Any

from pulumi_lws.disaggregatedset.api import API_VERSION, KIND, DisaggregatedSet
from pulumi_lws.disaggregatedset.revision import compute_revision
from pulumi_lws.disaggregatedset.rollout.slice_plan import ChildPlan

NS = "default"


def container(name: str = "c", image: str = "img:v1", **extra: Any) -> dict[str, Any]:
    return {"name": name, "image": image, **extra}


def role(
    name: str,
    replicas: int = 1,
    *,
    size: int = 1,
    image: str = "img:v1",
    leader: dict | None = None,
    worker_meta: dict | None = None,
    metadata: dict | None = None,
    **spec: Any,
) -> dict[str, Any]:
    worker: dict[str, Any] = {"spec": {"containers": [container(image=image)]}}
    if worker_meta is not None:
        worker["metadata"] = worker_meta
    lwt: dict[str, Any] = {"size": size, "workerTemplate": worker}
    if leader is not None:
        lwt["leaderTemplate"] = leader
    out: dict[str, Any] = {"name": name, "spec": {"replicas": replicas, "leaderWorkerTemplate": lwt, **spec}}
    if metadata is not None:
        out["metadata"] = metadata
    return out


def manifest(*roles: dict[str, Any], name: str = "ds", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": name, "namespace": NS},
        "spec": {"roles": list(roles) or [role("prefill", 2, size=2), role("decode", 1)], **spec},
    }


def load(m: dict[str, Any]) -> DisaggregatedSet:
    return DisaggregatedSet.from_manifest(copy.deepcopy(m))


def with_image(m: dict[str, Any], role_index: int, image: str) -> dict[str, Any]:
    out = copy.deepcopy(m)
    out["spec"]["roles"][role_index]["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0][
        "image"
    ] = image
    return out


def plan(
    slice_index: int, revision: str, role_name: str, replicas: int, initial: int | None = None, declared: bool = True
) -> ChildPlan:
    return ChildPlan(
        slice=slice_index,
        revision=revision,
        role=role_name,
        replicas=replicas,
        observed=None,
        initial_replicas=initial,
        declared=declared,
    )


def steady(ds: DisaggregatedSet, revision: str | None = None) -> list[ChildPlan]:
    """Every (slice, role) child of ``revision`` (default the target) at the role's replicas."""
    rev = revision or compute_revision(ds)
    return [plan(s, rev, r.name, r.replicas) for s in range(ds.slices) for r in ds.roles]
