"""Synthetic fleets for benchmarks: a large LWS and a mid-rollout snapshot of it."""

from __future__ import annotations

from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api import LeaderWorkerSet
from pulumi_lws.lws.revision import revision_data, revision_key


def fleet_lws(groups: int, image: str = "vllm/vllm-openai:v2", size: int = 4) -> LeaderWorkerSet:
    return LeaderWorkerSet.parse(
        {
            "metadata": {"name": "fleet", "namespace": "bench"},
            "spec": {
                "replicas": groups,
                "rolloutStrategy": {"rollingUpdateConfiguration": {"maxUnavailable": "10%", "maxSurge": "5%"}},
                "leaderWorkerTemplate": {
                    "size": size,
                    "workerTemplate": {
                        "spec": {
                            "containers": [
                                {"name": "vllm", "image": image, "resources": {"limits": {"nvidia.com/gpu": "8"}}}
                            ]
                        }
                    },
                },
            },
        }
    )


def _pod(name: str, key: str, ready: bool, index: int) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "bench",
            "uid": f"uid-{name}",
            "labels": {L.NAME: "fleet", L.WORKER_INDEX: "0", L.TEMPLATE_REVISION_HASH: key, L.POD_INDEX: str(index)},
        },
        "spec": {},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


def _worker_sts(name: str, key: str, size: int, ready: bool) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": "bench", "labels": {L.NAME: "fleet", L.TEMPLATE_REVISION_HASH: key}},
        "spec": {"replicas": size - 1},
        "status": {"availableReplicas": size - 1 if ready else 0, "currentRevision": "a", "updateRevision": "a"},
    }


def mid_rollout_snapshot(lws: LeaderWorkerSet) -> Snapshot:
    """A rollout from an old image to ``lws``'s spec, half done: upper half updated and ready."""
    old = lws.model_copy(deep=True)
    old.spec.leader_worker_template.worker_template["spec"]["containers"][0]["image"] = "vllm/vllm-openai:v1"
    old_key, new_key = revision_key(old), revision_key(lws)
    r = lws.replicas
    partition = r // 2
    objs = [
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {
                "name": "fleet",
                "namespace": "bench",
                "labels": {L.NAME: "fleet", L.TEMPLATE_REVISION_HASH: new_key},
                "annotations": {L.REPLICAS: str(r)},
            },
            "spec": {
                "replicas": r,
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": partition}},
            },
            "status": {},
        },
        {
            "apiVersion": "apps/v1",
            "kind": "ControllerRevision",
            "revision": 1,
            "data": revision_data(old),
            "metadata": {
                "name": f"fleet-{old_key}-1",
                "namespace": "bench",
                "labels": {L.NAME: "fleet", L.TEMPLATE_REVISION_HASH: old_key},
            },
        },
        {
            "apiVersion": "apps/v1",
            "kind": "ControllerRevision",
            "revision": 2,
            "data": revision_data(lws),
            "metadata": {
                "name": f"fleet-{new_key}-2",
                "namespace": "bench",
                "labels": {L.NAME: "fleet", L.TEMPLATE_REVISION_HASH: new_key},
            },
        },
    ]
    for i in range(r):
        key = new_key if i >= partition else old_key
        objs.append(_pod(f"fleet-{i}", key, True, i))
        objs.append(_worker_sts(f"fleet-{i}", key, lws.size, True))
    return Snapshot.of(objs)


def _running_pod(name: str, template: dict, owner: str, index: int) -> dict:
    """A pod as its StatefulSet ``owner`` runs it: the template's labels and annotations, the
    pod-index label, a controller owner reference; Running and Ready."""
    meta = template["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "bench",
            "uid": f"uid-{name}",
            "labels": {**meta.get("labels", {}), L.POD_INDEX: str(index)},
            "annotations": dict(meta.get("annotations", {})),
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "StatefulSet",
                    "name": owner,
                    "uid": f"uid-{owner}",
                    "controller": True,
                }
            ],
        },
        "spec": {},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }


def _ready(sts: dict) -> dict:
    n = sts["spec"]["replicas"]
    return {
        **sts,
        "status": {
            "replicas": n,
            "readyReplicas": n,
            "availableReplicas": n,
            "currentRevision": "r",
            "updateRevision": "r",
        },
    }


def realistic_mid_rollout_snapshot(lws: LeaderWorkerSet) -> Snapshot:
    """The rollout of :func:`mid_rollout_snapshot` (old image -> ``lws``'s spec, upper half
    updated, every group Running and Ready), built from the objects the project renders: the
    leader StatefulSet (partition at half), both ControllerRevisions, every group's worker
    StatefulSet on its revision; leader pods owned by the leader StatefulSet, worker pods of
    each worker StatefulSet from its ``spec.ordinals.start``, and the labels upstream's pod
    webhook sets (the reconcile's label actions, applied once), so the measured reconcile sees
    a fleet as it runs."""
    import copy

    from pulumi_lws.core.contract.snapshot import EMPTY
    from pulumi_lws.lws.reconcile import reconcile

    old = lws.model_copy(deep=True)
    old.spec.leader_worker_template.worker_template["spec"]["containers"][0]["image"] = "vllm/vllm-openai:v1"
    rendered_old = copy.deepcopy(list(reconcile(old, EMPTY).manifests))
    old_cr = next(m for m in rendered_old if m["kind"] == "ControllerRevision")
    rendered_new = copy.deepcopy(list(reconcile(lws, Snapshot.of([old_cr])).manifests))
    by_name = {
        rev: {(m["kind"], m["metadata"]["name"]): m for m in ms}
        for rev, ms in (("old", rendered_old), ("new", rendered_new))
    }
    r, name = lws.replicas, lws.name
    partition = r // 2
    leader_sts = _ready(by_name["new"][("StatefulSet", name)])
    leader_sts["spec"] = copy.deepcopy(leader_sts["spec"])
    leader_sts["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = partition
    objs = [
        leader_sts,
        by_name["new"][("Service", name)],
        old_cr,
        *(m for m in rendered_new if m["kind"] == "ControllerRevision"),
    ]
    for i in range(r):
        rev = by_name["new" if i >= partition else "old"]
        leader_template = rev[("StatefulSet", name)]["spec"]["template"]
        objs.append(_running_pod(f"{name}-{i}", leader_template, name, i))
        workers = _ready(rev[("StatefulSet", f"{name}-{i}")])
        objs.append(workers)
        start = (workers["spec"].get("ordinals") or {}).get("start", 0)
        objs += [
            _running_pod(f"{name}-{i}-{j}", workers["spec"]["template"], f"{name}-{i}", j)
            for j in range(start, start + workers["spec"]["replicas"])
        ]
    index = {(o["kind"], o["metadata"]["name"]): o for o in objs}
    for action in reconcile(lws, Snapshot.of(objs)).stage.actions:
        if action.verb == "label":
            index[(action.kind, action.name)]["metadata"]["labels"].update(action.params["labels"])
    return Snapshot.of(objs)
