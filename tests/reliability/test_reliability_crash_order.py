"""LeaderWorkerSet's crash-order cases: lws#225 (workers never run ahead of their leader) under a
crash between the worker and the leader StatefulSet, a foreign write that put workers ahead, and
surge reclamation that must never drop below the availability floor (docs/reliability.md).
The randomized crash / re-run suite of every API is tests/reliability/test_crash_every_api.py.
"""

from __future__ import annotations

from support.reliability_helpers import (
    NAME,
    STACK,
    Harness,
    final_state_problems,
    follower_violations,
    lws_manifest,
)

from pulumi_lws.core.contract.driver import cycle
from pulumi_lws.lws.workload import WORKLOAD as LWS
from pulumi_lws.sim.cluster.apply import key_of


# ---- lws#225 under a crash between the worker and the leader StatefulSet -------------------------
def _ordinal_before_second_stage() -> tuple[Harness, object]:
    """R=3, size 2, MU=1: v1 -> v2 until group 2 is ready; return the next stage (partition 2 -> 1), unapplied."""
    v1 = lws_manifest(replicas=3, size=2, image="img:1", mu=1, ms=0)
    h = Harness.create(v1, ready=1.0)
    h.change_spec(lws_manifest(replicas=3, size=2, image="img:2", mu=1, ms=0))
    h.up()
    for _ in range(10):
        h.advance(2.0)
        result = cycle(LWS, h.lws, h.options, h.cluster).reconciled  # observe + plan, nothing applied
        if result.stage.partition == 1:
            return h, result
        h.up()
    raise AssertionError("\n".join(h.log))


def test_crash_between_worker_and_leader_statefulset_keeps_workers_behind_leader() -> None:
    h, result = _ordinal_before_second_stage()
    # The crash loses the leader StatefulSet update (partition 2 -> 1). Worker StatefulSet rel-1
    # depends on it (Reconciled.dependencies -> depends_on), so Pulumi never starts rel-1's template
    # update: the group below the old partition keeps its old workers.
    worker = ("StatefulSet", f"{NAME}-1")
    assert ("StatefulSet", NAME) in result.dependencies[worker]
    before = h.cluster.get("StatefulSet", f"{NAME}-1")
    applied = h.cluster.apply(
        result.manifests, stack_id=STACK, dependencies=result.dependencies, crash=[("StatefulSet", NAME)]
    )
    assert f"StatefulSet/{NAME}" in applied.skipped and f"StatefulSet/{NAME}-1" in applied.skipped
    assert h.cluster.get("StatefulSet", f"{NAME}-1")["spec"]["template"] == before["spec"]["template"]
    assert follower_violations(h.cluster, h.lws) == []


def test_foreign_write_that_put_workers_ahead_is_corrected_by_the_next_reconcile() -> None:
    """Belt and braces: something outside the dependency order (a foreign crash, a manual apply)
    puts group 0's workers on the target while the partition (2) does not admit the group. The
    next reconcile cannot admit it either (group 0 is now unavailable, MU=1), and it renders the
    group on its leader pod's revision, so the workers follow their leader again."""
    from pulumi_lws.lws.render.ordinal import worker_statefulset
    from pulumi_lws.lws.revision import revision_key

    h, _ = _ordinal_before_second_stage()
    lws = h.lws
    ahead = worker_statefulset(lws, lws, 0, revision_key(lws))
    foreign = [ahead if key_of(m) == key_of(ahead) else m for m in h.cluster.applier.state[STACK].values()]
    h.cluster.apply(foreign, stack_id=STACK)
    assert follower_violations(h.cluster, lws) != []
    result, _, _ = h.up()
    assert result.stage.partition == 2 and result.stage.group_revisions["0"] != revision_key(lws)
    assert follower_violations(h.cluster, lws) == []
    _converge_cleanly(h)


def test_complete_run_after_that_crash_restores_the_leader_first_order() -> None:
    h, _ = _ordinal_before_second_stage()
    h.up()
    assert follower_violations(h.cluster, h.lws) == []
    _converge_cleanly(h)


def test_surge_reclamation_never_drops_below_the_floor() -> None:
    v1 = lws_manifest(replicas=5, size=1, image="img:1", mu=2, ms=4)
    h = Harness.create(v1, ready=30.0, slow={"7": 1.0, "8": 1.0, "1": 5.0})  # surge 7, 8 ready first, then group 1
    h.change_spec(lws_manifest(replicas=5, size=1, image="img:2", mu=2, ms=4))
    for _ in range(15):
        h.up()
        h.check()  # t=10: stage (partition 1, replicas 7) deletes ready groups 7, 8 -> groups oUuuuuu
        h.advance(1.0)


def _converge_cleanly(h: Harness, stages: int = 30) -> None:
    """Keep running `pulumi up` every 2 s until converged; then nothing lost or leaked."""
    for _ in range(stages):
        h.advance(2.0)
        h.up()
        if h.converged():
            break
    assert h.converged() and final_state_problems(h) == []
