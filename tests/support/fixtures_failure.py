"""Literal snapshots for failure-handling unit tests (no simulator, no planner)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.core.contract.stage import Stage
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.revision import revision_key

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z
NAME = "lws"


def ts(t: float) -> str:
    return datetime.fromtimestamp(T0 + t, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def make_lws(
    *,
    replicas: int = 3,
    size: int = 3,
    policy: str | None = None,
    max_restarts: int | None = None,
    backoff: dict | None = None,
    termination: str | None = None,
    annotations: dict | None = None,
    image: str = "v1",
) -> LeaderWorkerSet:
    lwt: dict[str, Any] = {"size": size, "workerTemplate": {"spec": {"containers": [{"name": "c", "image": image}]}}}
    if policy:
        lwt["restartPolicy"] = policy
    if max_restarts is not None:
        lwt["maxGroupRestarts"] = max_restarts
    if backoff is not None:
        lwt["restartBackoff"] = backoff
    spec: dict[str, Any] = {"replicas": replicas, "leaderWorkerTemplate": lwt}
    if termination:
        spec["podTerminationPolicy"] = termination
    return LeaderWorkerSet.from_manifest(
        {
            "apiVersion": "leaderworkerset.x-k8s.io/v1",
            "kind": "LeaderWorkerSet",
            "metadata": {"name": NAME, "namespace": "default", "annotations": annotations or {}},
            "spec": spec,
        }
    )


def pod(
    name: str,
    labels: dict,
    *,
    uid: str,
    created: float = 0.0,
    phase: str = "Running",
    restarts: int = 0,
    deleting: float | None = None,
    annotations: dict | None = None,
    unschedulable: bool = False,
) -> dict:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": "default",
        "uid": uid,
        "labels": labels,
        "creationTimestamp": ts(created),
        "annotations": dict(annotations or {}),
    }
    if deleting is not None:
        meta["deletionTimestamp"] = ts(deleting)
    conds = [{"type": "Ready", "status": "True" if phase == "Running" else "False"}]
    if unschedulable:
        conds.append({"type": "PodScheduled", "status": "False", "reason": "Unschedulable"})
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "status": {
            "phase": phase,
            "conditions": conds,
            "containerStatuses": [{"name": "c", "restartCount": restarts, "ready": phase == "Running"}],
        },
    }


class World:
    """A cluster view of ``lws``: every group healthy on revision ``key`` unless changed."""

    def __init__(self, lws: LeaderWorkerSet, *, counts: str | None = None, now: float = 1000.0) -> None:
        self.lws, self.now = lws, now
        self.key = revision_key(lws)
        self.objs: dict[tuple[str, str], dict] = {}
        ann = {L.REPLICAS: str(lws.replicas)}
        if counts is not None:
            ann[L.GROUP_RESTART_COUNTS] = counts
        self.add(
            {
                "apiVersion": "apps/v1",
                "kind": "StatefulSet",
                "metadata": {
                    "name": NAME,
                    "namespace": "default",
                    "uid": "sts-uid",
                    "annotations": ann,
                    "labels": {L.NAME: NAME, L.TEMPLATE_REVISION_HASH: self.key},
                },
                "spec": {"replicas": lws.replicas},
                "status": {},
            }
        )
        for i in range(lws.replicas):
            self.group(i)

    def add(self, obj: dict) -> dict:
        self.objs[(obj["kind"], obj["metadata"]["name"])] = obj
        return obj

    def group(self, i: int, *, created: float = 0.0, key: str | None = None) -> None:
        key = key or self.key
        self.add(
            pod(
                f"{NAME}-{i}",
                {L.NAME: NAME, L.WORKER_INDEX: "0", L.TEMPLATE_REVISION_HASH: key},
                uid=f"L{i}",
                created=created,
                annotations={L.SIZE: str(self.lws.size)},
            )
        )
        self.add(
            {
                "apiVersion": "apps/v1",
                "kind": "StatefulSet",
                "metadata": {
                    "name": f"{NAME}-{i}",
                    "namespace": "default",
                    "uid": f"S{i}",
                    "labels": {L.NAME: NAME, L.GROUP_INDEX: str(i), L.TEMPLATE_REVISION_HASH: key},
                },
                "spec": {"replicas": self.lws.size - 1},
                "status": {"currentRevision": "r", "updateRevision": "r", "availableReplicas": self.lws.size - 1},
            }
        )
        for j in range(1, self.lws.size):
            self.add(
                pod(
                    f"{NAME}-{i}-{j}",
                    {L.NAME: NAME, L.GROUP_INDEX: str(i), L.WORKER_INDEX: str(j), L.TEMPLATE_REVISION_HASH: key},
                    uid=f"W{i}{j}",
                    created=created,
                )
            )

    def get(self, name: str, kind: str = "Pod") -> dict:
        return self.objs[(kind, name)]

    def meta(self, name: str, kind: str = "Pod") -> dict:
        return self.get(name, kind)["metadata"]

    def restart(self, name: str, n: int = 1) -> None:
        self.get(name)["status"]["containerStatuses"][0]["restartCount"] = n

    def delete(self, name: str, at: float | None = None) -> None:
        self.meta(name)["deletionTimestamp"] = ts(self.now if at is None else at)

    def annotate(self, name: str, **ann: str) -> None:
        self.meta(name).setdefault("annotations", {}).update(ann)

    def snapshot(self) -> Snapshot:
        return Snapshot.of(list(self.objs.values()), now=T0 + self.now)

    def stage(self, *, partition: int = 0, target: str | None = None) -> Stage:
        target = target or self.key
        return Stage(
            policy="lws/ordinal",
            target_revision=target,
            replicas=self.lws.replicas,
            partition=partition,
            group_revisions={str(i): target for i in range(self.lws.replicas)},
        )
