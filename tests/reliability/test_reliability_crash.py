"""Crash at every stage: randomized rollouts of every policy through `reconcile` + `SimCluster`.

Each case (``reliability_helpers.random_case(seed)``; replay a failure with
``run_case(random_case(seed))`` from this module) starts converged on revision 1 and rolls to a new
template (± a replica change, sometimes a size change) with random budgets (int or %), user
partition (Ordinal) and readiness delays. At every stage: (a) `pulumi up` is re-run at the same
instant until a run changes nothing (same manifests, nothing applied, no actions; <= 4 runs) and
planning twice on one snapshot is identical; (b) with the case's crash probability, the stage is
first applied only partly (a random subset of its object changes, or all objects and a prefix of
its actions) and then re-run; (c) with probability 0.15 the spec changes again mid-rollout.
After every run and every simulated second the invariants of docs/reliability.md are asserted;
at the end the rollout must have converged (unlimited capacity) with no lost group and no leaked
object.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass

import pytest
from fault_helpers import BAD, FAULTS
from support.reliability_helpers import (
    NAME,
    NS,
    POLICIES,
    STACK,
    Case,
    Harness,
    final_state_problems,
    follower_violations,
    lws_manifest,
    random_case,
)

from pulumi_lws.lws.observe import lws_scope
from pulumi_lws.lws.reconcile import reconcile
from pulumi_lws.sim.cluster.apply import key_of

# ---- crash at every stage -------------------------------------------------------------------
MAX_SAME_INSTANT_RUNS = 4
BAD_IMAGE_STAGES = 5


def rerun_until_idle(h: Harness) -> int:
    """(a) Re-run `pulumi up` at the same instant until a run changes nothing; return the runs needed.

    A run "changes nothing" when it declares the same manifests as the run before, the apply
    creates/updates/deletes nothing and it has no actions. Runs before it may legitimately act on
    what the controllers did with the previous run at the same instant (e.g. Hash: the Deployment
    creates gated leaders, the next run admits them).
    """
    prev = h.last.manifests if h.last else None
    for n in range(1, MAX_SAME_INSTANT_RUNS + 1):
        result, applied, _executed = h.up()
        h.check()
        waiting = {f"{k[0]}/{k[2]}" for k in h.cluster.applier.pending}
        replaced = [
            r for r in applied.replaced if r not in waiting
        ]  # delete-before-replace still waiting: Pulumi waits too
        changed = applied.created or applied.updated or applied.deleted or replaced or result.stage.actions
        if not changed and result.manifests == prev:
            return n
        prev = result.manifests
    raise AssertionError(
        f"re-running at the same instant never became a no-op after {MAX_SAME_INSTANT_RUNS} runs:\n"
        + "\n".join(h.log[-MAX_SAME_INSTANT_RUNS:])
    )


def same_snapshot_is_deterministic(h: Harness) -> None:
    """Planning twice on one snapshot gives identical manifests and actions (pure, no apply)."""
    lws = h.lws
    snap = h.cluster.observe(lws_scope(NS, NAME, nodes=bool(h.cluster.store.list("Node"))))
    a, b = reconcile(lws, snap, h.options), reconcile(lws, snap, h.options)
    assert a.manifests == b.manifests and a.stage.actions == b.stage.actions, (
        "reconcile is not a function of the snapshot"
    )


@dataclass
class CaseResult:
    reconciles: int
    stages: int
    crashes: int
    changes: int
    reruns: list[int]


def run_case(case: Case, *, interval: float = 2.0, max_stages: int = 120) -> CaseResult:
    """Roll ``case`` out, crashing/re-running/changing the spec at random stages; assert the promise."""
    h = Harness.create(
        case.start,
        seed=case.seed,
        ready=case.ready_seconds,
        slow=case.slow_groups,
        options=case.options,
        bad_image=case.bad_image,
    )
    rng = random.Random(1_000_003 * case.seed + 17)
    pending = list(case.changes)
    h.change_spec(pending.pop(0))
    crashes = changes = 0
    on_bad = 0  # stages spent on the bad image (issue 24): the fix comes after BAD_IMAGE_STAGES
    reruns: list[int] = []
    for stage in range(max_stages):
        on_bad = on_bad + 1 if BAD in json.dumps(h.desired) else 0
        if pending and (on_bad > BAD_IMAGE_STAGES or (stage > 0 and rng.random() < case.p_change)):  # (c) a new spec
            h.change_spec(pending.pop(0))
            changes += 1
        same_snapshot_is_deterministic(h)
        if rng.random() < case.p_crash:  # (b) crash mid-apply: a random subset, no actions
            crashes += 1
            if rng.random() < 0.7:
                h.up(keep=rng.uniform(0.05, 0.95), run_actions=False)
            else:  # crash while running actions: registration done, only a prefix of the actions ran
                result, _, _ = h.up(run_actions=False)
                acts = list(result.stage.actions)
                if acts:
                    h.cluster.execute(NS, acts[: rng.randrange(len(acts))])
            h.check()
        reruns.append(rerun_until_idle(h))  # (a) run, re-run, ... the last run changes nothing
        if not pending and h.converged():
            problems = final_state_problems(h)
            assert not problems, f"{case.describe()}: {problems}\n" + "\n".join(h.log[-6:])
            return CaseResult(h.reconciles, stage + 1, crashes, changes, reruns)
        if pending and h.converged():  # finished before the drawn change: change now
            h.change_spec(pending.pop(0))
            changes += 1
            continue
        h.advance(interval)
    blocker = h.last.stage.blocker if h.last else None
    raise AssertionError(
        f"{case.describe()}: not converged after {max_stages} stages with unlimited capacity "
        f"(blocker: {blocker})\n" + "\n".join(h.log[-8:])
    )


FAST_SEEDS = range(0, 160)  # 40 per policy (policy = POLICIES[seed % 4])
CHUNK = 10
SOAK_SCENARIOS = int(5000 * float(os.environ.get("LWS_SOAK") or 0))
SOAK_CHUNK = 100


def _run(seeds) -> dict[str, int]:
    stats = {"cases": 0, "crashes": 0, "changes": 0, "reconciles": 0}
    for seed in seeds:
        result = run_case(random_case(seed))
        stats["cases"] += 1
        stats["crashes"] += result.crashes
        stats["changes"] += result.changes
        stats["reconciles"] += result.reconciles
    return stats


@pytest.mark.parametrize(
    "first", range(FAST_SEEDS.start, FAST_SEEDS.stop, CHUNK), ids=lambda s: f"seeds{s}-{s + CHUNK - 1}"
)
def test_crash_rerun_and_change_at_every_stage(first: int) -> None:
    stats = _run(range(first, first + CHUNK))
    assert stats["cases"] == CHUNK and stats["reconciles"] > 3 * CHUNK


@pytest.mark.parametrize("fault", FAULTS)
def test_bad_image_then_a_fix_with_crashes_at_every_stage(fault: str) -> None:
    """Issue 24: a bad image first (crash loop, pull error, failing probe), the fix after a few
    stages; crashes and re-runs at every stage; every policy; must converge with no person."""
    for seed in range(4):
        case = random_case(seed + 4 * FAULTS.index(fault), bad_image=fault)
        case.p_crash = max(case.p_crash, 0.3)
        run_case(case)


def test_soak_cases_include_a_bad_image_in_a_fraction() -> None:
    from support.reliability_helpers import BAD_IMAGE_FRACTION, SOAK_SEEDS

    cases = [random_case(s) for s in range(SOAK_SEEDS, SOAK_SEEDS + 200)]
    bad = [c for c in cases if c.bad_image]
    assert 0.5 * BAD_IMAGE_FRACTION * 200 < len(bad) < 2 * BAD_IMAGE_FRACTION * 200
    assert {c.bad_image for c in bad} == set(FAULTS)
    assert all(BAD in json.dumps(c.changes[0]) and BAD not in json.dumps(c.changes[-1]) for c in bad)
    assert not any(random_case(s).bad_image for s in FAST_SEEDS)  # the fast cases are as they were


def test_fast_seeds_cover_every_policy_and_every_fault_kind() -> None:
    cases = [random_case(s) for s in FAST_SEEDS]
    assert {c.policy for c in cases} == set(POLICIES)
    for policy in POLICIES:
        mine = [c for c in cases if c.policy == policy]
        assert any(c.p_crash > 0 for c in mine) and any(len(c.changes) > 1 for c in mine)
        assert any(c.changes[0]["spec"]["replicas"] != c.start["spec"]["replicas"] for c in mine)
        assert any(
            isinstance(c.start["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"]["maxSurge"], str) for c in mine
        )
    assert any(c.start["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"]["partition"] > 0 for c in cases)


def test_same_seed_same_rollout() -> None:
    a, b = run_case(random_case(7)), run_case(random_case(7))
    assert (a.reconciles, a.stages, a.crashes, a.changes, a.reruns) == (
        b.reconciles,
        b.stages,
        b.crashes,
        b.changes,
        b.reruns,
    )


@pytest.mark.slow
@pytest.mark.skipif(SOAK_SCENARIOS == 0, reason="soak: set LWS_SOAK=1 (make soak) for 5,000 scenarios")
@pytest.mark.parametrize("chunk", range(0, 50 * 100, SOAK_CHUNK))
def test_soak(chunk: int) -> None:
    per = max(1, SOAK_SCENARIOS // 50)
    start = 10_000 + chunk * per // SOAK_CHUNK
    stats = _run(range(start, start + per))
    assert stats["cases"] == per


# ---- lws#225 under a crash between the worker and the leader StatefulSet -------------------------
def _ordinal_before_second_stage() -> tuple[Harness, object]:
    """R=3, size 2, MU=1: v1 -> v2 until group 2 is ready; return the next stage (partition 2 -> 1), unapplied."""
    v1 = lws_manifest(replicas=3, size=2, image="img:1", mu=1, ms=0)
    h = Harness.create(v1, ready=1.0)
    h.change_spec(lws_manifest(replicas=3, size=2, image="img:2", mu=1, ms=0))
    h.up()
    for _ in range(10):
        h.advance(2.0)
        result = reconcile(h.lws, h.cluster.observe(lws_scope(NS, NAME)), h.options)
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
