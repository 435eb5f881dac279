"""Builders for Ordinal planner tests: an LWS spec and a Snapshot from legend characters.

``snapshot_from_chars("ooUu", ...)``: group i gets a leader pod ``<lws>-<i>`` and (size > 1) a
worker StatefulSet ``<lws>-<i>`` on the old or target revision, ready or not, as the legend says.
"""

from __future__ import annotations

from typing import Any

from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.revision import build_catalog, revision_data, revision_key

NAME = "demo"


def make_lws(
    replicas: int = 4,
    image: str = "v2",
    size: int = 2,
    mu: Any = 1,
    ms: Any = 0,
    partition: int = 0,
    gpus: int | None = None,
    annotations: dict | None = None,
) -> LeaderWorkerSet:
    container: dict[str, Any] = {"name": "c", "image": image}
    if gpus:
        container["resources"] = {"limits": {"nvidia.com/gpu": gpus}}
    return LeaderWorkerSet.from_manifest(
        {
            "apiVersion": "leaderworkerset.x-k8s.io/v1",
            "kind": "LeaderWorkerSet",
            "metadata": {"name": NAME, "namespace": "default", "annotations": annotations or {}},
            "spec": {
                "replicas": replicas,
                "rolloutStrategy": {
                    "type": "RollingUpdate",
                    "rollingUpdateConfiguration": {"maxUnavailable": mu, "maxSurge": ms, "partition": partition},
                },
                "leaderWorkerTemplate": {"size": size, "workerTemplate": {"spec": {"containers": [container]}}},
            },
        }
    )


def controller_revision(lws: LeaderWorkerSet, number: int) -> dict:
    key = revision_key(lws)
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": f"{NAME}-{key}-{number}",
            "namespace": "default",
            "labels": {L.NAME: NAME, L.TEMPLATE_REVISION_HASH: key},
        },
        "revision": number,
        "data": revision_data(lws),
    }


def leader_sts(key: str, replicas: int, partition: int, annotation: int) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {
            "name": NAME,
            "namespace": "default",
            "labels": {L.NAME: NAME, L.TEMPLATE_REVISION_HASH: key},
            "annotations": {L.REPLICAS: str(annotation)},
        },
        "spec": {
            "replicas": replicas,
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": partition}},
        },
        "status": {"replicas": replicas},
    }


def pod(name: str, i: int, key: str, ready: bool, size: int, unschedulable: bool = False, worker: int = 0) -> dict:
    conds = [{"type": "Ready", "status": "True" if ready else "False"}]
    if unschedulable:
        conds.append({"type": "PodScheduled", "status": "False", "reason": "Unschedulable"})
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {L.NAME: NAME, L.GROUP_INDEX: str(i), L.WORKER_INDEX: str(worker), L.TEMPLATE_REVISION_HASH: key},
            "annotations": {L.SIZE: str(size)},
        },
        "status": {"phase": "Pending" if unschedulable else ("Running" if ready else "Pending"), "conditions": conds},
    }


def worker_sts(i: int, key: str, ready: bool, size: int) -> dict:
    n = size - 1
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {
            "name": f"{NAME}-{i}",
            "namespace": "default",
            "labels": {L.NAME: NAME, L.TEMPLATE_REVISION_HASH: key},
        },
        "spec": {"replicas": n},
        "status": {"availableReplicas": n if ready else 0, "currentRevision": "a", "updateRevision": "a"},
    }


def snapshot_from_chars(
    chars: str,
    *,
    old: LeaderWorkerSet,
    new: LeaderWorkerSet,
    sts_key: str | None,
    sts_replicas: int | None = None,
    partition: int = 0,
    annotation: int | None = None,
    unschedulable: frozenset[int] = frozenset(),
    size: int = 2,
) -> Snapshot:
    """Objects for groups ``chars`` (old = ``old``'s revision, updated = ``new``'s); ``sts_key`` None: no leader STS."""
    old_key, new_key = revision_key(old), revision_key(new)
    objs = [controller_revision(old, 1)]
    if new_key != old_key:
        objs.append(controller_revision(new, 2))
    if sts_key is not None:
        s = len(chars) if sts_replicas is None else sts_replicas
        objs.append(leader_sts(sts_key, s, partition, s if annotation is None else annotation))
    for i, c in enumerate(chars):
        if c == "-":
            continue
        key = new_key if c in "Uu" else old_key
        ready = c in "Uo"
        uns = i in unschedulable
        objs.append(pod(f"{NAME}-{i}", i, key, ready, size, uns))
        if size > 1:
            objs.append(worker_sts(i, key, ready, size))
            objs.append(pod(f"{NAME}-{i}-1", i, key, ready, size, uns, worker=1))
    return Snapshot.of(objs)


def catalog_for(new: LeaderWorkerSet, snapshot: Snapshot):
    return build_catalog(new, snapshot.list("ControllerRevision", **{L.NAME: NAME}))
