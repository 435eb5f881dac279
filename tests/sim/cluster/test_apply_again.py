"""sim/cluster/apply.py: the applier's answer "unchanged again" for a manifest it found unchanged on
a live object not written since (``_Again``) changes nothing. Random sequences of applies (reused,
equal and changed manifests, immutable changes that replace, dependencies, crashes and ``keep`` < 1)
with writes and deletions out of band between them give the same results, stack state, pending
replacements, unchanged entries and store with the path on and off; so do fleet rollouts."""

from __future__ import annotations

import dataclasses
import json
import pathlib
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pulumi_lws.sim.cluster import apply as apply_mod
from pulumi_lws.sim.cluster import store as store_mod
from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.sim.cluster.store import strip_internal
from pulumi_lws.sim.driver.runner import simulate

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))
from bench_sim import scenario as bench_scenario  # noqa: E402  (the bench's rollout, as its rows run it)

NS = "default"
NAMES = ("a", "b", "c", "d")


def _configmap(name: str, value: str, immutable: bool) -> dict[str, Any]:
    doc: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": NS}}
    doc["data"] = {"v": value}
    if immutable:
        doc["immutable"] = True  # a change of data is a delete-before-replace
        # which orphans what it owns: a write, in the middle of the apply, of a manifest's object
        doc["metadata"]["annotations"] = {apply_mod.PROPAGATION_ANNOTATION: "orphan"}
    return doc


_apply = st.fixed_dictionaries(
    {
        "manifests": st.lists(
            st.tuples(st.sampled_from(NAMES), st.sampled_from("12"), st.booleans(), st.booleans()),
            max_size=4,
            unique_by=lambda t: t[0],
        ),
        "deps": st.dictionaries(st.sampled_from(NAMES), st.lists(st.sampled_from(NAMES), max_size=2), max_size=3),
        # (a ConfigMap named "a" owns those "own" gave it: applied first, its replacement orphans them)
        "keep": st.one_of(st.just(1.0), st.floats(0.0, 1.0)),
        "crash": st.lists(st.sampled_from(NAMES), max_size=1),
        "stack": st.sampled_from(("s", "t")),
    }
)
_write = st.tuples(st.sampled_from(("touch", "edit", "delete", "own")), st.sampled_from(NAMES))
_step = st.one_of(_apply.map(lambda a: ("apply", a)), _write.map(lambda w: ("write", w)))


def _run(steps: list, seed: int, pool: dict, *, again: bool) -> tuple[list, Any]:
    cluster = SimCluster(seed=seed)
    out: list[Any] = []
    with pytest.MonkeyPatch.context() as mp:
        if not again:
            mp.setattr(apply_mod._Again, "remember", lambda *a, **kw: None)
        for kind, step in steps:
            if kind == "write":
                verb, name = step
                live = cluster.store.get("ConfigMap", NS, name)
                if live is None:
                    continue
                owner = cluster.store.get("ConfigMap", NS, "a")
                if verb == "delete":
                    cluster.store.delete("ConfigMap", NS, name)
                elif verb == "own" and owner is not None and owner is not live:
                    live["metadata"]["ownerReferences"] = [store_mod.owner_ref(owner)]
                    cluster.store._index_owners(live)
                    cluster.store.touch(live)
                else:
                    if verb == "edit":
                        live["data"] = {"v": "out of band"}
                    cluster.store.touch(live)
                cluster.settle()
                continue
            manifests = [
                pool[(n, v, imm)] if reuse else dict(pool[(n, v, imm)]) for n, v, imm, reuse in step["manifests"]
            ]
            deps = {("ConfigMap", k): tuple(("ConfigMap", d) for d in ds) for k, ds in step["deps"].items()}
            try:
                res = cluster.apply(
                    manifests,
                    stack_id=step["stack"],
                    keep=step["keep"],
                    dependencies=deps,
                    crash=[("ConfigMap", n) for n in step["crash"]],
                )
            except ValueError as exc:  # a dependency cycle: refused before anything is applied
                out.append(str(exc))
                continue
            out.append(dataclasses.asdict(res))
        applier, store = cluster.applier, cluster.store
        which = lambda m: next((k for k, v in pool.items() if v is m), "a copy")  # noqa: E731
        final = {
            "state": {s: [(k, which(m), m) for k, m in st_.items()] for s, st_ in applier.state.items()},
            "dependencies": applier.dependencies,
            "pending": applier.pending,
            "unchanged": {
                s: {k: (which(m), m, rv) for k, (m, rv) in e.items()} for s, e in applier.unchanged_at.items()
            },
            "store": [json.dumps(strip_internal(o), default=str) for o in store.all()],
            "version": store.version,
            "hits": sum(len(a.entries) for a in applier._again.values()),
        }
    return out, final


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(_step, min_size=1, max_size=8), seed=st.integers(0, 1000))
def test_unchanged_again_is_what_the_plain_apply_finds(steps: list, seed: int) -> None:
    pool = {(n, v, imm): _configmap(n, v, imm) for n in NAMES for v in "12" for imm in (False, True)}
    fast, fast_final = _run(steps, seed, pool, again=True)
    slow, slow_final = _run(steps, seed, pool, again=False)
    assert slow_final.pop("hits") == 0
    fast_final.pop("hits")
    assert fast == slow
    assert fast_final == slow_final


def test_a_reused_manifest_is_unchanged_again_without_the_store_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = SimCluster(seed=1)
    manifests = [_configmap(n, "1", False) for n in NAMES]
    deps = {("ConfigMap", "a"): (("ConfigMap", "d"),)}
    cluster.apply(manifests, stack_id="s", dependencies=deps)  # created
    cluster.apply(manifests, stack_id="s", dependencies=deps)  # unchanged: remembered
    cluster.store.touch(cluster.store.get("ConfigMap", NS, "b"))  # written: b is looked up again
    calls: list[tuple] = []
    upsert = apply_mod.Applier._upsert
    monkeypatch.setattr(apply_mod.Applier, "_upsert", lambda self, *a: calls.append(a[1]) or upsert(self, *a))
    res = cluster.apply(manifests, stack_id="s", dependencies=deps)
    assert res.unchanged == ["ConfigMap/d", "ConfigMap/a", "ConfigMap/b", "ConfigMap/c"]
    assert calls == [("ConfigMap", NS, "b")]


def _same_runs(make) -> None:
    fast = simulate(make(), "pure")
    assert any(a.entries for a in fast.cluster.applier._again.values()), "the path was never taken"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(apply_mod._Again, "remember", lambda *a, **kw: None)
        slow = simulate(make(), "pure")
    assert [repr(r) for r in fast.trace.rows] == [repr(r) for r in slow.trace.rows]
    assert [repr(r) for r in fast.raw_rows] == [repr(r) for r in slow.raw_rows]
    assert repr(fast.stages) == repr(slow.stages) and repr(fast.demand) == repr(slow.demand)
    dump = lambda c: [json.dumps(strip_internal(o), default=str) for o in c.store.all()]  # noqa: E731
    assert dump(fast.cluster) == dump(slow.cluster) and fast.cluster.store.version == slow.cluster.store.version
    assert fast.cluster.applier.state == slow.cluster.applier.state


@pytest.mark.parametrize("kind", ["LeaderWorkerSet", "ModelServing", "DisaggregatedSet"])
def test_unchanged_again_changes_no_fleet_rollout(kind: str) -> None:
    _same_runs(lambda: bench_scenario(24, 2, kind=kind))


def test_an_object_written_earlier_in_the_same_apply_is_looked_up_again() -> None:
    """``a``'s replacement orphans ``b`` (a write of ``b``) before ``b``'s turn: as the plain apply."""
    pool = {(n, v, imm): _configmap(n, v, imm) for n in NAMES for v in "12" for imm in (False, True)}
    apply = lambda a_value: (  # noqa: E731
        "apply",
        {
            "manifests": [("a", a_value, True, True), ("b", "1", False, True)],
            "deps": {},
            "keep": 1.0,
            "crash": [],
            "stack": "s",
        },
    )
    steps = [apply("1"), apply("1"), ("write", ("own", "b")), apply("1"), apply("2")]
    fast, fast_final = _run(steps, 3, pool, again=True)
    slow, slow_final = _run(steps, 3, pool, again=False)
    assert fast_final.pop("hits") and not slow_final.pop("hits")
    assert fast == slow and fast_final == slow_final


def test_the_last_resolution_is_reused_only_for_equal_keys_and_tuple_dependencies() -> None:
    """The previous apply's resolved dependencies and order are those of equal keys and items."""
    manifests = [_configmap(n, "1", False) for n in NAMES]
    cluster = SimCluster(seed=1)
    deps: dict = {("ConfigMap", "a"): (("ConfigMap", "d"),)}
    assert cluster.apply(manifests, stack_id="s", dependencies=deps).created[:2] == ["ConfigMap/d", "ConfigMap/a"]
    first = cluster.applier._last["s"]
    cluster.apply(manifests, stack_id="s", dependencies=dict(deps))
    assert cluster.applier._last["s"] is first  # equal: reused
    listed = {("ConfigMap", "a"): [("ConfigMap", "d")]}
    cluster.apply(manifests, stack_id="s", dependencies=listed)
    listed[("ConfigMap", "a")].append(("ConfigMap", "c"))  # changed in place: never reused
    res = cluster.apply(manifests, stack_id="s", dependencies=listed)
    assert res.unchanged == ["ConfigMap/c", "ConfigMap/d", "ConfigMap/a", "ConfigMap/b"]
