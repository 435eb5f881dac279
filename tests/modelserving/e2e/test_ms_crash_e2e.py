"""ModelServing crash / re-run at every stage (imitates tests/reliability/test_reliability_crash.py)
and a hypothesis property on the simulator.

Each seeded case (``random_case(seed)``; replay with ``run_case(random_case(seed))``) starts
converged and rolls to a new image with random strategy (ServingGroupRollingUpdate or
RoleRollingUpdate), replicas, maxUnavailable / maxSurge (int or %), partition, readiness delays and
slow groups. At every stage: (a) planning twice on one snapshot is identical; (b) with the case's
crash probability the stage is first applied only partly (a random subset of its object changes,
closed under the dependencies, no actions) and then re-run; (c) `pulumi up` is re-run at the same
instant until a run changes nothing; (d) sometimes the spec changes again mid-rollout. After every
run and every simulated second the bounds of ``ms_helpers.Bounds`` hold (computed from the
cluster); at the end the rollout has converged with exactly ``replicas`` available groups and no
terminating object. The soak (``-m slow``, ``LWS_SOAK`` scales it as for LWS) runs 2,000 cases per
unit of LWS_SOAK.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass
from typing import Any

import pytest
from fault_helpers import BAD, arm, bad_image_draw
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.ms_helpers import (
    ROLE,
    SG,
    Harness,
    Override,
    kubelet,
    ms_manifest,
    parse,
    read,
    role,
    run,
    scenario,
    with_image,
)

from pulumi_lws.core.k8s.scaling import scaled_value
from pulumi_lws.modelserving.reconcile import reconcile
from pulumi_lws.modelserving.revision import modelserving_revision
from pulumi_lws.modelserving.workload import WORKLOAD

MAX_SAME_INSTANT_RUNS = 4
BUDGETS = (0, 1, 2, "25%", "50%", "100%")


@dataclass
class Case:
    seed: int
    strategy: str
    start: dict[str, Any]
    changes: list[dict[str, Any]]
    ready: float
    slow: dict[str, float]
    p_crash: float
    p_change: float = 0.15
    #: issue 24: the first change is a bad image failing this way (crash, pull, probe), then a fix
    bad_image: str | None = None

    def describe(self) -> str:
        s = self.start["spec"]
        return (
            f"seed={self.seed} {self.strategy} R={s['replicas']} rollout={s['rolloutStrategy']} "
            f"roles={[(r['name'], r['replicas'], r.get('maxUnavailable'), r.get('maxSurge'), r.get('partition')) for r in s['template']['roles']]} "
            f"ready={self.ready} slow={self.slow} p_crash={self.p_crash} changes={len(self.changes)}"
            + (f" bad-image={self.bad_image}" if self.bad_image else "")
        )


def _pair(rng: random.Random, n: int, partition: int = 0) -> tuple[Any, Any]:
    for _ in range(50):
        mu, ms = rng.choice(BUDGETS), rng.choice(BUDGETS)
        if n <= partition or scaled_value(mu, n, round_up=False) > 0 or scaled_value(ms, n, round_up=True) > 0:
            return mu, ms
    return 1, 0


#: fraction of soak cases (seeds >= SOAK_SEEDS) whose first change is a bad image, then a fix
BAD_IMAGE_FRACTION = 0.2
SOAK_SEEDS = 50_000
BAD_IMAGE_STAGES = 5


def random_case(seed: int, bad_image: str | None = None) -> Case:
    """``bad_image`` (crash, pull, probe; drawn for ``BAD_IMAGE_FRACTION`` of soak seeds): the
    rollout first goes to a bad image on every role, then to the drawn changes."""
    rng = random.Random(seed)
    strategy = SG if seed % 2 == 0 else ROLE
    if strategy == SG:
        replicas = rng.randint(1, 5)
        partition = rng.choice((0, 0, 0, 1, 2))
        partition = min(partition, replicas)
        mu, surge = _pair(rng, replicas, partition)
        workers = rng.choice((0, 1))
        start = ms_manifest(
            replicas=replicas,
            mu=mu,
            surge=surge,
            partition=partition or None,
            roles=[role("prefill", 1, workers), role("decode", 1, workers)],
        )
    else:
        replicas = rng.randint(1, 3)
        n = rng.randint(1, 3)
        mu, surge = _pair(rng, n)
        mu = mu if scaled_value(mu, n, round_up=False) <= n else n
        cap = rng.choice((None, None, "1"))
        start = ms_manifest(
            replicas=replicas,
            strategy=ROLE,
            annotations={"pulumi-lws.io/max-groups-in-flight": cap} if cap else None,
            roles=[role("prefill", n, rng.choice((0, 1)), maxUnavailable=mu, maxSurge=surge), role("decode", 1, 0)],
        )
    only = ("prefill",) if strategy == ROLE and rng.random() < 0.5 else None
    changes = [with_image(start, f"img:{v}", only) for v in range(2, 2 + rng.choice((1, 1, 2)))]
    slow = {str(g): float(rng.choice((4, 7, 11))) for g in range(6) if rng.random() < 0.2}
    case = Case(seed, strategy, start, changes, float(rng.choice((0, 1, 2, 3))), slow, rng.choice((0.0, 0.3, 0.6)))
    if bad_image is None and seed >= SOAK_SEEDS:
        bad_image = bad_image_draw(seed, BAD_IMAGE_FRACTION)
    if bad_image:
        case.changes.insert(0, with_image(start, BAD))
        case.bad_image = bad_image
    return case


def rerun_until_idle(h: Harness) -> int:
    prev = h.last.manifests if h.last else None
    for n in range(1, MAX_SAME_INSTANT_RUNS + 1):
        result, applied, _executed = h.up()
        h.check()
        waiting = {f"{k[0]}/{k[2]}" for k in h.cluster.applier.pending}
        replaced = [r for r in applied.replaced if r not in waiting]
        changed = applied.created or applied.updated or applied.deleted or replaced or result.stage.actions
        if not changed and result.manifests == prev:
            return n
        prev = result.manifests
    raise AssertionError(
        "re-running at the same instant never became a no-op:\n" + "\n".join(h.log[-MAX_SAME_INSTANT_RUNS:])
    )


def same_snapshot_is_deterministic(h: Harness) -> None:
    snap = h.snapshot()
    a, b = reconcile(h.spec, snap, WORKLOAD.options()), reconcile(h.spec, snap, WORKLOAD.options())
    assert a.manifests == b.manifests and a.stage.actions == b.stage.actions


def final_problems(h: Harness) -> list[str]:
    spec, groups = h.spec, h.groups()
    problems = []
    if len(groups) != spec.replicas or not all(g.available for g in groups.values()):
        problems.append(f"groups {[(o, g.available) for o, g in groups.items()]} != {spec.replicas} available")
    terminating = [p["metadata"]["name"] for p in h.cluster.list("Pod") if p["metadata"].get("deletionTimestamp")]
    if terminating:
        problems.append(f"terminating pods {terminating}")
    target = modelserving_revision(spec)
    if spec.strategy == SG:
        stale = [o for o, g in groups.items() if o >= spec.partition() and g.revision != target]
        if stale:
            problems.append(f"groups {stale} not on {target}")
    images = {
        c["image"]
        for p in h.cluster.list("Pod")
        for c in p["spec"]["containers"]
        if p["metadata"]["labels"].get("modelserving.volcano.sh/role") == "prefill"
        and int(p["metadata"]["labels"]["modelserving.volcano.sh/group-name"].rsplit("-", 1)[1])
        >= (spec.partition() if spec.strategy == SG else 0)
    }
    want = {c["image"] for c in spec.role("prefill").entry_template["spec"]["containers"]}
    eligible = [o for o in groups if o >= (spec.partition() if spec.strategy == SG else 0)]
    if eligible and images != want:
        problems.append(f"prefill images {images} != {want}")
    return problems


def run_case(case: Case, *, interval: float = 2.0, max_stages: int = 120) -> int:
    h = Harness.create(case.start, seed=case.seed, ready=case.ready, slow=case.slow)
    if case.bad_image:
        arm(h.cluster.kubelet.config, case.bad_image)
    rng = random.Random(1_000_003 * case.seed + 17)
    pending = list(case.changes)
    h.change_spec(pending.pop(0))
    crashes = on_bad = 0
    for stage in range(max_stages):
        on_bad = on_bad + 1 if BAD in json.dumps(h.desired) else 0
        if pending and (on_bad > BAD_IMAGE_STAGES or (stage > 0 and rng.random() < case.p_change)):
            h.change_spec(pending.pop(0))
        same_snapshot_is_deterministic(h)
        if rng.random() < case.p_crash:
            crashes += 1
            h.up(keep=rng.uniform(0.05, 0.95), run_actions=False)
            h.check()
        rerun_until_idle(h)
        if not pending and h.converged():
            problems = final_problems(h)
            assert not problems, f"{case.describe()}: {problems}\n" + "\n".join(h.log[-6:])
            return crashes
        if pending and h.converged():
            h.change_spec(pending.pop(0))
            continue
        h.advance(interval)
    raise AssertionError(
        f"{case.describe()}: not converged after {max_stages} stages (blocker: {h.last.stage.blocker})\n"
        + "\n".join(h.log[-8:])
    )


FAST = range(40)
CHUNK = 10
SOAK = int(2000 * float(os.environ.get("LWS_SOAK") or 0))


@pytest.mark.parametrize("first", range(FAST.start, FAST.stop, CHUNK), ids=lambda s: f"seeds{s}-{s + CHUNK - 1}")
def test_crash_rerun_and_change_at_every_stage(first: int) -> None:
    crashes = sum(run_case(random_case(s)) for s in range(first, first + CHUNK))
    assert crashes > 0


@pytest.mark.parametrize("fault", ["crash", "pull", "probe"])
def test_bad_image_then_a_fix_with_crashes_at_every_stage(fault: str) -> None:
    """Issue 24: a bad image first, the fix after a few stages, crashes and re-runs at every
    stage, both strategies: converges with no person."""
    for seed in range(4):
        case = random_case(seed + 4 * ("crash", "pull", "probe").index(fault), bad_image=fault)
        case.p_crash = max(case.p_crash, 0.3)
        run_case(case)


def test_soak_cases_include_a_bad_image_in_a_fraction() -> None:
    cases = [random_case(s) for s in range(SOAK_SEEDS, SOAK_SEEDS + 200)]
    bad = [c for c in cases if c.bad_image]
    assert 0.5 * BAD_IMAGE_FRACTION * 200 < len(bad) < 2 * BAD_IMAGE_FRACTION * 200
    assert not any(random_case(s).bad_image for s in FAST)


def test_fast_seeds_cover_both_strategies_partition_surge_and_crashes() -> None:
    cases = [random_case(s) for s in FAST]
    assert {c.strategy for c in cases} == {SG, ROLE}
    assert any(c.start["spec"]["rolloutStrategy"].get("rollingUpdateConfiguration", {}).get("partition") for c in cases)
    assert any(
        scaled_value(
            c.start["spec"]["rolloutStrategy"].get("rollingUpdateConfiguration", {}).get("maxSurge") or 0,
            5,
            round_up=True,
        )
        for c in cases
        if c.strategy == SG
    )
    assert any(c.p_crash > 0 for c in cases) and any(len(c.changes) > 1 for c in cases)


@pytest.mark.slow
@pytest.mark.skipif(SOAK == 0, reason="soak: set LWS_SOAK=1 (make soak) for 2,000 ModelServing scenarios")
@pytest.mark.parametrize("chunk", range(20))
def test_soak(chunk: int) -> None:
    per = max(1, SOAK // 20)
    start = 50_000 + chunk * per
    for seed in range(start, start + per):
        run_case(random_case(seed))


# ---- hypothesis: the simulator, from a healthy start ------------------------------------------------------
@st.composite
def rollouts(draw):
    strategy = draw(st.sampled_from((SG, ROLE)))
    if strategy == SG:
        replicas = draw(st.integers(1, 5))
        partition = draw(st.integers(0, replicas))
        mu, surge = draw(st.integers(0, 3)), draw(st.integers(0, 2))
        if replicas > partition and mu == 0 and surge == 0:
            mu = 1
        old = ms_manifest(
            replicas=replicas,
            mu=mu,
            surge=surge,
            partition=partition or None,
            roles=[role("prefill", 1, draw(st.integers(0, 1))), role("decode")],
        )
    else:
        n = draw(st.integers(1, 3))
        mu, surge = draw(st.integers(0, n)), draw(st.integers(0, 2))
        if mu == 0 and surge == 0:
            surge = 1
        old = ms_manifest(
            replicas=draw(st.integers(1, 3)),
            strategy=ROLE,
            roles=[role("prefill", n, maxUnavailable=mu, maxSurge=surge), role("decode")],
        )
    delays = draw(st.dictionaries(st.sampled_from([str(g) for g in range(7)]), st.integers(0, 12), max_size=3))
    never = draw(st.one_of(st.none(), st.sampled_from([str(g) for g in range(7)])))
    return old, delays, never, draw(st.sampled_from((0.0, 1.0, 3.0)))


def check_rollout(old, delays, never, ready) -> None:
    overrides = [Override(group=never, after=0.5, never_ready=True)] if never is not None else []
    overrides += [Override(group=g, ready=float(s)) for g, s in delays.items()]
    new = with_image(old, "img:2")
    sc = scenario(old, new, kubelet=kubelet(ready, overrides=overrides), max_time=150, require_converged=False)
    result, bounds = run(sc)
    assert not result.trace.violations and not bounds.violations, (result.trace.violations, bounds.violations)
    if result.trace.converged:
        return
    last = result.stages[-1]
    if last.blocker is not None:  # ended on a named blocker
        assert last.blocker.code and last.blocker.message
        return
    spec = parse(new)
    groups = read(result.cluster, spec)
    target = modelserving_revision(spec)
    # the stage is complete with the partition respected: protected groups stay, the rest is updated
    assert last.complete and spec.strategy == SG and spec.partition() > 0, last.summary()
    assert len(groups) == spec.replicas and all(g.available for g in groups.values())
    assert all(g.revision == target for o, g in groups.items() if o >= spec.partition())
    assert all(g.revision != target for o, g in groups.items() if o < spec.partition())


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rollouts())
def test_property_bounds_hold_and_the_rollout_converges_or_names_its_blocker(case) -> None:
    check_rollout(*case)


@pytest.mark.slow
@settings(
    max_examples=int(200 * max(float(os.environ.get("LWS_SOAK") or 0), 0.25)),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(rollouts())
def test_property_soak(case) -> None:
    check_rollout(*case)
