"""Literal clusters for the recovery tests: a rendered ModelServing plus the pods its StatefulSets
would run, with creation/readiness timestamps and uids (no simulator, no planner in the loop)."""

from __future__ import annotations

import copy
from datetime import datetime, timezone
from typing import Any

from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.modelserving.api import ModelServing
from pulumi_lws.modelserving.render import declare_all, render_modelserving
from pulumi_lws.modelserving.revision import build_catalog

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z
NOW = T0 + 1000


def ts(t: float) -> str:
    return datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def role(name: str, image: str, replicas: int = 1, workers: int = 1, **extra: Any) -> dict[str, Any]:
    tmpl = {"spec": {"containers": [{"name": "server", "image": image}]}}
    out = {"name": name, "replicas": replicas, "workerReplicas": workers, "entryTemplate": tmpl, **extra}
    if workers:
        out["workerTemplate"] = copy.deepcopy(tmpl)
    return out


def pd(
    image: str = "vllm:1",
    *,
    replicas: int = 3,
    policy: str | None = None,
    grace: int = 0,
    strategy: str | None = None,
    decode_image: str | None = None,
    **spec: Any,
) -> ModelServing:
    """pd: prefill (1 replica: entry + 1 worker) and decode (1 replica: entry + 1 worker) per group."""
    s: dict[str, Any] = {
        "replicas": replicas,
        "schedulerName": "default-scheduler",
        "template": {
            "restartGracePeriodSeconds": grace,
            "roles": [role("prefill", image), role("decode", decode_image or image)],
        },
    }
    if policy is not None:
        s["recoveryPolicy"] = policy
    if strategy is not None:
        s["rolloutStrategy"] = {"type": strategy}
    s.update(spec)
    return ModelServing.from_manifest(
        {
            "apiVersion": "workload.serving.volcano.sh/v1alpha1",
            "kind": "ModelServing",
            "metadata": {"name": "pd", "namespace": "default"},
            "spec": s,
        }
    )


def pods_of(sts: dict[str, Any], born: float = T0, ready_after: float = 5) -> list[dict[str, Any]]:
    start = (sts["spec"].get("ordinals") or {}).get("start", 0)
    out = []
    for i in range(start, start + sts["spec"]["replicas"]):
        name = f"{sts['metadata']['name']}-{i}"
        meta = {
            "name": name,
            "namespace": sts["metadata"]["namespace"],
            "uid": f"uid-{name}",
            "creationTimestamp": ts(born),
            "labels": dict(sts["spec"]["template"]["metadata"]["labels"]),
        }
        status = {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": ts(born + ready_after)}],
            "containerStatuses": [
                {"name": "server", "ready": True, "restartCount": 0, "state": {"running": {"startedAt": ts(born + 1)}}}
            ],
        }
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": meta,
                "spec": {"terminationGracePeriodSeconds": 30, "containers": [{"name": "server"}]},
                "status": status,
            }
        )
    return out


def running(ms: ModelServing) -> list[dict[str, Any]]:
    """Every object of ``ms`` rolled out and ready since ``T0 + 5``."""
    cat = build_catalog(ms)
    objs = [copy.deepcopy(o) for o in render_modelserving(ms, declare_all(ms, cat), cat)]
    for o in list(objs):
        o["metadata"].setdefault("uid", f"uid-{o['kind']}-{o['metadata']['name']}")
        if o["kind"] == "StatefulSet":
            objs += pods_of(o)
    return objs


def pod(objs: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(o for o in objs if o["kind"] == "Pod" and o["metadata"]["name"] == name)


def restart(objs: list[dict[str, Any]], name: str, at: float, *, count: int = 1) -> None:
    """A container of ``name`` crashed at ``at`` and was restarted; it is not ready since."""
    p = pod(objs, name)
    p["status"]["containerStatuses"] = [
        {
            "name": "server",
            "ready": False,
            "restartCount": count,
            "lastState": {"terminated": {"exitCode": 1, "finishedAt": ts(at)}},
            "state": {"running": {"startedAt": ts(at)}},
        }
    ]
    p["status"]["conditions"] = [{"type": "Ready", "status": "False", "lastTransitionTime": ts(at)}]


def crash(objs: list[dict[str, Any]], name: str, at: float) -> None:
    """``name`` failed for good at ``at`` (phase Failed)."""
    p = pod(objs, name)
    p["status"] = {
        "phase": "Failed",
        "reason": "Error",
        "conditions": [{"type": "Ready", "status": "False", "lastTransitionTime": ts(at)}],
        "containerStatuses": [
            {
                "name": "server",
                "ready": False,
                "restartCount": 0,
                "state": {"terminated": {"exitCode": 1, "finishedAt": ts(at)}},
            }
        ],
    }


def recreate(objs: list[dict[str, Any]], name: str, at: float, *, ready: bool = True) -> None:
    """``name`` was deleted and its StatefulSet created a new one at ``at``."""
    p = pod(objs, name)
    p["metadata"].update(uid=f"uid-{name}-new", creationTimestamp=ts(at))
    p["metadata"].pop("deletionTimestamp", None)
    p["status"] = {
        "phase": "Running" if ready else "Pending",
        "conditions": [
            {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": ts(at + 5 if ready else at)}
        ],
        "containerStatuses": [
            {
                "name": "server",
                "ready": ready,
                "restartCount": 0,
                "state": {"running": {"startedAt": ts(at + 1)}} if ready else {"waiting": {}},
            }
        ],
    }


def terminating(objs: list[dict[str, Any]], names: list[str], at: float) -> None:
    for n in names:
        p = pod(objs, n)
        p["metadata"]["deletionTimestamp"] = ts(at)
        p["status"]["conditions"] = [{"type": "Ready", "status": "False", "lastTransitionTime": ts(at)}]


def snap(objs: list[dict[str, Any]], now: float = NOW) -> Snapshot:
    return Snapshot.of(copy.deepcopy(objs), now)


def deletes(stage) -> list[tuple[str, str | None]]:
    return [(a.name, a.uid) for a in stage.actions if a.verb == "delete" and a.kind == "Pod"]


def group_pods(g: int, roles: tuple[str, ...] = ("decode", "prefill")) -> list[str]:
    return sorted(n for r in roles for n in (f"pd-{g}-{r}-0-0", f"pd-{g}-{r}-0-w-1"))
