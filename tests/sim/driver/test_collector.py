"""The simulator's collector policy (sim/driver/collector.py): what a reconcile leaves alive is
frozen out of the cyclic collector's view during ``Runner.run`` and given back at its end, and a
run makes no garbage cycle (frozen cycles would wait for the end of the run)."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import pytest

from pulumi_lws.sim.cluster.apply_order import topological_order
from pulumi_lws.sim.driver.collector import FrozenBetweenReconciles
from pulumi_lws.sim.driver.runner import Runner, simulate
from pulumi_lws.sim.driver.scenario import load_scenario

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
from bench_sim import MANIFESTS, scenario, scenario_doc


def _faulty(kind: str):
    """The bench's rollout to a bad image, fixed at t=40, on a node pool, with a lost node, a
    container restart and events: the failure paths (objects force-deleted, pods recreated, crash
    loops) included."""
    make = MANIFESTS[kind]
    doc = scenario_doc(10, 2, kind=kind)
    doc["kubelet"] = {**doc["kubelet"], "failImages": ["img:bad"]}
    doc["updates"] = [{"at": 0, "manifest": make(10, 2, "img:bad")}, {"at": 40, "manifest": make(10, 2, "img:2")}]
    doc["nodes"] = [{"name": "gpu", "count": 48, "capacity": {"nvidia.com/gpu": 8}}]
    doc["faults"] = [
        {"at": 20, "type": "node-loss", "node": "gpu-3"},
        {"at": 30, "type": "container-restart", "pod": "bench-0"},
    ]
    doc["events"] = [{"at": 25, "deletePods": "bench-1*"}, {"at": 35, "addNodes": 1, "gpusPerNode": 8}]
    doc["stop"] = {"maxTime": 1200}
    return load_scenario(doc)


KINDS = ("LeaderWorkerSet", "ModelServing", "DisaggregatedSet")


@pytest.fixture
def collector_enabled():
    """The collector as a test finds it, restored afterwards (pytest may have it either way)."""
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


@pytest.mark.parametrize("faults", [False, True], ids=["rollout", "faults"])
@pytest.mark.parametrize("kind", KINDS)
def test_the_pure_engine_makes_no_garbage_cycle(kind: str, faults: bool) -> None:
    """With the collector off, a whole run leaves nothing for it to find while its result is
    alive: every object it dropped was freed by reference counting (why the pure engine skips the
    collection before each freeze: ``PureEngine.makes_garbage_cycles``)."""
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        result = simulate(_faulty(kind) if faults else scenario(12, 2, kind=kind))
        assert result.trace.converged, result.reason
        assert gc.collect() == 0
    finally:
        if was:
            gc.enable()


@pytest.mark.parametrize("kind", KINDS)
def test_run_freezes_after_each_reconcile_and_unfreezes_at_the_end(kind: str, collector_enabled) -> None:
    assert gc.get_freeze_count() == 0
    frozen_during: list[int] = []
    result = Runner(
        scenario(10, 2, kind=kind), probe=lambda cluster, t: frozen_during.append(gc.get_freeze_count())
    ).run()
    assert result.trace.converged
    assert frozen_during and min(frozen_during) > 0  # the warm-up's reconciles froze the converged fleet
    assert gc.get_freeze_count() == 0 and gc.isenabled()


def test_automatic_collection_is_off_during_a_run_and_back_on_after(collector_enabled) -> None:
    enabled: list[bool] = []
    Runner(scenario(10, 2), probe=lambda cluster, t: enabled.append(gc.isenabled())).run()
    assert enabled and not any(enabled)
    assert gc.isenabled()


def test_a_run_that_raises_gives_the_collector_back(collector_enabled) -> None:
    def boom(cluster, t):
        raise RuntimeError("probe failed")

    with pytest.raises(RuntimeError, match="probe failed"):
        Runner(scenario(10, 2), probe=boom).run()
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_caller_that_froze_objects_keeps_them_frozen(collector_enabled) -> None:
    """A pre-fork server's frozen heap is not the simulator's to give back: nothing is frozen or
    unfrozen by the run."""
    gc.freeze()
    try:
        before = gc.get_freeze_count()
        seen: list[int] = []
        Runner(scenario(6, 2), probe=lambda cluster, t: seen.append(gc.get_freeze_count())).run()
        assert max(seen) <= before and gc.get_freeze_count() <= before  # frozen objects freed count down
    finally:
        gc.unfreeze()


def test_a_disabled_collector_is_left_alone() -> None:
    was = gc.isenabled()
    gc.disable()
    try:
        seen: list[int] = []
        Runner(scenario(6, 2), probe=lambda cluster, t: seen.append(gc.get_freeze_count())).run()
        assert set(seen) == {0} and not gc.isenabled()
    finally:
        if was:
            gc.enable()


def test_the_policy_is_inactive_unless_started(collector_enabled) -> None:
    idle = FrozenBetweenReconciles()
    idle.freeze()
    assert gc.get_freeze_count() == 0
    started = FrozenBetweenReconciles.start()
    started.freeze()
    assert gc.get_freeze_count() > 0
    assert not gc.isenabled()
    started.close()
    started.close()  # idempotent
    assert gc.get_freeze_count() == 0 and gc.isenabled()


def test_topological_order_is_stable_and_refuses_a_cycle() -> None:
    a, b, c, d = (("ConfigMap", "ns", n) for n in "abcd")
    assert topological_order([a, b, c, d], {}) == [a, b, c, d]
    assert topological_order([a, b, c, d], {a: (c,), b: (d, c)}) == [c, a, d, b]
    assert topological_order([a, b], {a: (("ConfigMap", "ns", "missing"),)}) == [a, b]
    with pytest.raises(ValueError, match="dependency cycle"):
        topological_order([a, b, c], {a: (b,), b: (c,), c: (a,)})
