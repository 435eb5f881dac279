"""modelserving/group_memo.py and the object keys of replicas.py: under the simulator's promise
(``Snapshot.reuse``) every observation — each reconcile's and each trace row's — equals the one
read without it (the same GroupStates, the same replica index), on every tick of every example
scenario, of a fleet rollout of both strategies, and of random rollouts with slow and never-ready
groups (hypothesis); literal snapshots keep nothing; memory is bounded."""

from __future__ import annotations

import copy
import dataclasses
import pathlib
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.ms_helpers import ROLE, SG, Override, kubelet, ms_manifest, role, scenario, with_image

from pulumi_lws.core.contract.reuse import Reuse
from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.modelserving import group_memo, observe, reconcile, replicas, workload
from pulumi_lws.modelserving.revision import build_catalog
from pulumi_lws.sim.driver.runner import simulate
from pulumi_lws.sim.driver.scenario import load_scenario

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = sorted(str(p.relative_to(ROOT / "examples")) for p in (ROOT / "examples").glob("*/scenario*.yaml"))

sys.path.insert(0, str(ROOT / "bench"))
from bench_sim import scenario as bench_scenario  # noqa: E402  (the bench's rollout, as its rows run it)


def _index(r: replicas.ObservedReplicas) -> list[Any]:
    """Everything an index answers, the objects by identity."""
    return [
        (g, [(k, [id(o) for o in r.statefulsets_of(k)], [id(o) for o in r.pods_of(k)]) for k in keys])
        for g, keys in r.by_group()
    ]


class _Counts:
    def __init__(self) -> None:
        self.calls = self.hits = 0


def _checking(monkeypatch: pytest.MonkeyPatch) -> _Counts:
    """Every ``observe_groups`` (both callers) and ``observed_replicas`` answer compared with the
    one read from the same objects without the promise; counts the calls and the groups reused."""
    counts = _Counts()
    original_observe, original_index = observe.observe_groups, replicas.observed_replicas
    original_get = group_memo.GroupMemo.get

    def checked_index(ms, snapshot):
        got = original_index(ms, snapshot)
        assert _index(got) == _index(original_index(ms, dataclasses.replace(snapshot, reuse=None)))
        return got

    def checked_observe(snapshot, ms, catalog, index=None):
        got = original_observe(snapshot, ms, catalog, index)
        fresh = original_observe(dataclasses.replace(snapshot, reuse=None), ms, catalog)
        assert got == fresh and [type(g) for g in got] == [type(g) for g in fresh]
        counts.calls += snapshot.reuse is not None
        return got

    def counted_get(self, *args):
        found = original_get(self, *args)
        counts.hits += found is not None
        return found

    for module in (observe, reconcile, replicas, workload):
        if hasattr(module, "observed_replicas"):
            monkeypatch.setattr(module, "observed_replicas", checked_index)
        if hasattr(module, "observe_groups"):
            monkeypatch.setattr(module, "observe_groups", checked_observe)
    monkeypatch.setattr(group_memo.GroupMemo, "get", counted_get)
    return counts


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_observation_of_an_example_equals_one_without_the_memo(name: str, monkeypatch) -> None:
    counts = _checking(monkeypatch)
    simulate(load_scenario(ROOT / "examples" / name), "pure")
    assert counts.calls > 1 or "modelserving" not in name


@pytest.mark.parametrize("strategy", [SG, ROLE])
def test_every_observation_of_a_fleet_rollout_equals_one_without_the_memo(strategy: str, monkeypatch) -> None:
    counts = _checking(monkeypatch)
    doc = bench_scenario(24, 2, kind="ModelServing")
    if strategy == ROLE:
        old = ms_manifest(replicas=6, strategy=ROLE, roles=[role("prefill", 3, 1, maxSurge=1), role("decode", 2)])
        doc = scenario(old, with_image(old, "img:2"), max_time=200)
    result = simulate(doc, "pure")
    assert result.trace.converged and counts.calls > 2 and counts.hits > 0


@st.composite
def _rollouts(draw):
    strategy = draw(st.sampled_from((SG, ROLE)))
    workers = draw(st.integers(0, 2))
    if strategy == SG:
        old = ms_manifest(
            replicas=draw(st.integers(1, 5)),
            mu=draw(st.integers(1, 2)),
            surge=draw(st.integers(0, 2)),
            roles=[role("prefill", draw(st.integers(1, 2)), workers), role("decode")],
        )
    else:
        old = ms_manifest(
            replicas=draw(st.integers(1, 3)),
            strategy=ROLE,
            roles=[role("prefill", draw(st.integers(1, 3)), workers, maxSurge=1), role("decode")],
        )
    delays = draw(st.dictionaries(st.sampled_from([str(g) for g in range(6)]), st.integers(0, 12), max_size=3))
    never = draw(st.one_of(st.none(), st.sampled_from([str(g) for g in range(6)])))
    return old, delays, never


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_rollouts())
def test_any_rollout_observes_as_without_the_memo(case) -> None:
    old, delays, never = case
    overrides = [Override(group=never, after=0.5, never_ready=True)] if never is not None else []
    overrides += [Override(group=g, ready=float(s)) for g, s in delays.items()]
    sc = scenario(
        old, with_image(old, "img:2"), kubelet=kubelet(1.0, overrides=overrides), max_time=80, require_converged=False
    )
    with pytest.MonkeyPatch.context() as monkeypatch:  # one example's patches, undone before the next
        counts = _checking(monkeypatch)
        simulate(sc, "pure")
    assert counts.calls > 1


# ---- literal snapshots ---------------------------------------------------------------------------
def _fleet() -> tuple[Any, list[dict[str, Any]]]:
    """A converged fleet's ModelServing and objects, as the simulator leaves them."""
    old = ms_manifest(replicas=3, roles=[role("prefill", 1, 1), role("decode")])
    result = simulate(scenario(old, max_time=30), "pure")
    spec = workload.WORKLOAD.parse(old, namespace="default")
    snap = result.cluster.observe(workload.WORKLOAD.scope(spec, nodes=False))
    return spec, [copy.deepcopy(dict(o)) for o in snap]


def test_a_snapshot_without_the_promise_keeps_nothing_and_sees_objects_changed_in_place() -> None:
    spec, objs = _fleet()
    catalog = build_catalog(spec, [o for o in objs if o["kind"] == "ControllerRevision"])
    before = observe.observe_groups(Snapshot.of(objs), spec, catalog)
    pod = next(o for o in objs if o["kind"] == "Pod")
    pod["status"]["conditions"] = []  # a test's literal dicts may be rewritten between calls
    after = observe.observe_groups(Snapshot.of(objs), spec, catalog)
    assert before != after and after == observe.observe_groups(Snapshot.of(copy.deepcopy(objs)), spec, catalog)


def _promised(objs: list[dict[str, Any]], reuse: Reuse) -> Snapshot:
    """A snapshot of ``objs`` under ``reuse``'s promise (the test keeps it: a change is a new copy)."""
    return dataclasses.replace(Snapshot.of(objs), reuse=reuse)


def test_a_changed_object_or_context_is_read_again_and_memory_is_bounded(monkeypatch) -> None:
    spec, objs = _fleet()
    catalog = build_catalog(spec, [o for o in objs if o["kind"] == "ControllerRevision"])
    reuse = Reuse()
    first = observe.observe_groups(_promised(objs, reuse), spec, catalog)
    again = observe.observe_groups(_promised(objs, reuse), spec, catalog)
    assert again == first and all(a is b for a, b in zip(again, first))  # every group reused
    changed = [copy.deepcopy(o) if o["kind"] == "Pod" else o for o in objs]  # a new copy: written
    pod = next(o for o in changed if o["kind"] == "Pod")
    pod["status"]["conditions"] = []
    got = observe.observe_groups(_promised(changed, reuse), spec, catalog)
    assert got == observe.observe_groups(Snapshot.of(changed), spec, catalog) != first
    scaled = spec.model_copy(deep=True)
    scaled.roles[0].replicas = 2  # the context: every group's status reads the spec's replicas
    assert observe.observe_groups(_promised(changed, reuse), scaled, catalog) == observe.observe_groups(
        Snapshot.of(changed), scaled, catalog
    )
    monkeypatch.setattr(group_memo, "LIMIT", 2)
    monkeypatch.setattr(replicas, "LIMIT", 2)
    for n in range(5):
        other = spec.model_copy(deep=True)
        other.metadata.name = f"ms{n}"
        observe.observe_groups(_promised(objs, reuse), other, catalog)
    assert len(reuse.memo(group_memo.OWNER)) == 2 and len(reuse.memo(replicas.__name__)) == 2
    reuse.clear()
    assert not reuse.memo(group_memo.OWNER)
