"""The surge ceiling counts what old children *run* (rollout/apply.py, ``old_running``), not only
what they declare: an old child whose LWS controller keeps unready surge groups while it scales
down (upstream ``calculateRollingUpdateReplicas``) holds the new revision's raise until those
groups are gone. Regression of soak seeds 70343 / 70376 (A -> B -> C with B never ready); and of
the LWS_SOAK=2 seeds: a raise applied without the drain beside it by a partial apply (71302,
71996); and 71189: the steady branch after an early full drain keeps the barrier."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from support.ds_helpers import Harness, ds_manifest, parse, role, with_image

from pulumi_lws.disaggregatedset.planner import RollingUpdateConfig
from pulumi_lws.disaggregatedset.reconcile import reconcile
from pulumi_lws.disaggregatedset.revision import compute_revision
from pulumi_lws.disaggregatedset.rollout.apply import (
    RoleState,
    apply_step,
    kept_running,
    old_running,
)
from pulumi_lws.disaggregatedset.rollout.observation import (
    ChildObservation,
    RevisionObservation,
    RoleTarget,
    SliceObservation,
)
from pulumi_lws.disaggregatedset.rollout.stage_planner import plan_slice

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "e2e"))
CFG = RollingUpdateConfig(2, 1)


@pytest.mark.parametrize(
    "child, after, running",
    [
        (ChildObservation(3, 3), 3, 3),  # untouched, nothing held
        (ChildObservation(1, 0, live=2), 1, 2),  # a held surge group still runs
        (ChildObservation(3, 3), 1, 1),  # fully ready: the drain takes effect at once
        (ChildObservation(3, 1, live=3), 2, 3),  # unready groups may be kept while scaling down
        (ChildObservation(2, 0, live=2), 0, 0),  # drained to 0: the leader StatefulSet goes to 0
        (ChildObservation(2, 2), 2, 2),  # live omitted reads as replicas
    ],
)
def test_kept_running(child, after, running) -> None:
    assert kept_running(child, after) == running


def test_old_running_distributes_the_drain_newest_first() -> None:
    b, a = ChildObservation(1, 0, live=2), ChildObservation(3, 3)
    role = RoleState("decode", 5, 4, 0, 3, CFG, 3, 0, old_children=(b, a))
    assert old_running(role, 4) == 5  # B keeps its surge group
    assert old_running(role, 3) == 3  # B drained to 0, A untouched
    assert old_running(role, 2) == 2  # B at 0, A drained by 1 (fully ready)


def test_the_raise_waits_for_held_groups() -> None:
    """decode: A 3 ready + B declared 1 but running 2 (unready, held) -> target C: 5 running is the
    ceiling 3 + 2 already, so C's first decode raise waits; the declared count alone (4) would let it."""
    b, a = ChildObservation(1, 0, live=2), ChildObservation(3, 3)
    role = RoleState("decode", 5, 4, 0, 3, CFG, 3, 0, old_children=(b, a))
    assert apply_step([role], (4,), (1,)).new == (0,)
    declared_only = RoleState("decode", 5, 4, 0, 3, CFG, 3, 0)
    assert apply_step([declared_only], (4,), (1,)).new == (1,)


def _abc(b_decode_live: int | None) -> SliceObservation:
    return SliceObservation(
        0,
        (
            RevisionObservation("cccccccc", {"prefill": ChildObservation(0, 0), "decode": ChildObservation(0, 0)}),
            RevisionObservation(
                "bbbbbbbb",
                {"prefill": ChildObservation(0, 0, 1), "decode": ChildObservation(1, 0, 2, live=b_decode_live)},
            ),
            RevisionObservation(
                "aaaaaaaa", {"prefill": ChildObservation(2, 2, 2), "decode": ChildObservation(3, 3, 3)}
            ),
        ),
    )


def test_stage_planner_reads_live_from_the_observation() -> None:
    """Upstream's step is kept ([2,4]|[1,1], scale-up); only decode's raise waits, with a note."""
    roles = [RoleTarget("prefill", 2, CFG), RoleTarget("decode", 3, CFG)]
    held = plan_slice(_abc(2), "cccccccc", roles)
    assert (held.step.old, held.step.new, held.step.branch) == ((2, 4), (1, 1), "scale-up")
    assert [(line.role, line.old_after, line.new_after) for line in held.roles] == [("prefill", 2, 1), ("decode", 4, 0)]
    assert held.notes == ("slice 0: raise of decode waits for the old replicas to drain (surge ceiling)",)
    free = plan_slice(_abc(None), "cccccccc", roles)  # nothing held: upstream's step as is
    assert [(line.role, line.old_after, line.new_after) for line in free.roles] == [("prefill", 2, 1), ("decode", 4, 1)]


def test_a_stage_held_only_by_running_old_groups_is_not_a_deadlock() -> None:
    """Every role's raise held only by surge groups an unready B still runs (they may never go: B
    is why C exists): rather than wait forever, the raise is applied on declared counts, flagged
    ``ceiling_relaxed`` with a note — the one other place the running ceiling can be exceeded."""
    obs = SliceObservation(
        0,
        (
            RevisionObservation("cccccccc", {"prefill": ChildObservation(0, 0), "decode": ChildObservation(0, 0)}),
            RevisionObservation(
                "bbbbbbbb", {"prefill": ChildObservation(1, 0, 2, live=2), "decode": ChildObservation(1, 0, 2, live=2)}
            ),
            RevisionObservation(
                "aaaaaaaa", {"prefill": ChildObservation(2, 2, 2), "decode": ChildObservation(3, 3, 3)}
            ),
        ),
    )
    roles = [RoleTarget("prefill", 2, CFG), RoleTarget("decode", 3, CFG)]
    p = plan_slice(obs, "cccccccc", roles)
    assert (p.step.old, p.step.new, p.step.branch) == ((3, 4), (1, 1), "scale-up")
    assert [(line.role, line.old_after, line.new_after) for line in p.roles] == [("prefill", 3, 1), ("decode", 4, 1)]
    assert p.ceiling_relaxed and p.blocker is None
    assert any("applied on declared counts" in n for n in p.notes)


def test_steady_after_an_early_full_drain_keeps_the_barrier() -> None:
    """Seed 71189: maxUnavailable drains every old replica while the new revision is below its
    targets; the steady branch then holds its raises until every role's new replicas are ready
    (rollout/blockers.py ``steady_unready``) instead of jumping to the targets (reconcileSimple),
    and the old children are still deleted at once (the next rollout's baseline: seed 70471)."""
    from support.crash_suite import DISAGGREGATEDSET as DS_CASES

    DS_CASES.run(DS_CASES.random_case(71189))
    DS_CASES.run(DS_CASES.random_case(70471))


def test_a_raise_depends_on_the_drain_beside_it() -> None:
    """The target child's leader workload depends on each declared old child's of the same role,
    so a crash part-way through the apply never raises without the drain (soak seeds 71302/71996:
    maxSurge 0 decode at 3|1 after a partial apply)."""
    old = ds_manifest(role("prefill", 3, 1), role("decode", 2, 1, surge=0, unavailable=1))
    h = Harness.create(old)
    new = with_image(old, "img:2")
    h.change_spec(new)
    result = reconcile(h.spec, h.snapshot())
    a, b = compute_revision(parse(old)), compute_revision(h.spec)
    for r in ("prefill", "decode"):
        assert ("StatefulSet", f"pd-0-{a}-{r}") in result.dependencies[("StatefulSet", f"pd-0-{b}-{r}")]
    keys = [(m["kind"], m["metadata"]["name"]) for m in result.manifests]
    assert keys.index(("StatefulSet", f"pd-0-{a}-decode")) < keys.index(("StatefulSet", f"pd-0-{b}-decode"))


@pytest.mark.parametrize("seed", [70343, 70376, 71302, 71996])
def test_soak_regression_seeds(seed: int) -> None:
    from support.crash_suite import DISAGGREGATEDSET as DS_CASES

    DS_CASES.run(DS_CASES.random_case(seed))
