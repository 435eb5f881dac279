"""Issue 16 figures: fleets of 10,000 groups, each figure a ratio against a floor measured in the
same run (so the table means the same on any machine), with its target.

Floors:
* **keyed lookup per group** — ``snapshot.get("Pod", f"<lws>-{i}")`` for every group: the least
  any observer of per-group state must do;
* **unpickling the rendered objects** — ``pickle.loads`` of the manifests one reconcile returns:
  the cheapest way CPython can materialise those dicts at all.

Each figure function returns a row ``{"figure", "value", "target", "ok", "why"}``; ``sizes``
arguments let the smoke test (tests/reliability/test_bench_scale_smoke.py) run them tiny.
"""

from __future__ import annotations

import gc
import pickle
import statistics
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from bench_fixtures import fleet_lws, mid_rollout_snapshot, realistic_mid_rollout_snapshot

from pulumi_lws.lws.labels import TEMPLATE_REVISION_HASH as REVISION_LABEL


def best_of(fn: Callable[[], object], repeat: int = 5) -> float:
    """Median CPU seconds of this process over ``repeat`` calls (one warm-up call first): CPU time,
    not wall time, so other work on a shared machine does not move the figures."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return statistics.median(times)


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic collector off for a measurement only, restored after (a bench may; the library never does)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def row(figure: str, value: str, target: str, ok: bool, why: str = "") -> dict[str, Any]:
    return {"figure": figure, "value": value, "target": target, "ok": ok, "why": why}


def keyed_lookup_floor(snapshot: Any, name: str, groups: int) -> float:
    return best_of(lambda: [snapshot.get("Pod", f"{name}-{i}") for i in range(groups)], repeat=21)


def minimum_reading(snapshot: Any, name: str, groups: int, target: str) -> str:
    """The least an observer of the group legend can do per group (a lower bound, not a floor a
    planner could meet): the two keyed lookups (leader pod, worker StatefulSet) and the fields
    ready/updated need (phase, Ready condition, available vs desired workers, both revision
    labels), one character per group -- no defensive reads, no deletion or phase detail, no
    object built, no plan."""
    get, out = snapshot.get, []
    for i in range(groups):
        leader, workers = get("Pod", f"{name}-{i}"), get("StatefulSet", f"{name}-{i}")
        if leader is None or workers is None:
            out.append("-")
            continue
        st, ws = leader["status"], workers["status"]
        ready = (
            st["phase"] == "Running"
            and any(c["type"] == "Ready" and c["status"] == "True" for c in st["conditions"])
            and ws["availableReplicas"] == workers["spec"]["replicas"]
        )
        updated = (
            leader["metadata"]["labels"][REVISION_LABEL] == target
            and workers["metadata"]["labels"][REVISION_LABEL] == target
        )
        out.append(("U" if ready else "u") if updated else ("o" if ready else "x"))
    return "".join(out)


def unpickle_floor(objects: Any) -> float:
    blob = pickle.dumps(list(objects), protocol=pickle.HIGHEST_PROTOCOL)
    return best_of(lambda: pickle.loads(blob), repeat=7)


def fresh(snapshot: Any) -> Any:
    """The same objects without the snapshot's indexes: every run pays for building them."""
    from pulumi_lws.core.contract.snapshot import Snapshot

    return Snapshot(snapshot.objects, snapshot.now)


# ---- LeaderWorkerSet ---------------------------------------------------------------------------


def lws_observe_plan_predict(groups: int = 10_000) -> dict[str, Any]:
    """Catalog, per-group observation, the fixed point, group revisions, the prediction (plan_ordinal)."""
    from pulumi_lws.lws.reconcile import ReconcileOptions
    from pulumi_lws.lws.revision import build_catalog, revision_key
    from pulumi_lws.lws.rollout.ordinal.planner import plan_ordinal

    lws = fleet_lws(groups)
    snap = mid_rollout_snapshot(lws)

    def plan():
        s = fresh(snap)
        return plan_ordinal(lws, s, build_catalog(lws, s.list("ControllerRevision")), ReconcileOptions())

    stages = len(plan().remaining)
    t, floor = best_of(plan), keyed_lookup_floor(snap, lws.name, groups)
    target = revision_key(lws)
    least = best_of(lambda: minimum_reading(snap, lws.name, groups, target), repeat=9)
    r = t / floor
    return row(
        f"LWS observe + plan + predict, {groups:,} groups mid-rollout ({stages} predicted stages)",
        f"{r:.1f}x ({t * 1000:.1f} ms vs {floor * 1000:.1f} ms floor: one keyed lookup per group); "
        f"the minimum reading of the legend alone is {least / floor:.1f}x, the reconcile "
        f"{t / least:.1f}x that",
        "<= 4x",
        r <= 4,
        ""
        if r <= 4
        else "below the information floor: reading the two objects and the fields the group "
        "legend needs costs more than 4 lookups (the 'minimum reading'); on top: a GroupView per group, "
        "the fixed point, group revisions, the prediction (docs/performance.md)",
    )


def lws_plan_render(groups: int = 10_000) -> dict[str, Any]:
    """reconcile on an empty cluster (every object of every group), with and without the cyclic GC."""
    from pulumi_lws.core.contract.snapshot import EMPTY
    from pulumi_lws.lws.reconcile import reconcile

    lws = fleet_lws(groups)
    manifests = reconcile(lws, EMPTY).manifests
    t = best_of(lambda: reconcile(lws, EMPTY), repeat=5)
    with gc_paused():
        t_nogc = best_of(lambda: reconcile(lws, EMPTY), repeat=5)
    floor = unpickle_floor(manifests)
    r = t / floor
    return row(
        f"LWS plan + render, {groups:,} groups ({len(manifests):,} objects)",
        f"{r:.1f}x ({t * 1000:.0f} ms vs {floor * 1000:.0f} ms floor: unpickling them; "
        f"cyclic GC paused: {t_nogc * 1000:.0f} ms = {t_nogc / floor:.1f}x)",
        "<= 2x",
        r <= 2,
        ""
        if r <= 2
        else "the cyclic GC: with it paused the same reconcile is the figure after '='; "
        "the library leaves the collector alone (docs/performance.md)",
    )


def lws_reconcile(groups: int = 10_000) -> dict[str, Any]:
    """The whole LWS reconcile (observe, plan, predict, failure handling, webhook labels, render)
    mid-rollout on a fleet as it runs (bench_fixtures.realistic_mid_rollout_snapshot) — what a
    DisaggregatedSet pays once per child."""
    from pulumi_lws.lws.reconcile import reconcile

    lws = fleet_lws(groups)
    snap = realistic_mid_rollout_snapshot(lws)
    result = reconcile(lws, fresh(snap))
    t = best_of(lambda: reconcile(lws, fresh(snap)), repeat=3)
    with gc_paused():
        t_nogc = best_of(lambda: reconcile(lws, fresh(snap)), repeat=3)
    floor = unpickle_floor(result.manifests)
    return row(
        f"LWS reconcile (observe + plan + predict + render), {groups:,} groups mid-rollout "
        f"({len(result.manifests):,} objects)",
        f"{t / floor:.1f}x unpickling them ({t * 1000:.0f} ms vs {floor * 1000:.0f} ms; cyclic GC paused: "
        f"{t_nogc * 1000:.0f} ms = {t_nogc / floor:.1f}x)",
        "<= 2x (plan + render floor)",
        t / floor <= 2,
        ""
        if t / floor <= 2
        else "the cyclic GC (the figure after '=' is without it) and observation (every "
        "group's leader pod, worker StatefulSet and worker pods read back: failure handling and the "
        "webhook labels), which the floor does not do",
    )


def _peak_per_group(reconcile: Callable[[], Any], groups: int) -> tuple[float, float, float]:
    """(KiB per group, MiB) of the tracemalloc peak of one first-stage plan + render, and the
    floor of its output: KiB per group of the same manifests, every identical subtree shared."""
    from bench_memory import shared_floor_kib

    tracemalloc.start()
    result = reconcile()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / groups / 1024, peak / 2**20, shared_floor_kib(result.manifests, groups)


#: issue 27: plan + render of 10,000 groups at most 6 KiB per group, for every API
MEMORY_TARGET_KIB = 6.0


def memory_per_group(groups: int = 10_000) -> dict[str, Any]:
    from pulumi_lws.core.contract.snapshot import EMPTY
    from pulumi_lws.lws.reconcile import reconcile

    lws = fleet_lws(groups)
    kib, mib, floor = _peak_per_group(lambda: reconcile(lws, EMPTY), groups)
    return _memory_row("LWS", f"{groups:,} groups", kib, mib, floor)


def memory_per_api(groups: int = 10_000) -> list[dict[str, Any]]:
    """ModelServing (2 roles) and DisaggregatedSet (10 roles sharing ``groups``) first stage."""
    from bench_ds import DS, fleet_ds
    from bench_ms import MS, fleet_ms

    from pulumi_lws.core.contract.snapshot import EMPTY

    ms = fleet_ms(groups)
    ds = fleet_ds(10, max(1, groups // 10))
    kib_ms, mib_ms, floor_ms = _peak_per_group(lambda: MS.reconcile(ms, EMPTY), groups)
    kib_ds, mib_ds, floor_ds = _peak_per_group(lambda: DS.reconcile(ds, EMPTY), groups)
    return [
        _memory_row(
            "ModelServing",
            f"{groups:,} ServingGroups x 2 roles",
            kib_ms,
            mib_ms,
            floor_ms,
            "a ServingGroup declares an entry and a worker StatefulSet per role (4 here, each with its own "
            "pod template and labels), 2 entry Services and a PodGroup: 7 objects per group, and those objects "
            "alone, with every identical part shared, weigh more than the target (the floor in the value); the "
            "render already shares every part equal between objects (modelserving/render/shared.py)",
        ),
        _memory_row(
            "DisaggregatedSet",
            f"10 roles x {max(1, groups // 10):,} groups",
            kib_ds,
            mib_ds,
            floor_ds,
            "the children's LWS objects plus the per-role revision and Service objects",
        ),
    ]


def _memory_row(api: str, size: str, kib: float, mib: float, floor: float, why: str = "") -> dict[str, Any]:
    ok = kib <= MEMORY_TARGET_KIB
    return row(
        f"{api} peak memory of plan + render, {size} (tracemalloc)",
        f"{kib:.1f} KiB per group ({mib:.0f} MiB); its output alone, every identical part shared: "
        f"{floor:.1f} KiB per group",
        f"<= {MEMORY_TARGET_KIB:.0f} KiB per group",
        ok,
        "" if ok else why or "every rendered object is a fresh dict tree",
    )


# ---- simulator ---------------------------------------------------------------------------------


def simulate_sizes(
    sizes: tuple[int, ...] = (100, 1_000, 10_000), kind: str = "LeaderWorkerSet", limit: float = 60.0
) -> list[dict[str, Any]]:
    """One rollout per size (image change, pure engine); per-group cost flat within 1.5x."""
    from bench_sim import run

    run(10, kind=kind)  # imports and first-call caches, untimed
    rows, per_group = [], []
    for n in sizes:
        f = run(n, kind=kind)
        cpu = f["cpu_seconds"]
        per_group.append(cpu / n)
        ok = f["converged"] and f["violations"] == 0 and (n < 10_000 or cpu < limit)
        rows.append(
            row(
                f"simulate a {n:,}-group {kind} rollout (pure engine)",
                f"{cpu:.2f} s CPU, {f['wall_seconds']:.2f} s wall ({f['reconciles']} reconciles, "
                f"{1000 * cpu / n:.2f} ms CPU per group)",
                f"converges, no violation{f', < {limit:.0f} s' if n >= 10_000 else ''}",
                ok,
                ""
                if ok or not f["converged"]
                else "every reconcile renders, applies and observes every group (a ServingGroup: 7 objects, "
                "4 StatefulSets) and the trace reads every group again: per pass the work is the fleet's, "
                "not the change's (docs/performance.md)",
            )
        )
    spread = max(per_group) / min(per_group)
    rows.append(
        row(
            f"simulate {kind}: per-group cost across {' / '.join(f'{n:,}' for n in sizes)} groups",
            f"max/min {spread:.2f}x",
            "<= 1.5x",
            spread <= 1.5,
            ""
            if spread <= 1.5
            else "the per-group cost grows with the fleet: bigger heaps and dicts miss the CPU caches "
            "(the cyclic GC no longer runs during a simulation; docs/performance.md)",
        )
    )
    return rows


# ---- registration ------------------------------------------------------------------------------


def registration(groups: int = 1_000, repeat: int = 5) -> dict[str, Any]:
    from bench_registration import ratio

    r, comp, bare = ratio(groups, repeat=repeat)
    return row(
        f"component vs bare registration, {groups:,} groups (median of {repeat}, CPU)",
        f"{r:.2f}x ({comp:.2f} s vs {bare:.2f} s)",
        "<= 1.10x",
        r <= 1.10,
        ""
        if r <= 1.10
        else "the component registers every child with parent= and depends_on= (the SDK "
        "resolves both per resource) and publishes outputs; its plan + render is ~1% of the time",
    )


# ---- ModelServing and DisaggregatedSet ---------------------------------------------------------


def ms_reconcile(groups: int = 10_000) -> list[dict[str, Any]]:
    """ModelServing reconcile (observe, plan, predict, render) mid-rollout, against both floors."""
    from bench_ms import MS, fleet_ms
    from bench_ms import mid_rollout_snapshot as ms_snapshot

    spec, snap = fleet_ms(groups), ms_snapshot(groups)
    result = MS.reconcile(spec, fresh(snap))
    t = best_of(lambda: MS.reconcile(spec, fresh(snap)), repeat=3)
    with gc_paused():
        t_nogc = best_of(lambda: MS.reconcile(spec, fresh(snap)), repeat=3)
    lookup = best_of(lambda: [snap.get("StatefulSet", f"fleet-{i}") for i in range(groups)], repeat=21)
    floor = unpickle_floor(result.manifests)
    return [
        row(
            f"ModelServing reconcile (observe + plan + predict + render), {groups:,} ServingGroups x 2 roles "
            f"mid-rollout ({len(result.manifests):,} objects)",
            f"{t / floor:.1f}x unpickling them ({t * 1000:.0f} ms vs {floor * 1000:.0f} ms; cyclic GC paused: "
            f"{t_nogc * 1000:.0f} ms = {t_nogc / floor:.1f}x); {t / lookup:.0f}x one keyed lookup per group",
            "<= 2x (plan + render floor)",
            t / floor <= 2,
            ""
            if t / floor <= 2
            else "full collections of the cyclic GC: one over this heap costs 1.2-1.5 s "
            "and a reconcile gets one or two, as the floor's own unpickling does (the figure after '=' has "
            "none); the work itself is about the floor's (docs/performance.md)",
        )
    ]


def ds_reconcile(roles: int = 10, groups: int = 1_000) -> list[dict[str, Any]]:
    from bench_ds import DS, children_pipeline, fleet_ds
    from bench_ds import mid_rollout_snapshot as ds_snapshot

    spec, snap = fleet_ds(roles, groups), ds_snapshot(roles, groups)
    result = DS.reconcile(spec, fresh(snap))
    t = best_of(lambda: DS.reconcile(spec, fresh(snap)), repeat=3)
    floor = unpickle_floor(result.manifests)
    # informative, not the figure: the same reconcile with the cyclic GC paused, and the
    # children's LWS pipeline alone (render_children of the plan's children: a lower bound)
    with gc_paused():
        t_nogc = best_of(lambda: DS.reconcile(spec, fresh(snap)), repeat=3)
    declared = sorted(result.catalog.declared, key=lambda c: c.revision == result.catalog.target_revision)
    t_children = best_of(children_pipeline(spec, snap, declared), repeat=3)
    return [
        row(
            f"DisaggregatedSet reconcile, {roles} roles x {groups:,} groups mid-rollout "
            f"({len(result.manifests):,} objects)",
            f"{t / floor:.1f}x unpickling them ({t * 1000:.0f} ms vs {floor * 1000:.1f} ms; cyclic GC paused: "
            f"{t_nogc * 1000:.0f} ms = {t_nogc / floor:.1f}x; the children's LWS pipeline alone: "
            f"{t_children * 1000:.0f} ms = {t_children / floor:.1f}x)",
            "<= 2x (plan + render floor)",
            t / floor <= 2,
            ""
            if t / floor <= 2
            else "the children's LWS pipeline alone (per group: observation, failure "
            "handling, webhook labels, render — the LWS rows' per-group costs) is the reading after 'alone'; the "
            "rest is the cyclic GC (see 'paused'), the predicted stages' replica ids (Stage.remaining: one id per "
            "replica per stage) and the DS observation",
        )
    ]


def all_rows(quick: bool = False) -> list[dict[str, Any]]:
    """Every figure; ``quick``: tiny sizes (the smoke test)."""
    g = 50 if quick else 10_000
    rows = [lws_observe_plan_predict(g), lws_plan_render(g), lws_reconcile(g), memory_per_group(g)]
    rows += memory_per_api(20 if quick else 10_000)
    rows += simulate_sizes((5, 10, 20) if quick else (100, 1_000, 10_000))
    rows.append(registration(5 if quick else 1_000, repeat=1 if quick else 5))
    rows += ms_reconcile(10 if quick else 10_000)
    rows += simulate_sizes((10, 20) if quick else (100, 1_000, 10_000), kind="ModelServing")
    rows += ds_reconcile(2 if quick else 10, 5 if quick else 1_000)
    rows += simulate_sizes((5, 10) if quick else (100, 1_000, 10_000), kind="DisaggregatedSet")
    return rows
