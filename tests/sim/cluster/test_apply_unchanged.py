"""The applier's skip of a manifest it found unchanged on the same object version changes nothing:
every example scenario, and a ModelServing and a DisaggregatedSet fleet rolled out, give the same
trace, the same demand and the same final store (resourceVersions included) with the skip off."""

from __future__ import annotations

import json
import pathlib
import sys

import pytest

from pulumi_lws.sim.cluster import apply as apply_mod
from pulumi_lws.sim.cluster.store import Store, strip_internal
from pulumi_lws.sim.driver.runner import simulate
from pulumi_lws.sim.driver.scenario import load_scenario

ROOT = pathlib.Path(__file__).resolve().parents[3]
EXAMPLES = sorted(str(p.relative_to(ROOT / "examples")) for p in (ROOT / "examples").glob("*/scenario*.yaml"))


sys.path.insert(0, str(ROOT / "bench"))
from bench_sim import scenario as bench_scenario  # noqa: E402  (the bench's rollout, as its rows run it)


class _Forgetting(dict):
    """An ``unchanged_at`` that remembers nothing: every manifest is defaulted and compared (the old way)."""

    def setdefault(self, key, default=None):
        return {}


def _store_dump(store: Store) -> list[str]:
    return [json.dumps(strip_internal(o), default=str) for o in store.all()]


def _same_runs(make, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = simulate(make(), "pure")
    assert any(fast.cluster.applier.unchanged_at.values()), "the skip was never armed"
    original = apply_mod.Applier.__init__

    def forgetting(self, *a, **kw):
        original(self, *a, **kw)
        self.unchanged_at = _Forgetting()

    monkeypatch.setattr(apply_mod.Applier, "__init__", forgetting)
    slow = simulate(make(), "pure")
    assert [repr(r) for r in fast.trace.rows] == [repr(r) for r in slow.trace.rows]
    assert [repr(r) for r in fast.raw_rows] == [repr(r) for r in slow.raw_rows]
    assert repr(fast.stages) == repr(slow.stages) and repr(fast.demand) == repr(slow.demand)
    assert _store_dump(fast.cluster.store) == _store_dump(slow.cluster.store)
    assert fast.cluster.store.version == slow.cluster.store.version


@pytest.mark.parametrize("name", EXAMPLES)
def test_skipping_unchanged_manifests_changes_no_example(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _same_runs(lambda: load_scenario(ROOT / "examples" / name), monkeypatch)


@pytest.mark.parametrize("kind", ["LeaderWorkerSet", "ModelServing", "DisaggregatedSet"])
def test_skipping_unchanged_manifests_changes_no_fleet_rollout(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _same_runs(lambda: bench_scenario(24, 2, kind=kind), monkeypatch)
