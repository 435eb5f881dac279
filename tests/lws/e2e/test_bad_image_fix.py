"""Issue 24 item 1, LeaderWorkerSet: a new revision that never becomes Ready (crash loop, image
pull error, failing readiness probe) on leader or worker pods, then a newer revision or a
rollback to the previous one, converges without a person (Ordinal and Hash), within the
simulator's budget invariants. Where the StatefulSet controller would wait for the broken pods
(forced rollback), the stage deletes them itself (``core/features/forced_rollback.py``)."""

from __future__ import annotations

import copy

import pytest
from fault_helpers import BAD, FAULTS, faulty_kubelet, forced_deletes, pod_images
from support.harness import inline_scenario

from pulumi_lws.sim.driver.runner import simulate
from pulumi_lws.sim.driver.scenario import Update


def lws(image: str, *, identity: str = "Ordinal", where: str = "both", replicas: int = 3, mu=1, ms=0) -> dict:
    """``where``: which pods run ``image`` (leader, worker or both; the others run ``side:1``)."""
    leader = image if where in ("leader", "both") else "side:1"
    worker = image if where in ("worker", "both") else "side:1"
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "s", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "groupIdentity": identity,
            "rolloutStrategy": {
                "type": "RollingUpdate",
                "rollingUpdateConfiguration": {"maxUnavailable": mu, "maxSurge": ms},
            },
            "leaderWorkerTemplate": {
                "size": 2,
                "leaderTemplate": {"spec": {"containers": [{"name": "c", "image": leader}]}},
                "workerTemplate": {"spec": {"containers": [{"name": "c", "image": worker}]}},
            },
        },
    }


def run(fault: str, *, fix: str, **shape):
    old, bad = lws("img:1", **shape), lws(BAD, **shape)
    good = copy.deepcopy(old) if fix == "rollback" else lws("img:2", **shape)
    sc = inline_scenario(
        old,
        bad,
        name="lws-bad-image",
        kubelet=faulty_kubelet(fault),
        updates=[Update(at=40.0, manifest=good)],
        max_time=400,
    )
    return simulate(sc)


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("where", ["leader", "worker"])
def test_ordinal_bad_image_then_a_newer_revision_converges(fault: str, where: str) -> None:
    result = run(fault, fix="newer", where=where)
    assert result.exit_code == 0, result.reason
    assert not result.trace.violations
    assert BAD not in pod_images(result.cluster)
    assert forced_deletes(result), "the broken group's pods were replaced by the stage, not by a person"


@pytest.mark.parametrize("fault", ["crash", "probe"])
def test_ordinal_bad_image_then_rollback_converges_with_surge(fault: str) -> None:
    result = run(fault, fix="rollback", mu=1, ms=1)
    assert result.exit_code == 0, result.reason
    assert not result.trace.violations and BAD not in pod_images(result.cluster)


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("where", ["leader", "worker"])
def test_hash_bad_image_then_a_fix_converges(fault: str, where: str) -> None:
    result = run(fault, fix="rollback" if where == "leader" else "newer", identity="Hash", where=where)
    assert result.exit_code == 0, result.reason
    assert not result.trace.violations and BAD not in pod_images(result.cluster)


def test_without_the_fix_the_bad_revision_stops_at_one_group() -> None:
    old, bad = lws("img:1"), lws(BAD)
    result = simulate(inline_scenario(old, bad, name="lws-bad-only", kubelet=faulty_kubelet("probe"), max_time=60))
    assert result.exit_code == 1 and result.trace.blocked
    assert sum(1 for p in result.cluster.list("Pod") for c in p["spec"]["containers"] if c["image"] == BAD) == 2
