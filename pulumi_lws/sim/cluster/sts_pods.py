"""A big StatefulSet's pods and what its sync counts of them, kept from the store's writes.

``StatefulSetController.sync`` lists a set's pods and walks them three or four times (creates,
rolling update, status). For the leader StatefulSet of 10,000 LWS groups that is 10,000 pod
dicts read per walk at every pass, most of them unchanged since the last one; the misses on
those dicts grow the per-group cost with the fleet. :class:`PodIndex` keeps, per set of at least
:data:`MIN_REPLICAS` replicas, its pods by ordinal and, per ordinal, the few facts a sync reads
of a pod, updated from the uids the store reports written, created or removed since the last
look (``Store.watch``) instead of re-read from every pod.

Invariants (tests/sim/cluster/test_sts_pods.py runs fleets and scenarios with every set indexed
and with none, and compares the stores write for write):

* :meth:`PodIndex.pods` is, at every call, the dict ``StatefulSetController._pods`` lists then
  (ordinal -> the stored pod it controls, named ``<sts>-<ordinal>``), and each :class:`Table`
  set and count is the one a walk over that dict gives: a pod's facts are read from the pod
  when it is written, and every write goes through ``Store.touch`` (the store's invariant,
  which ``Store.observed`` relies on too). The one fact written without a touch, the kubelet's
  ``ready_since`` of a pod already Ready, is re-read at every call for the pods Ready without
  it (normally none);
* a table is only read between two of its own refreshes as the dict listed then, as the sync
  reads its listing (its pods are not re-listed between the creates and the condemned).

Memory: per indexed set one entry per pod in each of a few dicts and sets; a set removed from
the store drops its table at the next refresh. Per controller, never process-wide: nothing to
``clear()``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from pulumi_lws.core.k8s import keys as K
from pulumi_lws.sim.cluster.store import Store, controller_uid

#: sets with fewer replicas are walked (the walk is cheap, and a table costs a watcher's work)
MIN_REPLICAS = 128


def running_ready(pod: Mapping[str, Any]) -> bool:
    """Phase Running and condition Ready True (``condition_true`` inlined: the leader StatefulSet
    asks it of every group's leader pod in every sync)."""
    status = pod["status"]
    if status.get("phase") != "Running":
        return False
    for c in status.get("conditions") or ():
        if c.get("type") == "Ready" and c.get("status") == "True":
            return True
    return False


class Table:
    """One set's pods (:attr:`pods`) and, by ordinal, what ``StatefulSetController.sync`` reads:
    deleting, failed (Failed/Succeeded, not deleting), ready (Running + Ready, deleting or not),
    available at ``minReadySeconds`` 0 (ready with a ``ready_since``), healthy (available, not
    deleting), the revision label, and per revision the non-deleting pods on it."""

    def __init__(self) -> None:
        self.pods: dict[int, dict[str, Any]] = {}
        self.uid_at: dict[int, str] = {}
        self.deleting: set[int] = set()
        self.failed: set[int] = set()
        self.ready: set[int] = set()
        self.available: set[int] = set()
        self.healthy: set[int] = set()
        self.waiting: set[int] = set()  # ready without ready_since: re-read at every refresh
        self.revision: dict[int, str | None] = {}
        self.live_revisions: Counter[str | None] = Counter()  # non-deleting pods per revision
        self.revisions: Counter[str | None] = Counter()  # every pod per revision

    def add(self, ordinal: int, pod: dict[str, Any], ready_since: Callable[[Mapping[str, Any]], Any]) -> None:
        m = pod["metadata"]
        self.pods[ordinal] = pod
        self.uid_at[ordinal] = m["uid"]
        deleting = bool(m.get("deletionTimestamp"))
        revision = (m.get("labels") or {}).get(K.CONTROLLER_REVISION_HASH)
        self.revision[ordinal] = revision
        self.revisions[revision] += 1
        if deleting:
            self.deleting.add(ordinal)
        else:
            self.live_revisions[revision] += 1
            if pod["status"].get("phase") in ("Failed", "Succeeded"):
                self.failed.add(ordinal)
        if running_ready(pod):
            self.ready.add(ordinal)
            if ready_since(pod) is not None:
                self.available.add(ordinal)
                if not deleting:
                    self.healthy.add(ordinal)
            else:
                self.waiting.add(ordinal)

    def drop(self, ordinal: int) -> None:
        del self.pods[ordinal], self.uid_at[ordinal]
        revision = self.revision.pop(ordinal)
        _less(self.revisions, revision)
        if ordinal in self.deleting:
            self.deleting.discard(ordinal)
        else:
            _less(self.live_revisions, revision)
        for facts in (self.failed, self.ready, self.available, self.healthy, self.waiting):
            facts.discard(ordinal)

    def unhealthy(self, wanted: range) -> int:
        """How many ``wanted`` ordinals hold no healthy pod (``_unhealthy`` at ``minReadySeconds`` 0:
        the clock never goes back, so a pod ready since some time is available now)."""
        healthy = self.healthy
        if not healthy or (min(healthy) >= wanted.start and max(healthy) < wanted.stop):
            return len(wanted) - len(healthy)
        return len(wanted) - sum(1 for o in healthy if o in wanted)

    def to_create(self, wanted: range) -> list[int]:
        """The ``wanted`` ordinals, ascending, where ``_process_replicas`` of a Parallel set writes:
        no pod, or a failed one (at the others it does nothing)."""
        pods = self.pods
        failed = [o for o in self.failed if o in wanted]
        if len(pods) == len(wanted) and self.all_in(wanted):
            return sorted(failed)
        return sorted(set(wanted).difference(pods).union(failed))

    def outdated(self, ordinal: int, update: str) -> bool:
        """A pod at ``ordinal``, not deleting, not on revision ``update`` (what a rolling update deletes)."""
        return ordinal in self.pods and ordinal not in self.deleting and self.revision[ordinal] != update

    def all_in(self, wanted: range) -> bool:
        """Every pod's ordinal is in ``wanted`` (none condemned)."""
        pods = self.pods
        return not pods or (min(pods) >= wanted.start and max(pods) < wanted.stop)


def _less(counter: Counter[str | None], key: str | None) -> None:
    if counter[key] <= 1:
        del counter[key]
    else:
        counter[key] -= 1


class PodIndex:
    """The :class:`Table` of every big StatefulSet a controller syncs (module docstring)."""

    def __init__(self, store: Store, ready_since: Callable[[Mapping[str, Any]], Any]) -> None:
        self.store = store
        self.ready_since = ready_since
        self._tables: dict[str, Table] = {}  # StatefulSet uid -> its table
        self._prefix: dict[str, str] = {}  # StatefulSet uid -> "<name>-"
        self._where: dict[str, tuple[str, int]] = {}  # pod uid -> (its set's uid, its ordinal)
        self._written: set[str] | None = None  # the store's watcher, from the first table on

    def table(self, sts: Mapping[str, Any]) -> Table | None:
        """``sts``'s table refreshed to the store as it is, or None for a small set (not indexed)."""
        m = sts["metadata"]
        uid = m["uid"]
        table = self._tables.get(uid)
        if table is None:
            if int(sts["spec"].get("replicas", 1)) < MIN_REPLICAS:
                return None
            self.refresh()
            return self._build(uid, m["name"] + "-")
        self.refresh()
        return table

    def refresh(self) -> None:
        """Every pod written, created or removed since the last refresh re-read into its table."""
        written = self._written
        if not written:
            return
        store, where, tables = self.store, self._where, self._tables
        for uid in written:
            if uid in tables and store.by_uid(uid) is None:  # the set is gone: so is its table
                self._forget(uid)
                continue
            placed = where.pop(uid, None)
            if placed is not None:
                table = tables[placed[0]]
                if table.uid_at.get(placed[1]) == uid:
                    table.drop(placed[1])
            obj = store.by_uid(uid)
            if obj is not None and obj["kind"] == "Pod":
                self._place(obj)
        written.clear()
        ready_since = self.ready_since
        for table in tables.values():
            for ordinal in [o for o in table.waiting if ready_since(table.pods[o]) is not None]:
                pod = table.pods[ordinal]
                table.drop(ordinal)
                table.add(ordinal, pod, ready_since)

    def _place(self, pod: dict[str, Any]) -> None:
        dm = pod["metadata"]
        controller = controller_uid(pod)
        prefix = self._prefix.get(controller) if controller else None
        if prefix is None:
            return
        name = dm["name"]
        if len(name) > len(prefix) and name.startswith(prefix):
            digits = name[len(prefix) :]
            if digits.isdecimal():
                ordinal = int(digits)
                table = self._tables[controller]  # type: ignore[index]
                if ordinal in table.pods:
                    self._where.pop(table.uid_at[ordinal], None)
                    table.drop(ordinal)
                table.add(ordinal, pod, self.ready_since)
                self._where[dm["uid"]] = (controller, ordinal)  # type: ignore[assignment]

    def _build(self, uid: str, prefix: str) -> Table:
        if self._written is None:
            self._written = self.store.watch()
        table = self._tables[uid] = Table()
        self._prefix[uid] = prefix
        for dep in self.store.dependents_unordered(uid):
            if dep["kind"] == "Pod":
                self._place(dep)
        return table

    def _forget(self, uid: str) -> None:
        table = self._tables.pop(uid)
        del self._prefix[uid]
        for pod_uid in table.uid_at.values():
            self._where.pop(pod_uid, None)
