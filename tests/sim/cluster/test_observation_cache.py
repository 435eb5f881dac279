"""``SimCluster.observe`` keeps what it read per scope and refreshes it from the objects written
since (sim/cluster/observation.py): every observation of every example scenario and of a fleet
rollout of each API equals a fresh read — the same keys in the same order and the very same
copies — and small stores exercise each way an object leaves, joins or changes places."""

from __future__ import annotations

import pathlib
import sys

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pulumi_lws.sim.cluster import observation as obs_mod
from pulumi_lws.sim.cluster.clock import Clock
from pulumi_lws.sim.cluster.observation import Observations, read_afresh
from pulumi_lws.sim.cluster.store import Store
from pulumi_lws.sim.driver.runner import simulate
from pulumi_lws.sim.driver.scenario import load_scenario

ROOT = pathlib.Path(__file__).resolve().parents[3]
EXAMPLES = sorted(str(p.relative_to(ROOT / "examples")) for p in (ROOT / "examples").glob("*/scenario*.yaml"))

sys.path.insert(0, str(ROOT / "bench"))
from bench_sim import scenario as bench_scenario  # noqa: E402  (the bench's rollout, as its rows run it)


def _checking(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every ``Observations.objects`` answer compared with a fresh read; returns the count."""
    calls = [0]
    original = Observations.objects

    def checked(self, namespace, reads, nodes):
        got = original(self, namespace, reads, nodes)
        fresh, _, _ = read_afresh(self.store, namespace, reads, nodes)
        assert list(got) == list(fresh)
        assert all(got[k] is fresh[k] for k in fresh)
        calls[0] += 1
        return got

    monkeypatch.setattr(Observations, "objects", checked)
    return calls


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_observation_of_an_example_is_a_fresh_read(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _checking(monkeypatch)
    simulate(load_scenario(ROOT / "examples" / name), "pure")
    assert calls[0] > 1


@pytest.mark.parametrize("kind", ["LeaderWorkerSet", "ModelServing", "DisaggregatedSet"])
def test_every_observation_of_a_fleet_rollout_is_a_fresh_read(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _checking(monkeypatch)
    result = simulate(bench_scenario(24, 2, kind=kind), "pure")
    assert calls[0] > 1 and result.trace.converged


def _pod(name: str, namespace: str = "ns", **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace, "labels": labels}}


READS = (("Pod", (("app", "a"),)), ("ConfigMap", (("app", None),)))

# one operation on a small store: (verb, name index, namespace index, label value index)
_OPS = st.lists(
    st.tuples(
        st.sampled_from(["create", "delete", "relabel", "write", "observe"]),
        st.integers(0, 5),
        st.integers(0, 1),
        st.integers(0, 2),
    ),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
# all namespaces, a pod leaving after one of a name sorting later joined in an earlier namespace:
# the kind's names are in (namespace, name) order there, not by name (found by hypothesis)
@example(ops=[("create", 0, 1, 0), ("create", 3, 0, 0), ("delete", 3, 0, 0)], namespace=None, nodes=False, kinds=READS)
@given(
    ops=_OPS, namespace=st.sampled_from(["ns", None]), nodes=st.booleans(), kinds=st.sampled_from([READS, READS[:1]])
)
def test_any_sequence_of_writes_keeps_observations_fresh(ops, namespace, nodes, kinds) -> None:
    store = Store(Clock(0))
    cache = Observations(store)
    values = ["a", "b", None]
    for verb, i, ns_i, v in ops:
        name, ns, kind = f"p{i}", ("ns", "other")[ns_i], ("Pod", "ConfigMap", "Node")[i % 3]
        obj = store.get(kind, ns, name)
        if verb == "create" and obj is None:
            labels = {} if values[v] is None else {"app": values[v]}
            store.create({**_pod(name, ns, **labels), "kind": kind})
        elif verb == "delete" and obj is not None:
            store.delete(kind, ns, name)
        elif verb == "relabel" and obj is not None:
            obj["metadata"]["labels"] = {} if values[v] is None else {"app": values[v]}
            store.touch(obj)
        elif verb == "write" and obj is not None:
            obj["status"]["n"] = v
            store.touch(obj)
        got = cache.objects(namespace, kinds, nodes)
        fresh, _, _ = read_afresh(store, namespace, kinds, nodes)
        assert list(got) == list(fresh) and all(got[k] is fresh[k] for k in fresh)


def test_a_recreated_pod_keeps_its_place_and_a_new_one_takes_its_place_in_name_order() -> None:
    store = Store(Clock(0))
    cache = Observations(store)
    for n in ("b", "d"):
        store.create(_pod(n, app="a"))
    assert list(cache.objects("ns", READS, False)) == [("Pod", "b"), ("Pod", "d")]
    store.delete("Pod", "ns", "b")
    store.create(_pod("b", app="a"))
    store.create(_pod("c", app="a"))
    store.create(_pod("a", app="other"))  # not selected: no place
    reads = []
    original = obs_mod._Entry._read
    obs_mod._Entry._read = lambda self, s: reads.append(1) or original(self, s)  # type: ignore[method-assign]
    try:
        got = cache.objects("ns", READS, False)
    finally:
        obs_mod._Entry._read = original  # type: ignore[method-assign]
    assert list(got) == [("Pod", "b"), ("Pod", "c"), ("Pod", "d")] and not reads
    assert got[("Pod", "b")]["metadata"]["uid"] == store.get("Pod", "ns", "b")["metadata"]["uid"]


def test_a_scope_not_read_lately_is_forgotten_with_its_watcher() -> None:
    store = Store(Clock(0))
    cache = Observations(store)
    for n in range(Observations.LIMIT + 3):
        cache.objects(f"ns{n}", READS, False)
    assert len(cache._entries) == Observations.LIMIT == len(store._watchers)
