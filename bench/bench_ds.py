"""DisaggregatedSet figures: ``roles`` roles of ``groups`` LeaderWorkerSet groups each (a leader and
one worker per group), and a mid-rollout snapshot of it, built from the objects the renderer
declares (the project's LWS pipeline per child), with the pods their StatefulSets run, Running
and Ready, and every StatefulSet ready.

Mid-rollout: an image change half done on every role — per role the old revision's child runs
``groups - groups // 2`` groups (annotated ``initial-replicas: <groups>``) and the new revision's
child ``groups // 2``, all ready, so the barrier is passed and the reconcile computes a real
proportional step (and renders every child of both revisions). Pods carry the labels upstream's
pod webhook sets (the reconcile's label actions, applied once), so no reconcile of it labels pods.
"""

from __future__ import annotations

import copy
from typing import Any, NamedTuple

from bench_api_calls import CountingClient

from pulumi_lws.core.contract.snapshot import EMPTY, Snapshot
from pulumi_lws.disaggregatedset.render import render_children
from pulumi_lws.disaggregatedset.revision import compute_revision
from pulumi_lws.workloads import workload_for

DS = workload_for("DisaggregatedSet")
NS = "bench"


class Child(NamedTuple):
    role: str
    slice: int
    revision: str
    replicas: int
    initial_replicas: int | None = None
    declared: bool = True


def fleet_manifest(roles: int, groups: int, image: str = "vllm/vllm-openai:v2", slices: int = 1) -> dict[str, Any]:
    def role(i: int) -> dict[str, Any]:
        return {
            "name": f"role{i}",
            "spec": {
                "replicas": groups,
                "leaderWorkerTemplate": {
                    "size": 2,
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

    return {
        "apiVersion": DS.api_version,
        "kind": "DisaggregatedSet",
        "metadata": {"name": "fleet", "namespace": NS},
        "spec": {"roles": [role(i) for i in range(roles)], "slices": slices},
    }


def fleet_ds(roles: int, groups: int, image: str = "vllm/vllm-openai:v2", slices: int = 1) -> Any:
    return DS.parse(fleet_manifest(roles, groups, image, slices))


def _pods(sts: dict[str, Any]) -> list[dict[str, Any]]:
    template = sts["spec"]["template"]
    name = sts["metadata"]["name"]
    start = (sts["spec"].get("ordinals") or {}).get("start", 0)  # worker StatefulSets start at 1
    return [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"{name}-{i}",
                "namespace": NS,
                "uid": f"uid-{name}-{i}",
                "labels": dict(template["metadata"]["labels"]),
            },
            "spec": {},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
        }
        for i in range(start, start + sts["spec"]["replicas"])
    ]


def _objects(manifests) -> list[dict[str, Any]]:
    out = []
    for m in manifests:
        m = copy.deepcopy(dict(m))
        if m["kind"] == "StatefulSet":
            n = m["spec"]["replicas"]
            m["status"] = {
                "replicas": n,
                "readyReplicas": n,
                "availableReplicas": n,
                "currentRevision": "r",
                "updateRevision": "r",
            }
            out += _pods(m)
        out.append(m)
    return out


def mid_rollout_snapshot(roles: int, groups: int, slices: int = 1) -> Snapshot:
    """Every role half rolled from image v1 to v2 (module doc), all ready."""
    old_ds, new_ds = fleet_ds(roles, groups, "vllm/vllm-openai:v1", slices), fleet_ds(roles, groups, slices=slices)
    old_rev, new_rev = compute_revision(old_ds), compute_revision(new_ds)
    half = groups // 2
    objs: dict[tuple[str, str], dict[str, Any]] = {}
    for ds, rev, replicas, initial in ((old_ds, old_rev, groups - half, groups), (new_ds, new_rev, half, None)):
        children = [Child(r, s, rev, replicas, initial) for s in range(slices) for r in ds.role_names]
        first = _objects(render_children(ds, children, EMPTY).manifests)  # leader workloads, then their pods
        for o in first + _objects(render_children(ds, children, Snapshot.of(first)).manifests):  # + workers
            objs.setdefault((o["kind"], o["metadata"]["name"]), o)
    # the labels upstream's pod webhook sets at admission (pulumi-lws: the label actions of the
    # reconcile after the pods appear), so the measured reconcile sees a fleet as it runs
    for action in DS.reconcile(new_ds, Snapshot.of(list(objs.values()))).stage.actions:
        if action.verb == "label":
            objs[(action.kind, action.name)]["metadata"]["labels"].update(action.params["labels"])
    return Snapshot.of(list(objs.values()))


def count_calls(roles: int, groups: int, slices: int = 1) -> int:
    """LIST calls of one DisaggregatedSet reconcile against a mid-rollout fleet."""
    from pulumi_lws.cluster.live import LiveCluster

    spec = fleet_ds(roles, groups, slices=slices)
    snap = mid_rollout_snapshot(roles, groups, slices)
    client = CountingClient(list(snap))
    observed = LiveCluster(client).observe(DS.scope(spec))
    assert len(observed.list("Pod")) == len(snap.list("Pod")), "the counting client must serve every pod"
    DS.reconcile(spec, observed)
    return client.calls


def children_pipeline(spec: Any, snap: Snapshot, declared: Any) -> Any:
    """A call rendering ``declared`` (the plan's children) through the LWS pipeline against a
    fresh copy of ``snap`` — what one reconcile spends in its children alone (a lower bound of
    the DisaggregatedSet reconcile: observation, planner and prediction excluded)."""
    from pulumi_lws.disaggregatedset.render import render_children

    return lambda: render_children(spec, declared, Snapshot(snap.objects, snap.now))
