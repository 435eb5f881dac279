"""The simulator's collector policy (sim/driver/collector.py): what a reconcile leaves alive is
frozen out of the cyclic collector's view during ``Runner.run`` and given back at its end, and a
run makes no garbage cycle (frozen cycles would wait for the end of the run)."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import pytest

from pulumi_lws.sim.cluster.apply import topological_order
from pulumi_lws.sim.driver.collector import FrozenBetweenReconciles
from pulumi_lws.sim.driver.runner import Runner, simulate

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
from bench_sim import scenario

KINDS = ("LeaderWorkerSet", "ModelServing", "DisaggregatedSet")


@pytest.fixture
def collector_enabled():
    """The collector as a test finds it, restored afterwards (pytest may have it either way)."""
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


@pytest.mark.parametrize("kind", KINDS)
def test_a_rollout_makes_no_garbage_cycle(kind: str) -> None:
    """With the collector off, a whole rollout leaves nothing for it to find while its result is
    alive: every object it dropped was freed by reference counting."""
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        result = simulate(scenario(12, 2, kind=kind))
        assert result.reason is None and result.trace.converged
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
