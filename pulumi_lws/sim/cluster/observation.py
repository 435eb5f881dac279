"""What ``SimCluster.observe`` reads for one scope, kept between observations and brought up to
date from the objects written since (``Store.watch``) instead of re-listed and re-copied.

Invariant: :meth:`Observations.objects` returns exactly what a fresh read gives — ``{(kind, name):
Store.observed(obj)}`` over ``Store.list(kind, namespace, selector)`` for each kind of the scope in
order, then every Node when asked — the same keys in the same order and the same copies. Why it
holds: only a write (``Store.touch``, which every create goes through) or a removal changes what a
read gives, and each reports the object's uid to the watcher. An unreported object kept its
resourceVersion, so ``Store.observed`` hands out the copy the entry holds, and its labels, so it
still matches as it did. A reported one is looked at again: its copy is re-read, an object that
stopped matching (or was removed) leaves the dict (removal keeps the order of the others), and
one that started matching takes the place its key had (a pod removed and recreated under its
name), or, a new key, its place in name order among its kind (a read lists each kind by
``(namespace, name)``, which in one namespace is by name; reading all namespaces, a new key
makes the entry read afresh). A read in which one key appears twice (a Node kind both listed
and asked for) is never kept. tests/sim/cluster/test_observation_cache.py
compares every observation of every example and fleet rollout with a fresh read.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from typing import Any

from pulumi_lws.core.contract.ports import SelectorValue
from pulumi_lws.sim.cluster.selectors import match_expression
from pulumi_lws.sim.cluster.store import Store

ObjKey = tuple[str, str]  # (kind, name): Snapshot's key
#: (kind, label selector pairs) per kind of a scope, in order; a value None: the key exists,
#: ABSENT: it does not
Reads = tuple[tuple[str, tuple[tuple[str, SelectorValue], ...]], ...]


def selector_of(pairs: tuple[tuple[str, SelectorValue], ...]) -> dict[str, Any]:
    """The label selector of ``pairs`` (``Scope.selector_for``'s form) as ``Store.list`` takes it."""
    return {
        "matchLabels": {k: v for k, v in pairs if isinstance(v, str)},
        "matchExpressions": [
            {"key": k, "operator": "Exists" if v is None else v.value} for k, v in pairs if not isinstance(v, str)
        ],
    }


def selects(obj: Mapping[str, Any], namespace: str | None, wanted, expressions) -> bool:
    """``Store.list``'s filter: in ``namespace`` (any when None), with every ``wanted`` label
    pair and matching every expression."""
    m = obj["metadata"]
    if namespace is not None and m["namespace"] != namespace:
        return False
    labels = m.get("labels") or {}
    for key, value in wanted:
        if labels.get(key) != value:
            return False
    return not expressions or all(match_expression(e, labels) for e in expressions)


def read_afresh(
    store: Store, namespace: str | None, reads: Reads, nodes: bool
) -> tuple[dict[ObjKey, dict[str, Any]], dict[str, ObjKey], int]:
    """The straightforward read: the objects by key (a key read twice: its last object, at its
    first place, as ``Snapshot.of`` builds them), the key of each uid, and how many were read."""
    objects: dict[ObjKey, dict[str, Any]] = {}
    keys: dict[str, ObjKey] = {}
    count = 0
    listed = [(kind, store.list(kind, namespace, selector_of(pairs))) for kind, pairs in reads]
    if nodes:
        listed.append(("Node", store.list("Node")))
    for kind, objs in listed:
        for o in objs:
            m = o["metadata"]
            key = (kind, m["name"])
            objects[key] = store.observed(o)
            keys[m["uid"]] = key
        count += len(objs)
    return objects, keys, count


class _Entry:
    """One scope's last read: ``objects`` in read order, ``keys`` the uid of each, ``dirty`` the
    store's watcher (uids written or removed since)."""

    def __init__(self, store: Store, namespace: str | None, reads: Reads, nodes: bool) -> None:
        self.namespace, self.reads, self.nodes = namespace, reads, nodes
        self.filters = {}
        for kind, pairs in reads:
            sel = selector_of(pairs)
            self.filters[kind] = (tuple(sel["matchLabels"].items()), tuple(sel["matchExpressions"]))
        self.kinds = [kind for kind, _ in reads] + (["Node"] if nodes else [])
        self.dirty = store.watch()  # before the read: nothing written after it is missed
        self.objects: dict[ObjKey, dict[str, Any]] = {}
        self.keys: dict[str, ObjKey] = {}
        self.kept = self._read(store)

    def _read(self, store: Store) -> bool:
        """A fresh read; False if a key appeared twice (such an entry is read afresh every time)."""
        self.dirty.clear()
        self.objects, self.keys, count = read_afresh(store, self.namespace, self.reads, self.nodes)
        self.names: dict[str, list[str]] = {kind: [] for kind in self.kinds}
        for kind, name in self.objects:
            self.names[kind].append(name)  # in read order: by name within the kind
        return count == len(self.objects)

    def _matches(self, obj: Mapping[str, Any]) -> bool:
        kind = obj["kind"]
        if kind == "Node" and self.nodes:
            return True
        f = self.filters.get(kind)
        return f is not None and selects(obj, self.namespace, f[0], f[1])

    def refresh(self, store: Store) -> dict[ObjKey, dict[str, Any]]:
        if not self.kept:
            self.kept = self._read(store)
            return self.objects
        if not self.dirty:
            return self.objects
        objects, keys = self.objects, self.keys
        vacated: set[ObjKey] = set()
        joining: list[tuple[str, dict[str, Any]]] = []
        for uid in self.dirty:
            obj = store.by_uid(uid)
            key = keys.get(uid)
            if key is not None:
                if obj is None or not self._matches(obj):
                    del keys[uid]
                    vacated.add(key)
                else:
                    objects[key] = store.observed(obj)
            elif obj is not None and self._matches(obj):
                joining.append((uid, obj))
        self.dirty.clear()
        inserted = False
        for uid, obj in joining:
            key = (obj["kind"], obj["metadata"]["name"])
            if key in vacated:  # its old place (a pod recreated under its name)
                vacated.discard(key)
            elif key in objects or self.namespace is None:
                # held twice, or the read order is (namespace, name), not name: read afresh
                self.kept = self._read(store)
                return self.objects
            else:
                bisect.insort(self.names[key[0]], key[1])
                inserted = True
            keys[uid] = key
            objects[key] = store.observed(obj)
        for kind, name in vacated:
            del objects[(kind, name)]
            names = self.names[kind]
            at = bisect.bisect_left(names, name)
            if at < len(names) and names[at] == name:
                del names[at]
            else:  # reading all namespaces, a kind is in (namespace, name) order, not by name
                names.remove(name)
        if inserted:  # the read order: kind by kind, by name within a kind
            self.objects = objects = {(k, n): objects[(k, n)] for k in self.kinds for n in self.names[k]}
        return objects


class Observations:
    """The entries of the scopes read lately (at most :attr:`LIMIT`: a scope not read for a while is
    forgotten, and its watcher dropped)."""

    LIMIT = 8

    def __init__(self, store: Store) -> None:
        self.store = store
        self._entries: dict[tuple, _Entry] = {}

    def objects(self, namespace: str | None, reads: Reads, nodes: bool) -> dict[ObjKey, dict[str, Any]]:
        """A new dict equal, key order included, to a fresh read (module docstring)."""
        key = (namespace, reads, nodes)
        entry = self._entries.pop(key, None)
        if entry is None:
            entry = _Entry(self.store, namespace, reads, nodes)
            while len(self._entries) >= self.LIMIT:
                oldest = next(iter(self._entries))
                self.store.unwatch(self._entries.pop(oldest).dirty)
            objects = entry.objects
        else:
            objects = entry.refresh(self.store)
        self._entries[key] = entry  # last read last
        return dict(objects)
