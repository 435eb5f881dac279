"""Apply registered manifests the way ``pulumi up`` with pulumi-kubernetes would.

Per stack, the applier remembers what the previous ``up`` registered (Pulumi's state):
- a manifest not registered before (and not in the cluster) is created; one whose object exists
  is upserted (server-side apply, the project's ``upsertExistingObjects`` premise);
- a registered manifest whose spec / labels / annotations differ from the live object (after
  API defaulting) is updated; ``status`` is never written;
- an object the stack registered last time but not now is deleted with the propagation its
  registered manifest names (``pulumi.com/deletionPropagationPolicy``; Foreground by default),
  like Pulumi deleting a resource with the inputs in its state;
- a change to an immutable field is a replacement, and because the objects are explicitly
  named it is delete-before-replace: the old object is deleted with the propagation of the
  manifest last registered for it, then the new one is created.

How long a delete lasts is the provider's (pulumi-kubernetes v4.25.0 ``provider/pkg/await/
await.go`` ``Deletion``, ``provider/pkg/metadata/overrides.go`` ``DeletedCondition``): it waits
until the object is gone, except for a StatefulSet, Deployment (and the other kinds of
``allowsSkipAwaitWithDelete``) registered with ``pulumi.com/skipAwait: "true"``, whose delete
returns as soon as the DELETE is accepted. So:

- a replacement whose delete the provider waits for parks the new manifest in ``pending`` and
  creates it once the old object is gone (the simulator cannot stop the clock mid-``up``; the
  create happens at the first settle that finds the name free);
- a replacement of a skipAwait workload creates at once: with background propagation the old
  object is already gone; without it the old object is still there, terminating, and the create
  **fails** (below);
- applying a manifest to an object that is terminating (deletionTimestamp set) **fails**: the
  error names the object (``ApplyResult.errors``), the operation counts as not applied (its
  dependents are skipped, nothing is deleted at the end of that run, as after any failed
  operation) and the stack state does not take the manifest. The real provider does not always
  fail — its server-side-apply create is a PATCH (every 4.x from 4.18 on, and 4.29+ with
  ``upsertExistingObjects``) that lands on the terminating object, which then disappears while
  the stack's state says it exists; a plain create (4.29+ without upsert) answers 409
  AlreadyExists — but either way it is a defect, and the simulator, which diffs against the
  cluster rather than a state, would otherwise hide it by creating the object again on the next
  run. The simulator's runner reports apply errors as invariant violations.

Dependencies (``dependencies={dependent: (dependency, ...)}``, refs ``(kind, name)`` in the
dependent's namespace or full ``(kind, namespace, name)`` keys; Pulumi's ``dependsOn``): manifests
are applied in a stable topological order, and a dependent is applied only if every declared
dependency was applied in the same run (created, updated, unchanged, or a delete-before-replace
that is waiting for the old object — a simplification: Pulumi would wait for the new object).
Deletions happen only after every create/update succeeded (Pulumi deletes removed resources at
the end of a successful run), dependents before their dependencies (the previous run's
dependencies), and a deletion that did not happen holds back the deletion of what it depended on.

Fault injection: ``keep`` < 1 applies only a seeded random subset of the operations ("crash
mid-apply"): each operation fails with probability ``1 - keep`` and ``crash`` names operations
that fail for sure; a failed operation's dependents are skipped too, so the applied set is always
closed under the dependencies — exactly what a crashed ``pulumi up`` can leave behind. The stack
state then records exactly the operations that happened.

What counts as an update or a replacement is :mod:`.apply_diff`'s; the resolution of the
dependencies and the upsert and deletion orders are :mod:`.apply_order`'s.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pulumi_lws.sim.cluster.apply_diff import differs as _differs
from pulumi_lws.sim.cluster.apply_diff import immutable_changes
from pulumi_lws.sim.cluster.apply_order import (
    Key,
    deletion_order,
    matching_keys,
    resolve_dependencies,
    topological_order,
)
from pulumi_lws.sim.cluster.apply_order import label as _label
from pulumi_lws.sim.cluster.defaults import apply_defaults
from pulumi_lws.sim.cluster.store import CLUSTER_SCOPED, AlreadyExists, Conflict, NotFound, Store, clone

PROPAGATION_ANNOTATION = "pulumi.com/deletionPropagationPolicy"
SKIP_AWAIT_ANNOTATION = "pulumi.com/skipAwait"
#: kinds whose delete pulumi-kubernetes does not await under skipAwait (v4.25.0
#: provider/pkg/metadata/overrides.go ``allowsSkipAwaitWithDelete``)
DELETE_NOT_AWAITED = frozenset(
    {"Namespace", "Pod", "ReplicationController", "DaemonSet", "Deployment", "StatefulSet", "Job"}
)


def key_of(obj: Mapping[str, Any]) -> Key:
    m = obj.get("metadata") or {}
    return (obj["kind"], Store._ns(obj["kind"], m.get("namespace")), m["name"])


@dataclass
class ApplyResult:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # fault injection: not applied this time
    errors: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = []
        for verb in ("created", "updated", "replaced", "deleted", "skipped", "errors"):
            out += [f"{verb} {k}" for k in getattr(self, verb)]
        return out


#: what a failed apply on a terminating object says (module docstring)
TERMINATING = (
    "the object is terminating (deletionTimestamp set): pulumi-kubernetes' server-side-apply create "
    "would land on it and it would then vanish while the stack state says it exists (409 AlreadyExists "
    "on 4.29+ without upsertExistingObjects)"
)


class _Again:
    """One stack's manifests found unchanged on a live object not written since, so that
    :meth:`Applier.apply` answers "unchanged" again without the store lookup ``_upsert`` makes.

    Invariant: an entry ``key -> (unchanged_at entry, manifest, uid, label)`` was recorded with
    that ``unchanged_at`` entry (the manifest and the live object's resourceVersion) when
    ``_upsert`` found the manifest unchanged on the live object ``uid``; :attr:`written` (a
    :meth:`Store.watch`) holds every uid written or removed since the apply that began last
    (:meth:`begin` drops the entries of the uids written before). So while the uid is not in
    :attr:`written`, the object is stored on that very version, and ``_upsert`` of the same
    manifest would find it unchanged again — if ``unchanged_at`` still holds that entry (callers
    such as sim/driver/seed.py write it; the identity test sees any rewrite), the stack state
    still registers the manifest and no replacement of the key is pending (both tested by the
    caller). Memory: one entry per registered key (the manifest is the state's own).
    """

    __slots__ = ("by_uid", "entries", "written")

    def __init__(self, store: Store) -> None:
        self.entries: dict[Key, tuple[tuple[dict[str, Any], str], dict[str, Any], str, str]] = {}
        self.by_uid: dict[str, Key] = {}
        self.written = store.watch()

    def begin(self) -> None:
        """At the start of an apply: forget the objects written since the last one began."""
        entries, by_uid = self.entries, self.by_uid
        for uid in self.written:
            key = by_uid.pop(uid, None)
            if key is not None:
                entries.pop(key, None)
        self.written.clear()

    def remember(self, key: Key, entry: tuple[dict[str, Any], str], live: Mapping[str, Any], label: str) -> None:
        uid = live["metadata"]["uid"]
        self.forget(key)
        self.entries[key] = (entry, entry[0], uid, label)
        self.by_uid[uid] = key

    def forget(self, key: Key) -> None:
        old = self.entries.pop(key, None)
        if old is not None:
            self.by_uid.pop(old[2], None)


class Applier:
    """Pulumi's view of one or more stacks over a :class:`Store`."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.state: dict[str, dict[Key, dict[str, Any]]] = {}
        self.pending: dict[Key, tuple[str, dict[str, Any]]] = {}  # replacements waiting for the old object
        self.dependencies: dict[str, dict[Key, tuple[Key, ...]]] = {}  # per stack: as last applied
        #: per stack: key -> (manifest, the live object's resourceVersion) of its last upsert that
        #: found nothing to do (``_upsert``: the same manifest on the same object is unchanged again)
        self.unchanged_at: dict[str, dict[Key, tuple[dict[str, Any], str]]] = {}
        #: per stack: the skip of :meth:`_unchanged_again` (invisible: it only answers, without
        #: the store lookup, what ``_upsert`` would, and adds nothing to the state)
        self._again: dict[str, _Again] = {}
        #: per stack: (desired keys, dependency items, resolved dependencies, order) of the last apply
        self._last: dict[str, tuple[list[Key], list[tuple[Any, Any]], dict[Key, tuple[Key, ...]], list[Key]]] = {}

    def apply(
        self,
        manifests: Iterable[Mapping[str, Any]],
        stack_id: str = "sim",
        *,
        keep: float = 1.0,
        rng: random.Random | None = None,
        dependencies: Mapping[tuple, Iterable[tuple]] | None = None,
        crash: Collection[tuple] = (),
    ) -> ApplyResult:
        """Apply ``manifests`` as one ``pulumi up`` of ``stack_id`` (module docstring: order,
        ``dependencies``, ``keep`` and ``crash``). Invariant: an applied dependent's dependencies
        were all applied in this run; a deletion happened only if every upsert happened.
        The stack state shares everything below the top level (and the defaulted fields) with
        ``manifests``: callers treat what they applied as read-only, as ``Reconciled.manifests`` are."""
        res = ApplyResult()
        previous = self.state.setdefault(stack_id, {})
        # not copied: defaulting works on a shallow copy and copies what it writes (sim/cluster/defaults.py),
        # the store copies what it keeps, and the state only reads them (a replacement waiting in
        # ``pending`` gets its own copy)
        desired: dict[Key, dict[str, Any]] = {}
        for m in manifests:  # key_of, inline: once per manifest
            md, kind = m.get("metadata") or {}, m["kind"]
            ns = "" if kind in CLUSTER_SCOPED else (md.get("namespace") or "default")
            desired[(kind, ns, md["name"])] = m if type(m) is dict else dict(m)
        keys = list(desired)
        # the previous apply's resolution and order, when its keys (in order) and its dependencies
        # (in order, of tuples: nothing a caller could change in place) are equal to these:
        # both are functions of those two alone
        items = list((dependencies or {}).items())
        last = self._last.get(stack_id)
        if last is not None and last[0] == keys and last[1] == items and all(type(v) is tuple for _, v in items):
            deps, order = last[2], last[3]
        else:
            deps = resolve_dependencies(desired, dependencies or {})
            order = topological_order(keys, deps)
            self._last[stack_id] = (keys, items, deps, order)
        failed = set(matching_keys(crash, [*desired, *previous])) if crash else set()
        draw = lambda key: key not in failed and (keep >= 1.0 or (rng or random).random() < keep)  # noqa: E731
        # ``sure``: no operation can fail (``draw`` would not draw either), so every manifest is
        # upserted — each comes after its dependencies, all upserted before it — and ``done`` is
        # ``desired``'s keys at the end
        sure = keep >= 1.0 and not failed
        done: set[Key] = set()
        again = self._again_for(stack_id)
        again.begin()
        again_get, unchanged_get = again.entries.get, self.unchanged_at.setdefault(stack_id, {}).get
        written, state_get, unchanged_labels = again.written, previous.get, res.unchanged
        pending = self.pending
        for n, key in enumerate(order):
            if not sure:
                ok = draw(key)  # one draw per operation, whatever its dependencies did
                ds = deps.get(key)
                if not ok or (ds and not done.issuperset(ds)):
                    res.skipped.append(_label(key))
                    continue
                done.add(key)
            manifest = desired[key]
            hit = again_get(key)
            # what ``_upsert`` would find: the very manifest unchanged on the very live version
            # (its entry in ``unchanged_at`` is the one recorded with ``hit``; the object was not
            # written or removed since, so it is stored on that version), registered as is
            if (
                hit is not None
                and hit[1] is manifest
                and hit[2] not in written
                and unchanged_get(key) is hit[0]
                and state_get(key) is manifest
                and not (pending and key in pending)
            ):
                unchanged_labels.append(hit[3])
                continue
            if not self._upsert(stack_id, key, manifest, res):
                # a failed operation (module docstring): its dependents are skipped and nothing
                # is deleted at the end; the sure path now tracks what was applied
                if sure:
                    sure, done = False, set(order[:n])
                done.discard(key)
        if sure:
            known = {k: ds for k, ds in self.dependencies.get(stack_id, {}).items() if k not in desired}
            known.update(deps)
        else:
            known = {k: ds for k, ds in self.dependencies.get(stack_id, {}).items() if k not in done}
            known.update((k, deps[k]) for k in done if k in deps)
        self._delete_removed(
            stack_id,
            previous,
            [k for k in previous if k not in desired],
            known,
            all_upserts_done=sure or len(done) == len(desired),
            draw=draw,
            res=res,
        )
        self.dependencies[stack_id] = {k: ds for k, ds in known.items() if k in previous}
        return res

    def _again_for(self, stack_id: str) -> _Again:
        again = self._again.get(stack_id)
        if again is None:
            again = self._again[stack_id] = _Again(self.store)
        return again

    def _delete_removed(
        self,
        stack_id: str,
        previous: dict[Key, dict[str, Any]],
        removed: list[Key],
        deps: Mapping[Key, tuple[Key, ...]],
        *,
        all_upserts_done: bool,
        draw,
        res: ApplyResult,
    ) -> None:
        """Delete what the stack no longer declares: only after a run whose upserts all happened,
        dependents first; a deletion that did not happen keeps what it depends on."""
        kept: set[Key] = set()
        for key in deletion_order(removed, deps):
            ok = draw(key)
            held = any(key in deps.get(k, ()) for k in kept)
            if not all_upserts_done or not ok or held:
                res.skipped.append(_label(key))
                kept.add(key)
                continue
            self._delete(key, previous[key])
            previous.pop(key, None)
            self.unchanged_at.get(stack_id, {}).pop(key, None)
            self._again_for(stack_id).forget(key)
            res.deleted.append(_label(key))

    def _upsert(self, stack_id: str, key: Key, manifest: dict[str, Any], res: ApplyResult) -> bool:
        """One create, update or replacement; False when it failed (module docstring)."""
        state = self.state[stack_id]
        live = self.store.get(*key)
        if key in self.pending:  # a replacement still waiting for its predecessor to go
            self.pending[key] = (stack_id, clone(manifest))  # recreate once the old object is gone
            self._again_for(stack_id).forget(key)
            state[key] = manifest
            res.replaced.append(_label(key))
            return True
        if live is not None and live["metadata"].get("deletionTimestamp"):
            verb = "update" if key in state else "create"
            res.errors.append(f"{verb} {_label(key)}: {TERMINATING}")
            self.unchanged_at.get(stack_id, {}).pop(key, None)
            self._again_for(stack_id).forget(key)
            return False
        if live is None:
            self._create(key, manifest, res)
            self._again_for(stack_id).forget(key)
            state[key] = manifest
            return True
        # The outcome below is a function of the manifest (up to ``==``: defaulting, the immutable
        # fields and the comparison read it only through ``==`` and key presence) and of the live
        # object, which is unchanged while its resourceVersion is (every write goes through
        # ``Store.touch``). So the manifest an earlier run found unchanged on this very version is
        # unchanged again. (A Service defaulted without a clusterIP is never "unchanged": its new
        # IP differs from the live object's, so the skip never saves an IP allocation.)
        # tests/sim/cluster/test_apply_unchanged.py runs every example with and without the skip.
        rv = live["metadata"].get("resourceVersion", "")
        unchanged = self.unchanged_at.setdefault(stack_id, {})
        hit = unchanged.get(key)
        # (a manifest reused from the previous render is the very object: ``is`` decides at once)
        if hit is not None and hit[1] == rv and (hit[0] is manifest or hit[0] == manifest):
            unchanged[key] = entry = (manifest, rv)
            res.unchanged.append(label := _label(key))
            state[key] = manifest
            self._again_for(stack_id).remember(key, entry, live, label)
            return True
        # ``want``: the manifest as the API server would default it (a shallow copy: defaulting copies
        # what it writes), short-lived — the state keeps the manifest as registered. Defaulting is
        # idempotent, so creating or replacing from ``want`` later stores the same object (a
        # Service's clusterIP comes from ``live`` here only when the manifest names none, and a
        # Service is replaced only when both name different IPs).
        want = dict(manifest)
        apply_defaults(want, self.store, existing=live)
        changed = immutable_changes(key[0], live, want)
        if changed:
            registered = state.get(key, manifest)  # the provider deletes with the inputs of its state
            self._delete(key, registered)
            what = f"{_label(key)} ({', '.join(changed)})"
            if self.store.get(*key) is not None and not self._delete_awaited(key, registered):
                # the delete returned at once and the old object is still there, terminating
                state.pop(key, None)  # deleted, not created: the state holds neither
                unchanged.pop(key, None)
                self._again_for(stack_id).forget(key)
                res.errors.append(f"replace {what}: {TERMINATING}")
                return False
            self.pending[key] = (stack_id, clone(want))
            self.flush_pending()
            res.replaced.append(what)
        elif _differs(live, want):
            self.store.replace(live, want)
            res.updated.append(_label(key))
        else:
            res.unchanged.append(label := _label(key))
            unchanged[key] = entry = (manifest, rv)
            state[key] = manifest
            self._again_for(stack_id).remember(key, entry, live, label)
            return True
        unchanged.pop(key, None)
        self._again_for(stack_id).forget(key)
        state[key] = manifest
        return True

    def _create(self, key: Key, manifest: dict[str, Any], res: ApplyResult) -> None:
        try:
            self.store.create(manifest)
            res.created.append(_label(key))
        except AlreadyExists as exc:  # pragma: no cover - guarded by the lookup above
            res.errors.append(str(exc))

    @staticmethod
    def _delete_awaited(key: Key, manifest: Mapping[str, Any]) -> bool:
        """Whether the provider's delete of ``key``, registered as ``manifest``, waits until the
        object is gone: always, but for a skipAwait kind of ``DELETE_NOT_AWAITED``."""
        annotations = (manifest.get("metadata") or {}).get("annotations") or {}
        return not (key[0] in DELETE_NOT_AWAITED and str(annotations.get(SKIP_AWAIT_ANNOTATION)).lower() == "true")

    def _delete(self, key: Key, manifest: Mapping[str, Any]) -> None:
        """The provider's DELETE, with the propagation ``manifest`` (its registered inputs) names."""
        policy = ((manifest.get("metadata") or {}).get("annotations") or {}).get(PROPAGATION_ANNOTATION, "foreground")
        try:
            self.store.delete(*key, propagation=policy.capitalize())
        except (NotFound, Conflict):
            pass

    def flush_pending(self) -> list[str]:
        """Create replacements whose predecessor is gone; return what was created."""
        done = []
        for key, (_stack_id, manifest) in sorted(self.pending.items()):
            if self.store.get(*key) is None:
                self.store.create(manifest)
                del self.pending[key]
                done.append(_label(key))
        return done
