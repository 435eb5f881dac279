"""Garbage collector: ownerReferences, background and foreground propagation.

Invariants:
- an object whose owners are all gone (by uid) is deleted (background);
- an owner deleting with the ``foregroundDeletion`` finalizer gets its dependents deleted (those
  that have dependents of their own in foreground, as Kubernetes does) and keeps the finalizer
  until no dependent with ``blockOwnerDeletion: true`` remains;
- a background-deleted owner that still exists (a Pod in its grace period) keeps its dependents.

Cost: a pass visits the store's :attr:`~pulumi_lws.sim.cluster.store.Store.gc_candidates` (deleting
objects and possible orphans), not every object. It acts exactly as a scan of every object in
:meth:`Store.all` order would (what it did before; ``tests/sim/cluster/test_sim_gc.py`` runs both): the
other objects are no-ops for that scan, and a candidate that appears during the pass is visited in
this pass when the scan would still reach it (it existed when the pass began and comes later).
"""

from __future__ import annotations

import heapq

from pulumi_lws.sim.cluster.store import FOREGROUND, Conflict, NotFound, Store, meta


class GarbageCollector:
    def __init__(self, store: Store) -> None:
        self.store = store

    def sync(self) -> None:
        store = self.store
        started = store._uid_counter  # objects created from now on are not this pass's
        store.gc_added.clear()
        heap = [self._place(uid) for uid in store.gc_candidates]
        heapq.heapify(heap)
        visited: set[str] = set()
        while heap:
            place = heapq.heappop(heap)
            uid = place[2]
            if uid in visited:
                continue
            visited.add(uid)
            obj = store.by_uid(uid)
            if obj is not None:  # else removed earlier in this pass
                self.visit(obj)
                if store.by_uid(uid) is not None and not self._actionable(obj):
                    store.gc_candidates.discard(uid)
            for new in store.gc_added:  # candidates that appeared meanwhile: the scan visits those ahead
                if new not in visited and store.by_uid(new) is not None and store.creation_order(new) <= started:
                    later = self._place(new)
                    if later > place:
                        heapq.heappush(heap, later)
            store.gc_added.clear()

    def _place(self, uid: str) -> tuple[str, int, str]:
        """Where a scan of :meth:`Store.all` meets the object: kinds by name, then creation order."""
        return (self.store.stored(uid)["kind"], self.store.creation_order(uid), uid)

    def _actionable(self, obj) -> bool:
        m = obj["metadata"]
        return bool(m.get("deletionTimestamp")) or (bool(m.get("ownerReferences")) and self.store.all_owners_gone(obj))

    def visit(self, obj) -> None:
        """One object of the scan: finish or cascade a deletion, or delete an orphan."""
        m = obj["metadata"]
        if m.get("deletionTimestamp"):
            if FOREGROUND in (m.get("finalizers") or ()):
                self._foreground(obj)
            else:
                self.store.remove_if_done(obj)
        elif m.get("ownerReferences") and self.store.all_owners_gone(obj):
            self._delete(obj, "Background")

    def _foreground(self, owner) -> None:
        uid = meta(owner)["uid"]
        blocking = 0
        for dep in self.store.dependents(uid):
            if not meta(dep).get("deletionTimestamp"):
                self._delete(dep, "Foreground" if self.store.dependents(meta(dep)["uid"]) else "Background")
            if self.store.by_uid(meta(dep)["uid"]) is not None and any(
                r.get("uid") == uid and r.get("blockOwnerDeletion") for r in meta(dep).get("ownerReferences") or []
            ):
                blocking += 1
        if blocking == 0:
            self.store.remove_finalizer(owner, FOREGROUND)

    def _delete(self, obj, propagation: str) -> None:
        m = meta(obj)
        try:
            self.store.delete(obj["kind"], m["namespace"], m["name"], propagation=propagation, uid=m["uid"])
        except (NotFound, Conflict):
            pass
