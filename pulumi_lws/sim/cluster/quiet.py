"""Which StatefulSets a pass of the controller visits (``StatefulSetController.sync_all``).

Invariant: a pass syncs, in list order, exactly the sets a walk over the whole list would sync
when it skips a set whose inputs (its own writes, the writes to its dependents, and with
``minReadySeconds`` the time) are those of its previous sync that wrote nothing. The store
reports every write (``Store.watch``) and every owner whose dependents were written
(``Store.watch_owners``), so a set is quiet exactly while none of that moved.
tests/sim/cluster/test_sts_quiet.py and tests/sim/driver/test_sim_linear.py compare runs with a
sync of every set on every pass.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping
from typing import Any

from pulumi_lws.sim.cluster.clock import Clock
from pulumi_lws.sim.cluster.store import Store


class QuietSets:
    """The sets of one kind that are quiet, those awake, and their places in the store's list."""

    kind = "StatefulSet"

    def __init__(self, store: Store, clock: Clock) -> None:
        self.store, self.clock = store, clock
        #: uids whose last sync wrote nothing and whose inputs have not moved since
        self.quiet: set[str] = set()
        self._awake: set[str] = set()  # uids of listed sets not quiet
        self._timed: dict[str, float] = {}  # quiet uid with minReadySeconds -> the time it went quiet
        self._written, self._owners = store.watch(), store.watch_owners()
        self._order: list[dict[str, Any]] | None = None  # the list the places below are in
        self._position: dict[str, int] = {}  # uid -> place in the list

    def visit(self, sync: Callable[[dict[str, Any]], None]) -> None:
        """``sync`` every StatefulSet in list order, skipping one whose inputs are exactly those of its
        previous sync that wrote nothing (same result again: nothing). Inputs: the set itself
        (its writes), every write to its dependents (pods, revisions, claims: what moves
        ``Store.dependents_epoch``) and, with ``minReadySeconds``, the time (availability depends
        on it).

        Only the sets that are not quiet are visited, in list order: the store reports the uids
        written (``Store.watch``) and those whose dependents were (``Store.watch_owners``); after
        each sync, a set woken later in the list is visited in this pass, one woken earlier in the
        next — what a walk over the whole list checking each set's inputs does.
        tests/sim/driver/test_sim_linear.py compares runs with a sync of every set on every pass."""
        store = self.store
        ordered = store.ordered(self.kind)
        if ordered is not self._order:  # a create or removal: new places (the old list is kept, so never re-used)
            self._order = ordered
            self._position = {sts["metadata"]["uid"]: n for n, sts in enumerate(ordered)}
            self._awake = set(self._position).difference(self.quiet)
        self._wake()
        now, quiet, awake, position = self.clock.now, self.quiet, self._awake, self._position
        for uid, at in list(self._timed.items()):  # quiet with minReadySeconds: woken when the time moves
            if at != now:
                del self._timed[uid]
                quiet.discard(uid)
                if uid in position:
                    awake.add(uid)
        queue = sorted(position[uid] for uid in awake)
        queued = set(queue)
        while queue:
            n = heapq.heappop(queue)
            sts = ordered[n]
            m = sts["metadata"]
            if m.get("deletionTimestamp"):
                continue
            uid = m["uid"]
            before = store.version
            sync(sts)
            if store.version == before:
                awake.discard(uid)
                quiet.add(uid)
                if sts["spec"].get("minReadySeconds"):
                    self._timed[uid] = now
            else:
                for woken in self._wake():
                    at = position[woken]
                    if at > n and at not in queued:
                        queued.add(at)
                        heapq.heappush(queue, at)

    def mark(self, sts: Mapping[str, Any]) -> None:
        """Record ``sts`` as after a sync, now, that wrote nothing (its next sync would write
        nothing, which the caller knows: a seeded converged cluster): skipped until one of its
        inputs moves from here on."""
        uid = sts["metadata"]["uid"]
        self._written.discard(uid)
        self._owners.discard(uid)
        self._awake.discard(uid)
        self.quiet.add(uid)
        if sts["spec"].get("minReadySeconds"):
            self._timed[uid] = self.clock.now

    def wake(self, uid: str) -> None:
        """An input :meth:`visit` cannot see moved for ``uid`` (a pod name it could not take is
        free again): visited at the next pass."""
        self.quiet.discard(uid)
        self._timed.pop(uid, None)
        if uid in self._position:
            self._awake.add(uid)

    def _wake(self) -> list[str]:
        """Sets written, or with a dependent written, since the last look: no longer quiet."""
        changed = self._written | self._owners
        self._written.clear()
        self._owners.clear()
        woken = [uid for uid in changed if uid in self._position]
        for uid in woken:
            self.quiet.discard(uid)
            self._timed.pop(uid, None)
            self._awake.add(uid)
        return woken
