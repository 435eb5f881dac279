"""Garbage collector: ownerReferences, background and foreground propagation.

Invariants:
- an object whose owners are all gone (by uid) is deleted (background);
- an owner deleting with the ``foregroundDeletion`` finalizer gets its dependents deleted (those
  that have dependents of their own in foreground, as Kubernetes does) and keeps the finalizer
  until no dependent with ``blockOwnerDeletion: true`` remains;
- a background-deleted owner that still exists (a Pod in its grace period) keeps its dependents.
"""
from __future__ import annotations

from pulumi_lws.sim.store import FOREGROUND, Conflict, NotFound, Store, meta, owner_uids


class GarbageCollector:
    def __init__(self, store: Store) -> None:
        self.store = store

    def sync(self) -> None:
        exists = self.store.by_uid
        for obj in list(self.store.all()):
            m = obj["metadata"]
            if exists(m["uid"]) is None:
                continue  # removed earlier in this pass
            if m.get("deletionTimestamp"):
                if FOREGROUND in (m.get("finalizers") or ()):
                    self._foreground(obj)
                else:
                    self.store.remove_if_done(obj)
            elif m.get("ownerReferences") and self._orphaned(obj):
                self._delete(obj, "Background")

    def _orphaned(self, obj) -> bool:
        refs = owner_uids(obj)
        return bool(refs) and all(self.store.by_uid(u) is None for u in refs)

    def _foreground(self, owner) -> None:
        uid = meta(owner)["uid"]
        blocking = 0
        for dep in self.store.dependents(uid):
            if not meta(dep).get("deletionTimestamp"):
                self._delete(dep, "Foreground" if self.store.dependents(meta(dep)["uid"]) else "Background")
            if self.store.by_uid(meta(dep)["uid"]) is not None and any(
                    r.get("uid") == uid and r.get("blockOwnerDeletion") for r in meta(dep).get("ownerReferences") or []):
                blocking += 1
        if blocking == 0:
            self.store.remove_finalizer(owner, FOREGROUND)

    def _delete(self, obj, propagation: str) -> None:
        m = meta(obj)
        try:
            self.store.delete(obj["kind"], m["namespace"], m["name"], propagation=propagation, uid=m["uid"])
        except (NotFound, Conflict):
            pass
