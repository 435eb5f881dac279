"""The StatefulSet controller visits only the sets that are not quiet (``sync_all``): fleet
rollouts of every API, and StatefulSets with ``minReadySeconds`` (woken by the time alone), give
the same store, write for write, as a sync of every set on every pass."""

from __future__ import annotations

import json
import pathlib
import sys

import pytest

from pulumi_lws.sim.cluster import statefulset as sts_mod
from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.sim.cluster.store import Store, strip_internal
from pulumi_lws.sim.driver.runner import simulate

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))
from bench_sim import scenario as bench_scenario  # noqa: E402  (the bench's rollout, as its rows run it)


def _every_set(self) -> None:  # the straightforward controller: every StatefulSet, every pass
    for sts in self.store.list("StatefulSet"):
        if not sts["metadata"].get("deletionTimestamp"):
            self.sync(sts)


def _dump(store: Store) -> list[str]:
    return [json.dumps(strip_internal(o), sort_keys=True, default=str) for o in store.all()]


@pytest.mark.parametrize("kind", ["LeaderWorkerSet", "ModelServing", "DisaggregatedSet"])
def test_a_fleet_rollout_is_the_same_with_every_set_synced(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = simulate(bench_scenario(24, 2, kind=kind), "pure")
    monkeypatch.setattr(sts_mod.StatefulSetController, "sync_all", _every_set)
    slow = simulate(bench_scenario(24, 2, kind=kind), "pure")
    assert [repr(r) for r in fast.trace.rows] == [repr(r) for r in slow.trace.rows]
    assert _dump(fast.cluster.store) == _dump(slow.cluster.store)
    assert fast.cluster.store.version == slow.cluster.store.version


def _sts(name: str, image: str, **spec) -> dict:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": image}]}},
            **spec,
        },
    }


def _run(monkeypatch: pytest.MonkeyPatch, straightforward: bool) -> list[tuple[int, list[str]]]:
    if straightforward:
        monkeypatch.setattr(sts_mod.StatefulSetController, "sync_all", _every_set)
    cluster = SimCluster(seed=3, nodes=[{"name": "n1", "capacity": {"cpu": "100"}}])
    out = []
    for t in range(0, 40):
        if t in (0, 12):
            image = f"img:{t}"
            cluster.apply(
                [
                    _sts("ready", image, minReadySeconds=5),
                    _sts("ordered", image, minReadySeconds=2, podManagementPolicy="OrderedReady"),
                    _sts("parallel", image, podManagementPolicy="Parallel"),
                ]
            )
        cluster.step(float(t))
        out.append((cluster.store.version, _dump(cluster.store)))
    monkeypatch.undo()
    return out


def test_sets_with_min_ready_seconds_are_woken_by_the_time(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = _run(monkeypatch, straightforward=False)
    slow = _run(monkeypatch, straightforward=True)
    assert fast == slow
    assert any('"availableReplicas": 3' in line for line in fast[-1][1])
