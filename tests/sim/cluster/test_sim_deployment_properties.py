"""Property tests: the simulated Deployment/ReplicaSet controllers against Kubernetes' rolling update.

Reference behaviour (kubernetes/pkg/controller/deployment, replicaset, controller_utils.go):
- ``ResolveFenceposts``: maxSurge = ceil(%), maxUnavailable = floor(%), both against
  ``spec.replicas``; both 0 -> maxUnavailable 1;
- ``rolloutRolling``: the sum of the ReplicaSets' ``spec.replicas`` never exceeds
  replicas + maxSurge and old ReplicaSets scale down only while available >= replicas -
  maxUnavailable; a ``spec.replicas`` change mid-rollout is a *scaling event*
  (``isScalingEvent``/``scale``): every active ReplicaSet is resized proportionally so the total
  is the new replicas + maxSurge at once;
- ``ActivePodsWithRanks``: scale-down deletes unassigned before assigned, Pending < Unknown <
  Running, not ready before ready, lower ``controller.kubernetes.io/pod-deletion-cost`` first.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from support.sim_helpers import deployment, run_until

from pulumi_lws.sim.cluster.deployment import resolve_fenceposts
from pulumi_lws.sim.cluster.kubelet import KubeletConfig, Timing
from pulumi_lws.sim.cluster.simcluster import SimCluster

HASH = "pod-template-hash"
COST = "controller.kubernetes.io/pod-deletion-cost"
_PHASE = {"Pending": 0, "Unknown": 1, "Running": 2}


class DrawnKubelet(KubeletConfig):
    """Readiness delay per pod in admission order (drawn by hypothesis, cycled); None = never ready."""

    def __init__(self, delays: list[int | None], termination_grace: float = 1.0) -> None:
        super().__init__(default=Timing(1, 1), termination_grace=termination_grace)
        self.delays, self.n = delays, 0

    def timing_for(self, pod: Any, created_at: float) -> Timing:
        d = self.delays[self.n % len(self.delays)]
        self.n += 1
        return Timing(1, 0, never_ready=True) if d is None else Timing(1, d)


def _terminating(p: dict) -> bool:
    return bool(p["metadata"].get("deletionTimestamp")) or p["status"].get("phase") in ("Succeeded", "Failed")


def _ready(p: dict) -> bool:
    return p["status"].get("phase") == "Running" and any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in p["status"].get("conditions") or []
    )


def _active(c: SimCluster) -> list[dict]:
    return [p for p in c.store.list("Pod") if not _terminating(p)]


def _rank(p: dict) -> tuple:
    """Kubernetes ``ActivePodsWithRanks`` prefix, from raw pod fields (not the simulator's key)."""
    cost = int((p["metadata"].get("annotations") or {}).get(COST, 0))
    return (bool(p["spec"].get("nodeName")), _PHASE.get(p["status"].get("phase"), 0), _ready(p), cost)


def _watch_victims(c: SimCluster, log: list[str]) -> None:
    """Wrap the ReplicaSet sync: every scale-down picks victims no better-ranked than survivors."""
    rsc, orig = c.replicasets, c.replicasets.sync

    def sync(rs: dict) -> None:
        before = [p for p in rsc.pods(rs) if not _terminating(p)]
        ranks = {p["metadata"]["uid"]: _rank(p) for p in before}
        orig(rs)
        gone = [p for p in before if _terminating(p) or c.store.get("Pod", "default", p["metadata"]["name"]) is None]
        kept = [p for p in before if p not in gone]
        if gone and kept:
            worst_victim = max(ranks[p["metadata"]["uid"]] for p in gone)
            best_survivor = min(ranks[p["metadata"]["uid"]] for p in kept)
            if worst_victim > best_survivor:
                log.append(
                    f"t={c.clock.now} {rs['metadata']['name']}: deleted rank {worst_victim} "
                    f"while rank {best_survivor} survives"
                )

    rsc.sync = sync  # type: ignore[method-assign]


intorpct = st.one_of(st.integers(0, 4), st.sampled_from(["0%", "10%", "25%", "33%", "50%", "100%"]))
delays = st.lists(st.one_of(st.integers(0, 6)), min_size=1, max_size=30)


def _zero(v: Any) -> bool:
    return v in (0, "0%")


@settings(max_examples=60)
@given(
    replicas=st.integers(1, 12),
    surge=intorpct,
    unavailable=intorpct,
    delays=delays,
    costs=st.lists(st.integers(-3, 3), max_size=12),
    rescale=st.one_of(st.none(), st.tuples(st.integers(0, 8), st.integers(1, 12))),
)
def test_rolling_update_bounds_and_converges(replicas, surge, unavailable, delays, costs, rescale):
    if _zero(surge) and _zero(unavailable):
        unavailable = 1  # API validation rejects literal 0/0 (only rounding may produce it)
    c = SimCluster(kubelet=DrawnKubelet(delays))
    log: list[str] = []
    _watch_victims(c, log)

    c.apply([deployment(replicas=replicas, surge=surge, unavailable=unavailable)])
    run_until(c, 60)
    pods = sorted(_active(c), key=lambda p: p["metadata"]["name"])
    assert len(pods) == replicas and all(map(_ready, pods))
    for p, cost in zip(pods, costs):
        p["metadata"].setdefault("annotations", {})[COST] = str(cost)
    c.settle()

    want = replicas
    s, u = resolve_fenceposts(surge, unavailable, want)
    floor = want - u
    c.apply([deployment(image="b", replicas=want, surge=surge, unavailable=unavailable)])
    t0 = c.clock.now
    for tick in range(400):
        if rescale is not None and tick == rescale[0]:
            new = rescale[1]
            if new < want:
                # Kubernetes' proportional scale-down may remove ready pods below the new floor
                # (scale() sizes ReplicaSets by proportion, not by availability): no floor after it.
                floor = 0
            want = new
            s, u = resolve_fenceposts(surge, unavailable, want)
            c.apply([deployment(image="b", replicas=want, surge=surge, unavailable=unavailable)])
        active = _active(c)
        assert len(active) <= want + s, (tick, len(active), want, s)
        assert sum(map(_ready, active)) >= floor, (tick, sum(map(_ready, active)), floor)
        rss = c.store.list("ReplicaSet")
        assert sum(r["spec"]["replicas"] for r in rss) <= want + s
        if tick > (rescale[0] if rescale else 0) and _converged(c, want):
            break
        run_until(c, t0 + tick + 1)
    else:
        raise AssertionError(f"no convergence: {[(r['metadata']['name'], r['spec']['replicas']) for r in rss]}")
    assert not log, log


def _converged(c: SimCluster, want: int) -> bool:
    d = c.store.get("Deployment", "default", "d")
    new_hash = next(
        r for r in c.store.list("ReplicaSet") if r["spec"]["template"]["spec"]["containers"][0]["image"] == "b"
    )["metadata"]["labels"][HASH]
    old = [r for r in c.store.list("ReplicaSet") if r["metadata"]["labels"][HASH] != new_hash]
    pods = c.store.list("Pod")
    return (
        all(r["spec"]["replicas"] == 0 for r in old)
        and len(pods) == want
        and all(p["metadata"]["labels"][HASH] == new_hash and _ready(p) for p in pods)
        and d["status"].get("updatedReplicas") == d["status"].get("availableReplicas") == want
    )


def _pct(v: Any, replicas: int, up: bool) -> int:
    if isinstance(v, int):
        return v
    q, r = divmod(int(v[:-1]) * replicas, 100)
    return q + (1 if up and r else 0)


@given(replicas=st.integers(0, 50), surge=intorpct, unavailable=intorpct)
def test_fenceposts_round_surge_up_and_unavailable_down(replicas, surge, unavailable):
    s, u = _pct(surge, replicas, True), _pct(unavailable, replicas, False)
    assert resolve_fenceposts(surge, unavailable, replicas) == (s, 1 if s == u == 0 else u)


@settings(max_examples=40)
@given(replicas=st.integers(1, 12), surge=intorpct, unavailable=intorpct, delays=delays)
def test_stuck_rollout_keeps_the_floor_and_the_old_pods(replicas, surge, unavailable, delays):
    """New pods never become ready: the rollout stalls without breaking either bound."""
    if _zero(surge) and _zero(unavailable):
        unavailable = 1
    kubelet = DrawnKubelet(delays)
    c = SimCluster(kubelet=kubelet)
    c.apply([deployment(replicas=replicas, surge=surge, unavailable=unavailable)])
    run_until(c, 60)
    kubelet.delays = [None]
    s, u = resolve_fenceposts(surge, unavailable, replicas)
    c.apply([deployment(image="b", replicas=replicas, surge=surge, unavailable=unavailable)])
    for t in range(61, 120):
        active = _active(c)
        assert len(active) <= replicas + s
        assert sum(map(_ready, active)) >= replicas - u
        run_until(c, t)
    old = [p for p in _active(c) if p["spec"]["containers"][0]["image"] == "a"]
    new = [p for p in _active(c) if p["spec"]["containers"][0]["image"] == "b"]
    # Stalled state of rolloutRolling: old pods scaled down to the floor at most, new ones fill the
    # rest of the surge room (capped at replicas).
    assert len(old) == max(replicas - u, 0) or (len(old) == replicas and not new)
    assert len(new) == min(replicas, replicas + s - len(old))
    assert all(map(_ready, old)) and not any(map(_ready, new))


@settings(max_examples=60)
@given(replicas=st.integers(2, 12), data=st.data())
def test_replicaset_scale_down_victims_follow_kubernetes_ranking(replicas, data):
    """Scale down with a mix of ready, restarting (not ready), Pending and costed pods."""
    c = SimCluster(kubelet=DrawnKubelet([0]))
    log: list[str] = []
    _watch_victims(c, log)
    c.apply([deployment(replicas=replicas, surge=1, unavailable=0)])
    run_until(c, 10)
    pods = sorted(_active(c), key=lambda p: p["metadata"]["name"])
    for p in pods:
        cost = data.draw(st.one_of(st.none(), st.integers(-2, 2)))
        if cost is not None:
            p["metadata"].setdefault("annotations", {})[COST] = str(cost)
        if data.draw(st.booleans()):
            c.restart_container("default", p["metadata"]["name"])
    extra = data.draw(st.integers(0, 4))  # pods still Pending at the scale-down
    if extra:
        c.apply([deployment(replicas=replicas + extra, surge=1, unavailable=0)])
    target = data.draw(st.integers(0, replicas + extra - 1))
    before = {p["metadata"]["name"]: _ready(p) for p in _active(c)}
    c.apply([deployment(replicas=target, surge=1, unavailable=0)])
    after = {p["metadata"]["name"] for p in _active(c)}
    assert len(after) == target and not log, log
    deleted_ready = [n for n in before if n not in after and before[n]]
    kept_not_ready = [n for n in after if not before[n]]
    assert not (deleted_ready and kept_not_ready), (deleted_ready, kept_not_ready)


# ---- focused examples for the scaling-event fix (found by test_rolling_update_bounds_and_converges) ----


def _sizes(c: SimCluster) -> dict[str, int]:
    return {
        r["spec"]["template"]["spec"]["containers"][0]["image"]: r["spec"]["replicas"] for r in c.list("ReplicaSet")
    }


def test_scale_down_mid_rollout_is_proportional_and_respects_the_new_surge():
    """4 -> 2 replicas mid-rollout (maxSurge 0): Kubernetes' ``scale`` shrinks both ReplicaSets to
    a total of 2 + 0 at once (before the fix the old one stayed at 1 + new 2 = 3 > 2)."""
    c = SimCluster(kubelet=DrawnKubelet([0]))
    c.apply([deployment(replicas=4, surge=0, unavailable="50%")])
    run_until(c, 5)
    c.apply([deployment(image="b", replicas=4, surge=0, unavailable="50%")])
    assert _sizes(c) == {"a": 2, "b": 2}
    c.apply([deployment(image="b", replicas=2, surge=0, unavailable="50%")])
    assert _sizes(c) == {"a": 1, "b": 1}  # equal sizes: older first; 2*2/4 = 1 each
    run_until(c, 30)
    assert _sizes(c) == {"a": 0, "b": 2}


def test_scale_up_mid_rollout_distributes_by_max_replicas_annotation():
    """10 -> 20 (25%/25%) with old 8 + new 5 (max-replicas 13): allowed 25, +12 split largest
    first by round(size * 25 / 13): old 8 -> 15, new 5 -> 10 (round half away from zero)."""
    c = SimCluster(kubelet=DrawnKubelet([0]))
    c.apply([deployment(replicas=10)])
    run_until(c, 5)
    c.apply([deployment(image="b", replicas=10)])
    assert _sizes(c) == {"a": 8, "b": 5}
    c.apply([deployment(image="b", replicas=20)])
    assert _sizes(c) == {"a": 15, "b": 10}
    for r in c.list("ReplicaSet"):
        ann = r["metadata"]["annotations"]
        assert (ann["deployment.kubernetes.io/desired-replicas"], ann["deployment.kubernetes.io/max-replicas"]) == (
            "20",
            "25",
        )
    run_until(c, 60)
    assert _sizes(c) == {"a": 0, "b": 20}
