"""In-memory object store: the simulator's API server.

Invariants:
- every stored object has ``metadata.uid`` (unique, never reused), ``resourceVersion`` (a
  global counter, bumped on every write), ``generation`` (bumped only when ``spec`` changes)
  and ``creationTimestamp`` from the simulated clock;
- ``delete`` never removes an object that still has finalizers or a Pod that the kubelet has
  not finished terminating: it sets ``deletionTimestamp`` instead, like the API server;
- a delete with a ``uid`` precondition never touches a recreated object of the same name;
- :attr:`Store.version` changes on every write, so callers can run controllers to a fixpoint.

Cost (docs/simulator.md "Performance"): reads are indexed, never a scan per call —
:meth:`Store.list` of a kind answers from a per-kind list sorted once per create/remove of that
kind; :meth:`Store.dependents` from an owner-uid index; :meth:`Store.observed` hands out a
stripped copy of an object that is re-made only when its ``resourceVersion`` changed (every
write goes through :meth:`Store.touch`, so an unchanged version is an unchanged object);
:meth:`Store.dependents_epoch` counts writes to an owner's dependents, so a controller can skip an
owner none of whose inputs changed. Two more indexes follow every write (``touch``) and removal,
so the garbage collector and the scheduler visit what may need them, not the whole store:
:attr:`Store.gc_candidates` (deleting objects, and objects whose owners may all be gone) and
:attr:`Store.unbound_pods` (Pending pods without a node, not deleting); and
:attr:`Store.pods_written` tells the kubelet which pods were written since it last looked.
"""

from __future__ import annotations

import builtins
import uuid
from collections.abc import Iterator, Mapping
from typing import Any, cast

from pulumi_lws.core.k8s.copying import json_copy
from pulumi_lws.sim.cluster.clock import Clock
from pulumi_lws.sim.cluster.copies import refreshed, strip_internal  # re-exported
from pulumi_lws.sim.cluster.selectors import match_expression, selector_matches  # noqa: F401  (re-exported)

FOREGROUND = "foregroundDeletion"
CLUSTER_SCOPED = frozenset(
    {
        "Node",
        "Namespace",
        "PersistentVolume",
        "ClusterRole",
        "ClusterRoleBinding",
        "MutatingAdmissionPolicy",
        "MutatingAdmissionPolicyBinding",
    }
)
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


class SimError(Exception):
    """An API error (the ``reason`` mirrors Kubernetes' StatusReason)."""

    reason = "InternalError"


class NotFound(SimError):
    reason = "NotFound"


class AlreadyExists(SimError):
    reason = "AlreadyExists"


class Conflict(SimError):
    reason = "Conflict"


Key = tuple[str, str]  # (namespace, name)


def clone(value: Any) -> Any:
    """A deep copy of JSON-shaped data (:func:`pulumi_lws.core.k8s.copying.json_copy`)."""
    return json_copy(value)


def meta(obj: Mapping[str, Any]) -> dict[str, Any]:
    # a stored object is a dict: the Mapping in the signature is for readers' sake
    return cast("dict[str, Any]", obj).setdefault("metadata", {})


def owner_uids(obj: Mapping[str, Any]) -> list[str]:
    return [r["uid"] for r in (obj.get("metadata") or {}).get("ownerReferences") or [] if r.get("uid")]


def controller_uid(obj: Mapping[str, Any]) -> str | None:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref.get("uid")
    return None


def owner_ref(owner: Mapping[str, Any], *, controller: bool = True, block: bool = True) -> dict[str, Any]:
    m = owner["metadata"]
    return {
        "apiVersion": owner.get("apiVersion", "v1"),
        "kind": owner["kind"],
        "name": m["name"],
        "uid": m["uid"],
        "controller": controller,
        "blockOwnerDeletion": block,
    }


class Store:
    """Objects by kind, then (namespace, name). Controllers mutate stored dicts in place and call
    :meth:`touch`; everything handed outside goes through :meth:`snapshot_copy`."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.version = 0
        #: ``<ns>/<pod>`` -> what mutating admission changed at its (latest) creation
        self.admitted: dict[str, dict[str, Any]] = {}
        self._objs: dict[str, dict[Key, dict[str, Any]]] = {}
        self._by_uid: dict[str, dict[str, Any]] = {}
        self._dependents: dict[str, set[str]] = {}
        self._sorted: dict[str, builtins.list[dict[str, Any]]] = {}  # kind -> objects by (namespace, name)
        self._observed: dict[str, tuple[str, dict[str, Any]]] = {}  # uid -> (resourceVersion, stripped copy)
        self._epochs: dict[str, int] = {}  # owner uid -> writes to its dependents
        self._uid_counter = 0
        self._seq: dict[str, int] = {}  # uid -> creation counter (the order of a kind's objects)
        #: uids the garbage collector must look at: every deleting object, and every object whose
        #: owners may all be gone (written with only missing owners, or an owner was removed).
        #: A superset is harmless (the collector re-checks); ``gc_added`` lists additions in order.
        self.gc_candidates: set[str] = set()
        self.gc_added: builtins.list[str] = []
        #: uids of Pods the scheduler must look at (``Scheduler._wants_scheduling``, exactly)
        self.unbound_pods: set[str] = set()
        #: uids of Pods written (or created) since the kubelet took this set (``Kubelet.sync_all``)
        self.pods_written: set[str] = set()
        #: sets registered by :meth:`watch`: each gets the uid of every object written, created or removed
        self._watchers: builtins.list[set[str]] = []
        #: sets registered by :meth:`watch_owners`: each gets every uid whose dependents_epoch moves
        self._owner_watchers: builtins.list[set[str]] = []
        self._ip_counter = 10
        #: kubelet hook: is this (deleting) pod done terminating? Installed by the cluster.
        self.pod_terminated = lambda pod: not (pod.get("spec") or {}).get("nodeName")

    # ---- reads ---------------------------------------------------------------------------
    def get(self, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        return self._objs.get(kind, {}).get((self._ns(kind, namespace), name))

    def by_uid(self, uid: str | None) -> dict[str, Any] | None:
        return self._by_uid.get(uid) if uid else None

    def stored(self, uid: str) -> dict[str, Any]:
        """The object ``uid`` names, which the caller knows is stored (it comes from one of the
        store's own indexes: ``unbound_pods``, the GC's candidates); KeyError if it is not."""
        return self._by_uid[uid]

    def list(
        self, kind: str, namespace: str | None = None, selector: Mapping[str, Any] | None = None
    ) -> builtins.list[dict[str, Any]]:
        """Objects of ``kind`` (in ``namespace`` if given) matching ``selector``, sorted by name."""
        ordered = self.ordered(kind)
        if namespace is None and not selector:
            return list(ordered)
        # ``selector_matches`` unrolled: the selector is read once, not once per object
        wanted = tuple(((selector or {}).get("matchLabels") or {}).items())
        expressions = (selector or {}).get("matchExpressions") or ()
        out = []
        for o in ordered:
            m = o["metadata"]
            if namespace is not None and m["namespace"] != namespace:
                continue
            labels = m.get("labels") or {}
            for key, value in wanted:
                if labels.get(key) != value:
                    break
            else:
                if not expressions or all(match_expression(e, labels) for e in expressions):
                    out.append(o)
        return out

    def observed(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """``strip_internal(obj)``, shared between observations while ``obj`` is unchanged (its
        ``resourceVersion`` is the same). Observers hand these to planners, which only read."""
        m = obj["metadata"]
        uid, rv = m["uid"], m.get("resourceVersion")
        hit = self._observed.get(uid)
        if hit is not None and hit[0] == rv:
            return hit[1]
        stripped = strip_internal(obj) if hit is None else refreshed(hit[1], obj)
        self._observed[uid] = (rv, stripped)
        return stripped

    def watch(self) -> set[str]:
        """A new set the store adds to the uid of every object written (:meth:`touch`, so every
        create), or removed, from now on; the watcher empties it as it likes. :meth:`unwatch` ends it."""
        watcher: set[str] = set()
        self._watchers.append(watcher)
        return watcher

    def unwatch(self, watcher: set[str]) -> None:
        self._watchers = [w for w in self._watchers if w is not watcher]

    def watch_owners(self) -> set[str]:
        """A new set the store adds to every uid whose :meth:`dependents_epoch` moves from now on."""
        watcher: set[str] = set()
        self._owner_watchers.append(watcher)
        return watcher

    def ordered(self, kind: str) -> builtins.list[dict[str, Any]]:
        """The store's own list of ``kind`` by (namespace, name), not a copy (read only): the same
        list object until a create or removal of the kind (or a reload) replaces it."""
        ordered = self._sorted.get(kind)
        if ordered is None:  # names never change: re-sorted only after a create/remove of the kind
            ordered = sorted(
                self._objs.get(kind, {}).values(), key=lambda o: (meta(o).get("namespace", ""), meta(o)["name"])
            )
            self._sorted[kind] = ordered
        return ordered

    def dependents_epoch(self, uid: str) -> int:
        """Changes whenever a dependent of ``uid`` is created, written, re-owned or removed."""
        return self._epochs.get(uid, 0)

    def kinds(self) -> builtins.list[str]:
        return sorted(k for k, objs in self._objs.items() if objs)

    def dependents(self, uid: str) -> builtins.list[dict[str, Any]]:
        """Objects whose ownerReferences name ``uid`` (sorted by kind, name)."""
        objs = [self._by_uid[d] for d in self._dependents.get(uid, ()) if d in self._by_uid]
        return sorted(objs, key=lambda o: (o["kind"], meta(o)["name"]))

    def dependents_unordered(self, uid: str) -> builtins.list[dict[str, Any]]:
        """:meth:`dependents` in no particular order (for order-free consumers: no sort)."""
        objs = self._by_uid
        return [objs[d] for d in self._dependents.get(uid, ()) if d in objs]

    def all(self) -> Iterator[dict[str, Any]]:
        for kind in sorted(self._objs):
            yield from list(self._objs[kind].values())

    def __len__(self) -> int:
        return len(self._by_uid)

    @staticmethod
    def snapshot_copy(obj: Mapping[str, Any]) -> dict[str, Any]:
        return clone(dict(obj))

    # ---- writes --------------------------------------------------------------------------
    def create(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """Store a copy of ``obj`` with server-set metadata; ``generateName`` gets a random suffix."""
        new = clone(dict(obj))
        m = meta(new)
        kind = new["kind"]
        if not m.get("name"):
            if not m.get("generateName"):
                raise SimError(f"{kind}: metadata.name or generateName is required")
            m["name"] = self._generate_name(kind, m.get("namespace", "default"), m["generateName"])
        m["namespace"] = self._ns(kind, m.get("namespace") or "default")
        key = (m["namespace"], m["name"])
        if key in self._objs.get(kind, {}):
            raise AlreadyExists(f"{kind} {m['namespace']}/{m['name']} already exists")
        self._uid_counter += 1
        m["uid"] = str(uuid.UUID(int=self._uid_counter))
        m["generation"] = 1
        m["creationTimestamp"] = self.clock.timestamp()
        m.pop("deletionTimestamp", None)
        new.setdefault("status", {})
        new["_sim_created_at"] = self.clock.now
        from pulumi_lws.sim.cluster.defaults import apply_defaults

        apply_defaults(new, self)
        if kind == "Pod":  # the API server's mutating admission (MutatingAdmissionPolicy), after defaulting
            from pulumi_lws.sim.cluster.admission import admit

            new = admit(new, self)
        self._objs.setdefault(kind, {})[key] = new
        self._sorted.pop(kind, None)
        self._by_uid[m["uid"]] = new
        self._seq[m["uid"]] = self._uid_counter
        self._index_owners(new)
        self.touch(new)
        return new

    def touch(self, obj: dict[str, Any], *, spec_changed: bool = False) -> None:
        """Record an in-place write: bump resourceVersion (and generation if the spec changed)."""
        self.version += 1
        m = meta(obj)
        m["resourceVersion"] = str(self.version)
        self._bump_owners(obj)
        if spec_changed:
            m["generation"] = int(m.get("generation") or 0) + 1
        uid = m["uid"]
        for watcher in self._watchers:
            watcher.add(uid)
        if m.get("deletionTimestamp") or (m.get("ownerReferences") and self.all_owners_gone(obj)):
            self._gc_candidate(uid)
        if obj["kind"] == "Pod":
            self.pods_written.add(uid)
            if (
                not (obj.get("spec") or {}).get("nodeName")
                and not m.get("deletionTimestamp")
                and obj["status"].get("phase") == "Pending"
            ):
                self.unbound_pods.add(uid)
            else:
                self.unbound_pods.discard(uid)

    def all_owners_gone(self, obj: Mapping[str, Any]) -> bool:
        """It names owners by uid and none of them exists (the garbage collector deletes it)."""
        refs = owner_uids(obj)
        return bool(refs) and all(self.by_uid(u) is None for u in refs)

    def creation_order(self, uid: str) -> int:
        """The object's place among its kind in :meth:`all` (creation order)."""
        return self._seq[uid]

    def _gc_candidate(self, uid: str) -> None:
        if uid not in self.gc_candidates:
            self.gc_candidates.add(uid)
            self.gc_added.append(uid)

    def replace(self, stored: dict[str, Any], desired: Mapping[str, Any]) -> dict[str, Any]:
        """Update spec and user metadata of ``stored`` from ``desired`` (status is never touched)."""
        from pulumi_lws.sim.cluster.defaults import apply_defaults

        want = clone(dict(desired))
        want.setdefault("metadata", {})
        apply_defaults(want, self, existing=stored)
        spec_changed = want.get("spec") != stored.get("spec")
        for k, v in want.items():
            if k not in ("metadata", "status") and not k.startswith("_sim"):
                stored[k] = v
        for k in [
            k
            for k in stored
            if k not in want and k not in ("metadata", "status", "kind", "apiVersion") and not k.startswith("_sim")
        ]:
            del stored[k]
        m = meta(stored)
        for field in ("labels", "annotations"):
            if want["metadata"].get(field):
                m[field] = dict(want["metadata"][field])
            else:
                m.pop(field, None)
        if "ownerReferences" in want["metadata"]:
            self._unindex_owners(stored)
            m["ownerReferences"] = clone(want["metadata"]["ownerReferences"])
            self._index_owners(stored)
        self.touch(stored, spec_changed=spec_changed)
        return stored

    def delete(
        self,
        kind: str,
        namespace: str,
        name: str,
        *,
        propagation: str = "Background",
        uid: str | None = None,
        grace: float | None = None,
    ) -> dict[str, Any] | None:
        """API DELETE. Returns the object if it still exists (terminating), None if removed.

        Raises NotFound, or Conflict when ``uid`` does not match (a recreated object).
        """
        obj = self.get(kind, namespace, name)
        if obj is None:
            raise NotFound(f"{kind} {namespace}/{name} not found")
        m = meta(obj)
        if uid and m["uid"] != uid:
            raise Conflict(f"{kind} {namespace}/{name}: uid precondition failed (have {m['uid']}, want {uid})")
        finalizers = m.setdefault("finalizers", [])
        if propagation == "Foreground" and FOREGROUND not in finalizers and self.dependents(m["uid"]):
            finalizers.append(FOREGROUND)
        elif propagation == "Orphan":
            for dep in self.dependents(m["uid"]):
                self._drop_owner(dep, m["uid"])
        if not finalizers:
            m.pop("finalizers")
        if not m.get("deletionTimestamp"):
            if kind == "Pod" and (obj.get("spec") or {}).get("nodeName"):
                g = grace if grace is not None else (obj.get("spec") or {}).get("terminationGracePeriodSeconds")
                g = float(self.default_grace if g is None else g)
                m["deletionGracePeriodSeconds"] = int(g)
                m["deletionTimestamp"] = self.clock.timestamp()
                m.setdefault("annotations", {})
                obj.setdefault("status", {})
                obj["_sim_delete_at"] = self.clock.now + g  # kubelet-side deadline, stripped in snapshots
            else:
                m["deletionTimestamp"] = self.clock.timestamp()
            self.touch(obj)
        return None if self.remove_if_done(obj) else obj

    default_grace: float = 1.0

    def remove_if_done(self, obj: dict[str, Any]) -> bool:
        """Remove a deleting object once it has no finalizers (and, for Pods, is terminated)."""
        m = meta(obj)
        if not m.get("deletionTimestamp") or m.get("finalizers"):
            return False
        if obj["kind"] == "Pod" and not self.pod_terminated(obj):
            return False
        self._remove(obj)
        return True

    def remove_finalizer(self, obj: dict[str, Any], finalizer: str) -> None:
        m = meta(obj)
        if finalizer in (m.get("finalizers") or []):
            m["finalizers"] = [f for f in m["finalizers"] if f != finalizer]
            if not m["finalizers"]:
                m.pop("finalizers")
            self.touch(obj)
            self.remove_if_done(obj)

    def _remove(self, obj: dict[str, Any]) -> None:
        m = meta(obj)
        if self._objs[obj["kind"]].pop((m["namespace"], m["name"]), None) is not None:
            self._sorted.pop(obj["kind"], None)
        self._by_uid.pop(m["uid"], None)
        self._observed.pop(m["uid"], None)
        self._seq.pop(m["uid"], None)
        self.gc_candidates.discard(m["uid"])
        self.unbound_pods.discard(m["uid"])
        self.pods_written.discard(m["uid"])
        self._unindex_owners(obj)
        self.version += 1
        for watcher in self._watchers:
            watcher.add(m["uid"])
        for dependent in self._dependents.get(m["uid"], ()):  # their last owner may be gone now
            if dependent in self._by_uid:
                self._gc_candidate(dependent)

    def _drop_owner(self, obj: dict[str, Any], owner_uid: str) -> None:
        self._unindex_owners(obj)
        meta(obj)["ownerReferences"] = [r for r in meta(obj).get("ownerReferences") or [] if r.get("uid") != owner_uid]
        self._index_owners(obj)
        self.touch(obj)

    # ---- helpers -------------------------------------------------------------------------
    def allocate_cluster_ip(self) -> str:
        self._ip_counter += 1
        return f"10.96.{self._ip_counter // 250}.{self._ip_counter % 250 + 1}"

    def random_suffix(self, n: int = 5) -> str:
        return "".join(self.clock.rng.choice(_NAME_ALPHABET) for _ in range(n))

    def _generate_name(self, kind: str, namespace: str, prefix: str) -> str:
        for _ in range(100):
            name = prefix + self.random_suffix()
            if self.get(kind, namespace, name) is None:
                return name
        raise AlreadyExists(f"could not generate a unique name for {prefix}")

    @staticmethod
    def _ns(kind: str, namespace: str | None) -> str:
        return "" if kind in CLUSTER_SCOPED else (namespace or "default")

    def _bump_owners(self, obj: Mapping[str, Any]) -> None:
        for ref in obj["metadata"].get("ownerReferences") or ():
            ou = ref.get("uid")
            if ou:
                self._epochs[ou] = self._epochs.get(ou, 0) + 1
                for watcher in self._owner_watchers:
                    watcher.add(ou)

    def _index_owners(self, obj: Mapping[str, Any]) -> None:
        self._bump_owners(obj)
        for ou in owner_uids(obj):
            self._dependents.setdefault(ou, set()).add(obj["metadata"]["uid"])

    def _unindex_owners(self, obj: Mapping[str, Any]) -> None:
        self._bump_owners(obj)
        for ou in owner_uids(obj):
            deps = self._dependents.get(ou)
            if deps is not None:
                deps.discard(obj["metadata"]["uid"])
                if not deps:
                    del self._dependents[ou]
