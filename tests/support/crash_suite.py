"""The crash / re-run loop every API's random cases go through, and the per-API case table
(tests/reliability/test_crash_every_api.py runs it; docs/reliability.md "Crash at every stage").

One case (an API's ``random_case(seed)``) starts converged and rolls to its first change. At every
stage, for every API alike:

(a) planning twice on one snapshot is identical (the API's ``Workload.reconcile``, the product's);
(b) with the case's crash probability the stage is first applied only partly — a random subset of
    its object changes, closed under the dependencies as Pulumi's ``dependsOn`` guarantees, and no
    action; where the API's row says ``crash_in_actions`` (LeaderWorkerSet), 30% of the crashes
    instead register everything and run only a prefix of the actions — then it is re-run;
(c) ``pulumi up`` is re-run at the same instant until a run changes nothing (same manifests,
    nothing created/updated/deleted, no action; at most ``max_same_instant_runs``);
(d) with the case's change probability the spec changes again mid-rollout; a bad image (issue 24)
    is replaced by the next change after ``BAD_IMAGE_STAGES`` stages on it.

After every run and every simulated second the harness's own invariants hold (``h.check()``: the
budget bounds per role of docs/reliability.md, read from the cluster); once every change is in
and the rollout converged, ``final_problems`` is empty (nothing lost, nothing leaked). An API's
``after_converged`` (DisaggregatedSet: a scale outside the rollout) may start one more phase,
run the same way. Every draw comes from ``random.Random(1_000_003 * seed + 17)`` in the order
above, so a seed replays exactly: ``API.run(API.random_case(seed))``.

Each harness is one ``pulumi up`` through :func:`pulumi_lws.core.contract.driver.cycle` and exposes
``WORKLOAD``, ``spec``, ``options``, ``snapshot()``, ``desired``, ``last``, ``log``, ``reconciles``,
``up(keep, run_actions)``, ``change_spec``, ``check``, ``advance``, ``converged`` and ``cluster``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fault_helpers import BAD

from support import ds_crash_cases, ms_crash_cases
from support import reliability_helpers as lws_cases

#: stages spent on a bad image before the next (fixing) change is applied
BAD_IMAGE_STAGES = 5


@dataclass
class CaseResult:
    reconciles: int
    stages: int
    crashes: int
    changes: int  # mid-rollout spec changes (d), the first change not counted
    reruns: list[int]  # runs (c) needed at each stage
    action_crashes: int = 0  # crashes (b) that ran only a prefix of a stage's (non-empty) actions


@dataclass(frozen=True)
class Api:
    """One API's row of the suite: where its cases come from and what it checks."""

    kind: str
    random_case: Callable[..., Any]  # (seed, bad_image=None) -> case
    create: Callable[[Any], Any]  # case -> the converged harness
    final_problems: Callable[[Any], list[str]]  # harness -> what is wrong once converged
    fast: range  # the seeds of the normal suite
    chunk: int  # seeds per test of the normal suite
    bad_image_seeds: int  # seeds per fault kind of the bad-image test
    soak_seeds: int  # the first soak seed (soak seeds may draw a bad image)
    soak_per_unit: int  # soak cases per unit of LWS_SOAK
    soak_chunks: int
    bad_image_fraction: float
    max_same_instant_runs: int = 4
    max_stages: int = 120
    crash_in_actions: bool = False
    after_converged: Callable[[Any, Any], dict[str, Any] | None] | None = None

    def run(self, case: Any, *, interval: float = 2.0) -> CaseResult:
        return run_case(self, case, interval=interval)

    def __str__(self) -> str:  # the test ids
        return self.kind


def rerun_until_idle(h: Any, limit: int) -> int:
    """(c) Re-run ``pulumi up`` at the same instant until a run changes nothing; the runs needed.

    Runs before it may legitimately act on what the controllers did with the previous run at the
    same instant (Hash: the Deployment creates gated leaders, the next run admits them; a
    DisaggregatedSet step whose new replicas are already ready is followed by the next at once)."""
    prev = h.last.manifests if h.last else None
    for n in range(1, limit + 1):
        result, applied, _executed = h.up()
        h.check()
        waiting = {f"{k[0]}/{k[2]}" for k in h.cluster.applier.pending}
        replaced = [r for r in applied.replaced if r not in waiting]  # delete-before-replace waiting: Pulumi waits too
        changed = applied.created or applied.updated or applied.deleted or replaced or result.stage.actions
        if not changed and result.manifests == prev:
            return n
        prev = result.manifests
    raise AssertionError(
        f"re-running at the same instant never became a no-op after {limit} runs:\n" + "\n".join(h.log[-limit:])
    )


def planning_is_a_function_of_the_snapshot(h: Any) -> None:
    """(a) Planning twice on one snapshot gives identical manifests and actions (pure, no apply)."""
    snap = h.snapshot()
    a, b = (h.WORKLOAD.reconcile(h.spec, snap, h.options) for _ in range(2))
    assert a.manifests == b.manifests and a.stage.actions == b.stage.actions, (
        "reconcile is not a function of the snapshot"
    )


def crash(api: Api, h: Any, rng: random.Random) -> bool:
    """(b) One crashed ``pulumi up`` (module doc); True when it crashed part-way through actions."""
    if not api.crash_in_actions or rng.random() < 0.7:
        h.up(keep=rng.uniform(0.05, 0.95), run_actions=False)
        return False
    result, _, _ = h.up(run_actions=False)  # registration done, only a prefix of the actions ran
    acts = list(result.stage.actions)
    if acts:
        h.cluster.execute(h.WORKLOAD.identity(h.spec)[0], acts[: rng.randrange(len(acts))])
    return bool(acts)


def run_case(api: Api, case: Any, *, interval: float = 2.0) -> CaseResult:
    """Roll ``case`` out, crashing, re-running and changing the spec at random stages (module doc)."""
    h = api.create(case)
    rng = random.Random(1_000_003 * case.seed + 17)
    pending = list(case.changes)
    h.change_spec(pending.pop(0))
    crashes = changes = on_bad = action_crashes = 0
    reruns: list[int] = []
    phase_done = False  # after_converged ran (at most once)
    for stage in range(api.max_stages):
        on_bad = on_bad + 1 if BAD in json.dumps(h.desired) else 0
        if pending and (on_bad > BAD_IMAGE_STAGES or (stage > 0 and rng.random() < case.p_change)):  # (d)
            h.change_spec(pending.pop(0))
            changes += 1
        planning_is_a_function_of_the_snapshot(h)  # (a)
        if rng.random() < case.p_crash:  # (b)
            crashes += 1
            action_crashes += crash(api, h, rng)
            h.check()
        reruns.append(rerun_until_idle(h, api.max_same_instant_runs))  # (c)
        if not pending and h.converged():
            problems = api.final_problems(h)
            assert not problems, f"{case.describe()}: {problems}\n" + "\n".join(h.log[-6:])
            edited = None if phase_done or api.after_converged is None else api.after_converged(case, h)
            phase_done = True
            if edited is None:
                return CaseResult(h.reconciles, stage + 1, crashes, changes, reruns, action_crashes)
            h.change_spec(edited)
            continue
        if pending and h.converged():  # finished before the drawn change: change now
            h.change_spec(pending.pop(0))
            changes += 1
            continue
        h.advance(interval)
    blocker = h.last.stage.blocker if h.last else None
    raise AssertionError(
        f"{case.describe()}: not converged after {api.max_stages} stages with unlimited capacity "
        f"(blocker: {blocker})\n" + "\n".join(h.log[-8:])
    )


def _lws_create(case: Any) -> Any:
    return lws_cases.Harness.create(
        case.start,
        seed=case.seed,
        ready=case.ready_seconds,
        slow=case.slow_groups,
        options=case.options,
        bad_image=case.bad_image,
    )


LEADERWORKERSET = Api(
    kind="LeaderWorkerSet",
    random_case=lws_cases.random_case,
    create=_lws_create,
    final_problems=lws_cases.final_state_problems,
    fast=range(160),  # 40 per policy (policy = POLICIES[seed % 4])
    chunk=10,
    bad_image_seeds=4,
    soak_seeds=lws_cases.SOAK_SEEDS,
    soak_per_unit=5000,
    soak_chunks=50,
    bad_image_fraction=lws_cases.BAD_IMAGE_FRACTION,
    crash_in_actions=True,
)
MODELSERVING = Api(
    kind="ModelServing",
    random_case=ms_crash_cases.random_case,
    create=ms_crash_cases.create,
    final_problems=ms_crash_cases.final_problems,
    fast=range(40),  # both strategies (SG on even seeds)
    chunk=10,
    bad_image_seeds=4,
    soak_seeds=ms_crash_cases.SOAK_SEEDS,
    soak_per_unit=2000,
    soak_chunks=20,
    bad_image_fraction=ms_crash_cases.BAD_IMAGE_FRACTION,
)
DISAGGREGATEDSET = Api(
    kind="DisaggregatedSet",
    random_case=ds_crash_cases.random_case,
    create=ds_crash_cases.create,
    final_problems=ds_crash_cases.final_problems,
    fast=range(16),
    chunk=8,
    bad_image_seeds=3,
    soak_seeds=ds_crash_cases.SOAK_SEEDS,
    soak_per_unit=1000,
    soak_chunks=20,
    bad_image_fraction=ds_crash_cases.BAD_IMAGE_FRACTION,
    # a stage whose new replicas are already ready is followed by the planner's next step at once:
    # a whole run of steps may pass in one instant (bounded by the planner's step count)
    max_same_instant_runs=40,
    max_stages=150,
    after_converged=ds_crash_cases.scale_outside_rollout,
)
APIS = (LEADERWORKERSET, MODELSERVING, DISAGGREGATEDSET)
