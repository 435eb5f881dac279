"""The realistic mid-rollout fixture of the issue-16 "LWS reconcile" row (bench/bench_fixtures.py
``realistic_mid_rollout_snapshot``) shows a fleet as it runs, and its row reports a ratio."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from bench_fixtures import fleet_lws, realistic_mid_rollout_snapshot

from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.reconcile import reconcile
from pulumi_lws.lws.revision import revision_key


def test_fixture_is_a_running_fleet_half_rolled() -> None:
    lws = fleet_lws(8)
    snap = realistic_mid_rollout_snapshot(lws)
    pods = snap.list("Pod")
    assert len(pods) == 8 * lws.size
    leaders = [p for p in pods if p["metadata"]["labels"][L.WORKER_INDEX] == "0"]
    assert len(leaders) == 8
    assert all(p["metadata"]["ownerReferences"][0]["name"] == "fleet" for p in leaders)
    workers = [p for p in pods if p not in leaders]
    # worker pods are numbered from the worker StatefulSet's ordinals.start (1), owned by it
    assert sorted(p["metadata"]["name"] for p in workers if p["metadata"]["name"].startswith("fleet-0-")) == [
        "fleet-0-1",
        "fleet-0-2",
        "fleet-0-3",
    ]
    assert all(p["metadata"]["ownerReferences"][0]["name"] == p["metadata"]["name"].rsplit("-", 1)[0] for p in workers)
    target = revision_key(lws)
    assert [p["metadata"]["labels"][L.TEMPLATE_REVISION_HASH] == target for p in leaders] == [False] * 4 + [True] * 4
    result = reconcile(lws, Snapshot(snap.objects, snap.now))
    # the webhook labels are already there, nothing failed: the reconcile only rolls
    assert not [a for a in result.stage.actions if a.verb == "label"]
    assert result.stage.actions == () and not result.stage.complete
    # a real step of the rollout: a surge group added or the partition lowered
    assert result.stage.replicas > 8 or result.stage.partition < 4


def test_lws_reconcile_row_is_a_ratio_against_the_unpickle_floor() -> None:
    import bench_scale

    r = bench_scale.lws_reconcile(20)
    assert set(r) == {"figure", "value", "target", "ok", "why"}
    assert "x unpickling them" in r["value"] and r["target"] == "<= 2x (plan + render floor)"
    assert r["ok"] or r["why"]
