"""The cyclic garbage collector during a simulation: one collection per reconcile, over what that
reconcile left alive, instead of many over the whole fleet.

A simulated fleet is a heap of millions of small dicts (every stored object, every rendered
manifest, every observed copy), and every reconcile allocates as many again. Left to itself,
CPython runs a full collection whenever the objects promoted to its oldest generation grow by a
quarter, and a full collection traverses *every* tracked object: at 10,000 ServingGroups about
half the CPU of a rollout went to full collections that found nothing (the stored fleet is
acyclic). Freezing alone (``gc.freeze`` after each reconcile) is not enough: the frozen objects
leave the oldest generation's count, so the next reconcile's allocations cross "a quarter" at
once and a 10,000-group reconcile still ran ~10 full collections over its own young objects.

So, while :meth:`Runner.run <pulumi_lws.sim.driver.runner.Runner.run>` runs: automatic collection
is off, and after every reconcile what is alive is frozen. For an engine that leaves garbage
cycles behind (the Pulumi engine: asyncio futures and callbacks, ~10,000 objects a step) one
explicit collection comes first; it traverses only what is not frozen (what was allocated since
the previous reconcile and survived), so its cost follows the allocation rate, not the fleet's
size, and no garbage cycle made during a reconcile outlives it. The pure engine makes no cycle
(tests/sim/driver/test_collector.py, every API, faults included;
:func:`~pulumi_lws.sim.cluster.apply_order.topological_order` is written without a self-referencing
closure for that reason), so it skips even that traversal (~1 s a reconcile at 10,000
ServingGroups). Frozen objects later dropped are still freed at once by reference counting.

Process-wide state, so restored exactly: nothing happens when the collector is already disabled or
when the caller has frozen objects of its own (a pre-fork server); ``close`` unfreezes and
re-enables only what it changed.
"""

from __future__ import annotations

import gc


class FrozenBetweenReconciles:
    """Collect-and-freeze after every reconcile of a run (:meth:`freeze`); :meth:`close` when
    the run ends (idempotent). Inactive unless made by :meth:`start`: a
    :class:`~pulumi_lws.sim.driver.runner.Runner` whose steps are driven one by one without
    ``run`` or ``freeze_between_reconciles`` leaves the collector alone."""

    def __init__(self, active: bool = False) -> None:
        self.active = active and gc.isenabled() and gc.get_freeze_count() == 0
        if self.active:
            gc.disable()

    @classmethod
    def start(cls) -> FrozenBetweenReconciles:
        return cls(active=True)

    def freeze(self, collect: bool = True) -> None:
        """Set aside what is alive now; ``collect`` first frees the garbage cycles among what is
        not frozen yet (a traversal of this reconcile's survivors: ~1 s a reconcile at 10,000
        ServingGroups, skipped for an engine that makes no cycle)."""
        if self.active:
            if collect:
                gc.collect()  # traverses only the unfrozen objects
            gc.freeze()

    def close(self) -> None:
        if self.active:
            self.active = False
            gc.unfreeze()
            gc.enable()
