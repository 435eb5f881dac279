"""``core.forced_rollback``: the pods a StatefulSet controller will never replace after a bad
template, checked against the simulator's controller (Parallel and OrderedReady, with and without
``maxUnavailable``), and the delete actions that unstick it."""

from __future__ import annotations

import pytest
from support.sim_helpers import sts

from pulumi_lws.core.features.forced_rollback import (
    FORCED_ROLLBACK_REASON,
    forced_rollback_actions,
    stalled_pods,
)
from pulumi_lws.sim.cluster.kubelet import KubeletConfig, Timing
from pulumi_lws.sim.cluster.simcluster import SimCluster


def _cluster() -> SimCluster:
    return SimCluster(kubelet=KubeletConfig(default=Timing(1, 2), fail_images=("bad",)))


def _run(c: SimCluster, until: float) -> None:
    t = c.clock.now
    while t < until:
        t += 1.0
        c.step(t)


def _observed(c: SimCluster, name: str = "web"):
    s = c.get("StatefulSet", name)
    pods = [p for p in c.list("Pod") if p["metadata"]["name"].startswith(name + "-")]
    return s, pods


def _uids(c: SimCluster) -> dict[str, str]:
    return {p["metadata"]["name"]: p["metadata"]["uid"] for p in c.list("Pod")}


def _updated_and_ready(c: SimCluster) -> bool:
    s, pods = _observed(c)
    rev = s["status"]["updateRevision"]
    return len(pods) == s["spec"]["replicas"] and all(
        p["metadata"]["labels"]["controller-revision-hash"] == rev
        and any(x["type"] == "Ready" and x["status"] == "True" for x in p["status"].get("conditions") or [])
        for p in pods
    )


@pytest.mark.parametrize("policy", ["Parallel", "OrderedReady"])
@pytest.mark.parametrize("mu", [None, 2])
def test_stalled_pods_are_exactly_those_the_controller_never_replaces(policy: str, mu) -> None:
    c = _cluster()
    extra = {"max_unavailable": mu} if mu is not None else {}
    c.apply([sts(replicas=3, image="good", policy=policy, **extra)], stack_id="s")
    _run(c, 20.0)
    assert _updated_and_ready(c)
    c.apply([sts(replicas=3, image="bad", policy=policy, **extra)], stack_id="s")
    _run(c, 60.0)
    c.apply([sts(replicas=3, image="good2", policy=policy, **extra)], stack_id="s")
    _run(c, 70.0)
    s, pods = _observed(c)
    stalled = stalled_pods(s, pods)
    assert stalled, "a bad template then a fix must leave broken pods behind (forced rollback)"
    names = {p["metadata"]["name"] for p in stalled}
    assert all("bad" == p["spec"]["containers"][0]["image"] for p in stalled)
    before = _uids(c)
    _run(c, 200.0)  # the controller alone: the stalled pods stay as they are, for ever
    after = _uids(c)
    assert all(after[n] == before[n] for n in names)
    assert not _updated_and_ready(c)
    actions = forced_rollback_actions([s], pods)
    assert {a.name for a in actions} == names
    assert all(a.verb == "delete" and a.uid and a.reason == FORCED_ROLLBACK_REASON for a in actions)
    for _ in range(6):  # one delete per reconcile round, as stages would
        s, pods = _observed(c)
        c.execute("default", forced_rollback_actions([s], pods))
        _run(c, c.clock.now + 10.0)
    assert _updated_and_ready(c)


def test_nothing_is_stalled_while_the_controller_can_still_replace() -> None:
    c = _cluster()
    c.apply([sts(replicas=4, image="good", max_unavailable=2)], stack_id="s")
    _run(c, 20.0)
    c.apply([sts(replicas=4, image="good2", max_unavailable=2)], stack_id="s")
    s, pods = _observed(c)
    assert stalled_pods(s, pods) == ()  # outdated but available: the controller's own rolling update


def _sts_obj(policy="Parallel", partition=0, mu=None, generation=2, observed=2, update="web-new"):
    ru = {"partition": partition, **({"maxUnavailable": mu} if mu is not None else {})}
    return {
        "metadata": {"name": "web", "uid": "u", "generation": generation},
        "spec": {
            "replicas": 3,
            "podManagementPolicy": policy,
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": ru},
        },
        "status": {"observedGeneration": observed, "updateRevision": update},
    }


def _pod(i: int, rev: str, ready: bool, deleting: bool = False):
    meta = {
        "name": f"web-{i}",
        "uid": f"p{i}",
        "labels": {"controller-revision-hash": rev},
        "ownerReferences": [{"uid": "u", "controller": True}],
    }
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {
        "metadata": meta,
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


def test_pure_rules_partition_generation_terminating_and_budget() -> None:
    pods = [_pod(0, "web-old", True), _pod(1, "web-old", False), _pod(2, "web-bad", False)]
    names = lambda out: [p["metadata"]["name"] for p in out]  # noqa: E731
    assert names(stalled_pods(_sts_obj(), pods)) == ["web-1", "web-2"]
    assert names(stalled_pods(_sts_obj(partition=2), pods)) == ["web-2"]  # below the partition: held back
    assert stalled_pods(_sts_obj(observed=1), pods) == ()  # controller has not seen the new template yet
    assert stalled_pods(_sts_obj(mu=3), pods) == ()  # 2 unavailable < 3: the controller replaces them
    assert names(stalled_pods(_sts_obj(policy="OrderedReady", mu=3), pods)) == ["web-1", "web-2"]
    assert names(stalled_pods(_sts_obj(), [pods[0], pods[1], _pod(2, "web-bad", False, deleting=True)])) == ["web-1"]
    assert stalled_pods(_sts_obj(), [_pod(i, "web-new", False) for i in range(3)]) == ()  # updated: just not ready
    actions = forced_rollback_actions([_sts_obj()], pods, skip=["web-1"], propagation={"web": "Foreground"})
    assert [(a.name, a.uid, a.params["propagation"]) for a in actions] == [("web-2", "p2", "Foreground")]
