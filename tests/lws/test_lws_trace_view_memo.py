"""lws/trace_view.py's cell memo: under the simulator's promise (``Snapshot.reuse``) every view a
LeaderWorkerSet or DisaggregatedSet row reads equals the one read without it, on every tick of
every example scenario and of a fleet rollout (Ordinal and Hash groups, DisaggregatedSet children);
literal snapshots keep nothing; memory is bounded."""

from __future__ import annotations

import dataclasses
import pathlib
import sys

import pytest

from pulumi_lws.core.contract.reuse import Reuse
from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.disaggregatedset import workload as ds_workload
from pulumi_lws.lws import trace_view
from pulumi_lws.lws import workload as lws_workload
from pulumi_lws.sim.driver.runner import simulate
from pulumi_lws.sim.driver.scenario import load_scenario

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = sorted(str(p.relative_to(ROOT / "examples")) for p in (ROOT / "examples").glob("*/scenario*.yaml"))

sys.path.insert(0, str(ROOT / "bench"))
from bench_sim import scenario_doc  # noqa: E402  (the bench's rollout, as its rows run it)


def _checking(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every ``read_groups`` answer compared with the one read without the promise; counts the
    views read under it."""
    counts = [0]
    original = trace_view.read_groups

    def checked(snapshot, *args):
        got = original(snapshot, *args)
        assert got == original(dataclasses.replace(snapshot, reuse=None), *args)
        counts[0] += snapshot.reuse is not None
        return got

    for module in (lws_workload, ds_workload):
        monkeypatch.setattr(module, "read_groups", checked)
    return counts


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_view_of_an_example_equals_one_without_the_memo(name: str, monkeypatch) -> None:
    _checking(monkeypatch)
    simulate(load_scenario(ROOT / "examples" / name), "pure")


@pytest.mark.parametrize("kind", ["LeaderWorkerSet", "DisaggregatedSet"])
@pytest.mark.parametrize("hash_mode", [False, True])
def test_every_view_of_a_fleet_rollout_equals_one_without_the_memo(kind: str, hash_mode: bool, monkeypatch) -> None:
    if hash_mode and kind != "LeaderWorkerSet":
        pytest.skip("Hash group identity: a LeaderWorkerSet field")
    counts = _checking(monkeypatch)
    doc = scenario_doc(24, 2, kind=kind)
    if hash_mode:
        doc["manifest"]["spec"]["groupIdentity"] = "Hash"
    result = simulate(load_scenario(doc), "pure")
    assert result.trace.converged and counts[0] > 2


def test_a_repeated_view_reuses_its_cells_and_memory_is_bounded(monkeypatch) -> None:
    doc = scenario_doc(4, 2, kind="LeaderWorkerSet")
    result = simulate(load_scenario(doc), "pure")
    spec = lws_workload.WORKLOAD.parse(doc["manifest"], namespace=doc.get("namespace", "default"))
    objs = list(result.cluster.observe(lws_workload.WORKLOAD.scope(spec, nodes=False)))
    reuse = Reuse()
    promised = dataclasses.replace(Snapshot.of(objs), reuse=reuse)
    first = trace_view.read_groups(promised, spec.name, spec.replicas, spec.size, "t")
    again = trace_view.read_groups(promised, spec.name, spec.replicas, spec.size, "t")
    assert again == first and all(a is b for a, b in zip(again.cells, first.cells) if a.state != "-")
    other = trace_view.read_groups(promised, spec.name, spec.replicas, spec.size, "other")  # the context
    assert other == trace_view.read_groups(Snapshot.of(objs), spec.name, spec.replicas, spec.size, "other")
    fresh = trace_view.read_groups(Snapshot.of(objs), spec.name, spec.replicas, spec.size, "t")
    assert fresh == first and fresh.cells[0] is not first.cells[0]  # no promise: nothing reused
    monkeypatch.setattr(trace_view, "LIMIT", 2)
    for n in range(5):
        trace_view.read_groups(promised, f"lws{n}", 1, 2, "t")
    assert len(reuse.memo(trace_view.__name__)) == 2
