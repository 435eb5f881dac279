"""The garbage collector and the scheduler visit indexes, not the whole store, with the same result.

* ``Store.unbound_pods`` is exactly the set of Pods the scheduler's predicate accepts, and
  ``Store.gc_candidates`` holds every deleting object and every orphan, after every tick of every
  example scenario;
* a run with the reference controllers (the garbage collector scanning every object of
  ``Store.all()`` in order, the scheduler filtering every Pod) gives the same trace and the same
  final store, resourceVersions included;
* within one pass, an orphan the scan would still reach is collected in that pass, one it has
  passed waits for the next (exactly like the scan).
"""

from __future__ import annotations

import json
import pathlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pulumi_lws.sim.cluster import gc as gc_mod
from pulumi_lws.sim.cluster import scheduler as scheduler_mod
from pulumi_lws.sim.cluster.clock import Clock
from pulumi_lws.sim.cluster.gc import GarbageCollector
from pulumi_lws.sim.cluster.store import FOREGROUND, Store, owner_ref, strip_internal
from pulumi_lws.sim.driver.runner import simulate
from pulumi_lws.sim.driver.scenario import load_scenario

ROOT = pathlib.Path(__file__).resolve().parents[3]
ALL = sorted(str(p.relative_to(ROOT / "examples")) for p in (ROOT / "examples").glob("*/scenario*.yaml"))
COMPARED = [
    "quickstart/scenario.yaml",
    "hash/scenario.yaml",
    "modelserving-pd/scenario.yaml",
    "disaggregated-pd/scenario-abc.yaml",
    "gpu-717/scenario-scalefirst.yaml",
    "gpu-717/scenario-rolloutfirst.yaml",
]


def reference_gc_sync(self: GarbageCollector) -> None:
    """The scan the index replaced: every object, in ``Store.all()`` order, once per pass."""
    for obj in list(self.store.all()):
        if self.store.by_uid(obj["metadata"]["uid"]) is not None:
            self.visit(obj)


def reference_scheduler_sync(self) -> None:
    pending = [p for p in self.store.list("Pod") if self._wants_scheduling(p)]
    if not pending:
        return
    nodes = self.store.list("Node")
    pending.sort(
        key=lambda p: (-int((p.get("spec") or {}).get("priority") or 0), p["_sim_created_at"], p["metadata"]["name"])
    )
    for pod in pending:
        self._schedule(pod, nodes)


def _dump(store: Store) -> list[str]:
    return sorted(json.dumps(strip_internal(o), sort_keys=True, default=str) for o in store.all())


@pytest.mark.parametrize("name", ALL)
def test_indexes_hold_what_the_scans_would_find(name: str) -> None:
    ticks = []

    def probe(cluster, t):
        store = cluster.store
        wanted = {p["metadata"]["uid"] for p in store.list("Pod") if cluster.scheduler._wants_scheduling(p)}
        assert store.unbound_pods == wanted, f"t={t}"
        must = {
            o["metadata"]["uid"]
            for o in store.all()
            if o["metadata"].get("deletionTimestamp")
            or (o["metadata"].get("ownerReferences") and store.all_owners_gone(o))
        }
        assert must <= store.gc_candidates, f"t={t}: {must - store.gc_candidates}"
        assert store.gc_candidates <= {o["metadata"]["uid"] for o in store.all()}, f"t={t}: a removed object is kept"
        ticks.append(t)

    simulate(load_scenario(ROOT / "examples" / name), "pure", probe=probe)
    assert ticks


@pytest.mark.parametrize("name", COMPARED)
def test_the_reference_scans_give_the_same_run(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = simulate(load_scenario(ROOT / "examples" / name), "pure")
    monkeypatch.setattr(gc_mod.GarbageCollector, "sync", reference_gc_sync)
    monkeypatch.setattr(scheduler_mod.Scheduler, "sync", reference_scheduler_sync)
    slow = simulate(load_scenario(ROOT / "examples" / name), "pure")
    assert [repr(r) for r in fast.trace.rows] == [repr(r) for r in slow.trace.rows]
    assert [repr(s) for s in fast.stages] == [repr(s) for s in slow.stages]
    assert _dump(fast.cluster.store) == _dump(slow.cluster.store)
    assert fast.cluster.store.version == slow.cluster.store.version


def _chain_store() -> tuple[Store, dict[str, str]]:
    """Kinds sort A < B < C: a C owner of an A and a B dependent, and a B owner of another C
    (created after the first C), all but the owners' owners present; then the owner C is deleted."""
    store = Store(Clock(0))
    uids = {}
    for kind, name in (("C", "owner"), ("B", "owner2")):
        uids[name] = store.create({"apiVersion": "v1", "kind": kind, "metadata": {"name": name}})["metadata"]["uid"]
    owner, owner2 = store.get("C", "default", "owner"), store.get("B", "default", "owner2")
    for kind, name, of in (("A", "early", owner), ("B", "late", owner), ("C", "grandchild", owner2)):
        obj = store.create(
            {"apiVersion": "v1", "kind": kind, "metadata": {"name": name, "ownerReferences": [owner_ref(of)]}}
        )
        uids[name] = obj["metadata"]["uid"]
    return store, uids


def test_an_orphan_is_collected_in_the_pass_the_scan_would_collect_it() -> None:
    runs = []
    for sync in (GarbageCollector.sync, reference_gc_sync):
        store, _ = _chain_store()
        store.delete("B", "default", "owner2")  # no finalizer, not a pod: removed at once
        collector = GarbageCollector(store)
        seen = []
        for _ in range(4):
            sync(collector)
            seen.append(sorted(o["metadata"]["name"] for o in store.all()))
        runs.append((seen, _dump(store), store.version))
    assert runs[0] == runs[1]
    assert runs[0][0][0] == ["early", "late", "owner"]  # the grandchild went in the first pass


def test_a_foreground_cascade_matches_the_scan_pass_by_pass() -> None:
    runs = []
    for sync in (GarbageCollector.sync, reference_gc_sync):
        store, _ = _chain_store()
        store.delete("C", "default", "owner", propagation="Foreground")
        assert FOREGROUND in store.get("C", "default", "owner")["metadata"]["finalizers"]
        collector = GarbageCollector(store)
        seen = []
        for _ in range(5):
            sync(collector)
            seen.append(sorted(o["metadata"]["name"] for o in store.all()))
        runs.append((seen, _dump(store), store.version))
    assert runs[0] == runs[1]
    assert runs[0][0][-1] == ["grandchild", "owner2"]  # owner and its dependents gone, the rest kept


def test_an_owner_removed_during_a_pass_orphans_later_objects_in_that_pass_earlier_ones_in_the_next() -> None:
    runs = []
    for sync in (GarbageCollector.sync, reference_gc_sync):
        store = Store(Clock(0))
        pod = store.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"nodeName": "n"}})
        for kind in ("AConfig", "ZConfig"):
            store.create(
                {"apiVersion": "v1", "kind": kind, "metadata": {"name": "d", "ownerReferences": [owner_ref(pod)]}}
            )
        store.delete("Pod", "default", "p")  # on a node: kept for its grace period
        pod["spec"]["nodeName"] = None  # the kubelet is done: the collector removes it in its next pass
        store.touch(pod)
        collector = GarbageCollector(store)
        seen = []
        for _ in range(3):
            sync(collector)
            seen.append(sorted(o["kind"] for o in store.all()))
        runs.append((seen, _dump(store), store.version))
    assert runs[0] == runs[1]
    assert runs[0][0][:2] == [["AConfig"], []]  # ZConfig in the pass that removed the pod, AConfig in the next


# ---- hypothesis: the indexed collector against the scan on random ownership graphs ------------

_KINDS = ("AConfig", "Pod", "ZConfig")


@st.composite
def _graphs(draw):
    """Objects of three kinds created in order, each owned by up to two earlier ones (or by a uid
    that never existed), some with a finalizer; then a sequence of deletions (any propagation),
    finalizer removals and pod terminations between collector passes."""
    n = draw(st.integers(2, 9))
    objs = []
    for i in range(n):
        owners = draw(st.lists(st.integers(-1, i - 1), max_size=2, unique=True)) if i else []
        objs.append((draw(st.sampled_from(_KINDS)), f"o{i}", owners, draw(st.booleans()), draw(st.booleans())))
    steps = draw(
        st.lists(
            st.tuples(
                st.sampled_from(("delete-bg", "delete-fg", "delete-orphan", "unfinalize", "terminate")),
                st.integers(0, n - 1),
            ),
            max_size=6,
        )
    )
    return objs, steps


def _build(objs) -> Store:
    store = Store(Clock(0))
    made = {}
    for kind, name, owners, finalized, on_node in objs:
        refs = [
            owner_ref(made[o])
            if o >= 0
            else {"apiVersion": "v1", "kind": "Gone", "name": "x", "uid": "never", "controller": False}
            for o in owners
        ]
        m = {
            "name": name,
            **({"ownerReferences": refs} if refs else {}),
            **({"finalizers": ["keep"]} if finalized else {}),
        }
        made[int(name[1:])] = store.create(
            {
                "apiVersion": "v1",
                "kind": kind,
                "metadata": m,
                **({"spec": {"nodeName": "n"}} if kind == "Pod" and on_node else {}),
            }
        )
    return store


def _run(sync, objs, steps) -> list:
    store = _build(objs)
    collector = GarbageCollector(store)
    seen = []
    for verb, i in [*steps, ("pass", 0), ("pass", 0)]:
        obj = next((o for o in store.all() if o["metadata"]["name"] == f"o{i}"), None)
        if obj is not None and verb.startswith("delete"):
            propagation = {"bg": "Background", "fg": "Foreground", "orphan": "Orphan"}[verb.split("-")[1]]
            store.delete(obj["kind"], "default", obj["metadata"]["name"], propagation=propagation)
        elif obj is not None and verb == "unfinalize":
            store.remove_finalizer(obj, "keep")
        elif obj is not None and verb == "terminate" and obj["kind"] == "Pod" and obj.get("spec", {}).get("nodeName"):
            obj["spec"]["nodeName"] = None
            store.touch(obj)
        sync(collector)
        seen.append((_dump(store), store.version))
    return seen


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_graphs())
def test_the_indexed_collector_is_the_scan_pass_by_pass(graph) -> None:
    objs, steps = graph
    assert _run(GarbageCollector.sync, objs, steps) == _run(reference_gc_sync, objs, steps)
