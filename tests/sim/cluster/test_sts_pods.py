"""The StatefulSet controller's pod index (``sim/cluster/sts_pods.py``) changes its cost, never
its results: fleet rollouts of every API, every example scenario, and a set scaled, failed,
partitioned and recreated, give the same store write for write with every Parallel set indexed
(``MIN_REPLICAS`` 0) as with none; and after every pass each table is what a walk of the set's
pods gives."""

from __future__ import annotations

import json
import pathlib
import sys
from typing import Any

import pytest

from pulumi_lws.sim.cluster import statefulset as sts_mod
from pulumi_lws.sim.cluster import sts_pods
from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.sim.cluster.store import Store, strip_internal
from pulumi_lws.sim.driver.runner import simulate
from pulumi_lws.sim.driver.scenario import load_scenario

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))
from bench_sim import scenario as bench_scenario  # noqa: E402  (the bench's rollout, as its rows run it)

EXAMPLES = sorted(str(p.relative_to(ROOT / "examples")) for p in (ROOT / "examples").glob("*/scenario*.yaml"))
NEVER = 10**9


def _dump(store: Store) -> list[str]:
    return [json.dumps(strip_internal(o), sort_keys=True, default=str) for o in store.all()]


def _walked(ctl: sts_mod.StatefulSetController, sts: dict[str, Any]) -> sts_pods.Table:
    """The table a walk over the set's listed pods gives."""
    table = sts_pods.Table()
    for ordinal, pod in ctl._pods(sts).items():
        table.add(ordinal, pod, ctl.kubelet.ready_since)
    return table


def _facts(table: sts_pods.Table) -> dict[str, Any]:
    keys = ("uid_at", "deleting", "failed", "ready", "available", "healthy", "waiting", "revision")
    out = {k: getattr(table, k) for k in keys}
    out["pods"] = {o: id(p) for o, p in table.pods.items()}
    out["revisions"] = dict(table.revisions)
    out["live_revisions"] = dict(table.live_revisions)
    return out


def _checked_sync_all(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """``sync_all``, then every table compared with a walk; returns the count of tables checked."""
    checked = [0]
    sync_all = sts_mod.StatefulSetController.sync_all

    def sync_all_then_check(self) -> None:
        sync_all(self)
        self._index.refresh()
        for uid, table in self._index._tables.items():
            sts = self.store.by_uid(uid)
            assert sts is not None
            assert _facts(table) == _facts(_walked(self, sts)), sts["metadata"]["name"]
            checked[0] += 1

    monkeypatch.setattr(sts_mod.StatefulSetController, "sync_all", sync_all_then_check)
    return checked


@pytest.mark.parametrize("kind", ["LeaderWorkerSet", "ModelServing", "DisaggregatedSet"])
def test_a_fleet_rollout_is_the_same_with_every_set_indexed(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sts_pods, "MIN_REPLICAS", NEVER)
    walked = simulate(bench_scenario(24, 2, kind=kind), "pure")
    monkeypatch.setattr(sts_pods, "MIN_REPLICAS", 0)
    checked = _checked_sync_all(monkeypatch)
    indexed = simulate(bench_scenario(24, 2, kind=kind), "pure")
    assert checked[0] > 0
    assert [repr(r) for r in indexed.trace.rows] == [repr(r) for r in walked.trace.rows]
    assert _dump(indexed.cluster.store) == _dump(walked.cluster.store)
    assert indexed.cluster.store.version == walked.cluster.store.version


@pytest.mark.parametrize("name", EXAMPLES)
def test_an_example_is_the_same_with_every_set_indexed(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sts_pods, "MIN_REPLICAS", NEVER)
    walked = simulate(load_scenario(ROOT / "examples" / name), "pure")
    monkeypatch.setattr(sts_pods, "MIN_REPLICAS", 0)
    _checked_sync_all(monkeypatch)
    indexed = simulate(load_scenario(ROOT / "examples" / name), "pure")
    assert [repr(r) for r in indexed.trace.rows] == [repr(r) for r in walked.trace.rows]
    assert _dump(indexed.cluster.store) == _dump(walked.cluster.store)
    assert indexed.cluster.store.version == walked.cluster.store.version


def _sts(image: str, replicas: int, partition: int = 0, **spec: Any) -> dict[str, Any]:
    labels = {"app": "web"}
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": labels},
            "updateStrategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxUnavailable": 2, "partition": partition},
            },
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": image}]}},
            **spec,
        },
    }


def _story(monkeypatch: pytest.MonkeyPatch, min_replicas: int) -> list[tuple[int, list[str]]]:
    """A set rolled, scaled up and down, partitioned, its pods failed and deleted, then itself
    deleted and created again under the same name; the store after every step."""
    monkeypatch.setattr(sts_pods, "MIN_REPLICAS", min_replicas)
    checked = _checked_sync_all(monkeypatch)
    cluster = SimCluster(seed=5, nodes=[{"name": "n1", "capacity": {"cpu": "100"}}])
    plan = {
        0: _sts("img:1", 6),
        8: _sts("img:2", 6),
        10: _sts("img:2", 9, partition=3),
        16: _sts("img:3", 4, partition=1),
        22: _sts("img:3", 4, ordinals={"start": 2}),
        28: _sts("img:4", 7, minReadySeconds=2),
        34: _sts("img:5", 5),
    }
    out = []
    for t in range(0, 48):
        if t in plan:
            cluster.apply([plan[t]])
        pods = cluster.store.list("Pod")
        if t in (5, 13, 19, 36) and pods:
            cluster.kubelet.fail_pod(pods[t % len(pods)])
        if t in (6, 25) and pods:
            pod = pods[-1]["metadata"]
            cluster.store.delete("Pod", pod["namespace"], pod["name"])
        if t == 40:
            cluster.store.delete("StatefulSet", "default", "web")
        if t == 43:
            cluster.apply([_sts("img:6", 3)])
        cluster.step(float(t))
        out.append((cluster.store.version, _dump(cluster.store)))
    monkeypatch.undo()
    assert min_replicas == NEVER or checked[0] > 0
    return out


def test_a_set_scaled_failed_and_recreated_is_the_same_indexed(monkeypatch: pytest.MonkeyPatch) -> None:
    indexed = _story(monkeypatch, 0)
    walked = _story(monkeypatch, NEVER)
    assert indexed == walked
    assert any('"updatedReplicas": 3' in line for line in indexed[-1][1])


def test_a_small_set_has_no_table_and_the_index_watches_nothing() -> None:
    cluster = SimCluster(seed=1, nodes=[{"name": "n1", "capacity": {"cpu": "100"}}])
    cluster.apply([_sts("img:1", 3)])
    for t in range(5):
        cluster.step(float(t))
    index = cluster.statefulsets._index
    assert index._tables == {} and index._written is None
