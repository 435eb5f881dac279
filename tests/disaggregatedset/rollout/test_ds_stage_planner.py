"""The DisaggregatedSet stage planner, driven against a tiny fake cluster (children's spec.replicas
and ready counts; replicas become ready a few at a time), and its Stage adapter.

Rules checked (docs/disaggregatedset.md, "Rollout decisions"): upstream's planner decisions; the
barrier; the availability floor on READY replicas and the surge ceiling on declared replicas at
every observed state; the prefill:decode ratio of ready replicas; exact newest-first drain
(A -> B -> C); removed roles and removed slices cleaned up; slices never roll; the progress
deadline; hypothesis bounds and termination.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pulumi_lws.disaggregatedset.planner import RollingUpdateConfig, compute_all_steps
from pulumi_lws.disaggregatedset.rollout.observation import (
    ChildObservation,
    RevisionObservation,
    RoleTarget,
    SliceObservation,
)
from pulumi_lws.disaggregatedset.rollout.predict import predict_remaining
from pulumi_lws.disaggregatedset.rollout.slice_plan import BARRIER, RAISE_FIRST, STEADY, DisaggregatedPlan
from pulumi_lws.disaggregatedset.rollout.stage import to_stage
from pulumi_lws.disaggregatedset.rollout.stage_planner import (
    PROGRESS_DEADLINE_EXCEEDED,
    WAITING,
    plan,
)

A, B, C = "aaaaaaaa", "bbbbbbbb", "cccccccc"


@dataclass
class Child:
    replicas: int
    ready: int
    initial: int | None = None
    replaces: str | None = None  # the replaces-revisions annotation the last stage declared


@dataclass
class Cluster:
    """slice -> [(revision, {role: Child})], newest first."""

    slices: dict[int, list[tuple[str, dict[str, Child]]]] = field(default_factory=dict)

    @classmethod
    def converged(cls, revision: str, replicas: dict[str, int], slices: int = 1) -> Cluster:
        return cls({s: [(revision, {r: Child(n, n) for r, n in replicas.items()})] for s in range(slices)})

    def observe(self) -> tuple[SliceObservation, ...]:
        return tuple(
            SliceObservation(
                s,
                tuple(
                    RevisionObservation(
                        rev,
                        {
                            r: ChildObservation(c.replicas, c.ready, c.initial, replaces=c.replaces)
                            for r, c in kids.items()
                        },
                    )
                    for rev, kids in revs
                ),
            )
            for s, revs in sorted(self.slices.items())
            if revs
        )

    def apply(self, p: DisaggregatedPlan) -> None:
        for c in p.children:
            revs = self.slices.setdefault(c.slice, [])
            entry = next((kids for rev, kids in revs if rev == c.revision), None)
            if not c.declared:
                if entry is not None:
                    entry.pop(c.role, None)
                continue
            if entry is None:
                entry = {}
                revs.insert(0, (c.revision, entry))  # a created revision is the newest
            child = entry.setdefault(c.role, Child(0, 0))
            child.replicas = c.replicas
            child.ready = min(child.ready, c.replicas)  # scale-down removes replicas at once
            child.initial = c.initial_replicas
            child.replaces = c.replaces
        for s in self.slices:
            self.slices[s] = [(rev, kids) for rev, kids in self.slices[s] if kids]

    def tick(self, n: int | None = 1) -> bool:
        """``n`` unready replicas of every child become ready (None: all); False when none was unready."""
        moved = False
        for revs in self.slices.values():
            for _, kids in revs:
                for c in kids.values():
                    if c.ready < c.replicas:
                        c.ready = c.replicas if n is None else min(c.replicas, c.ready + n)
                        moved = True
        return moved

    def role_counts(self, slice_: int, role: str, target: str) -> tuple[int, int, int, int]:
        """(old declared, new declared, old ready, new ready)."""
        od = nd = orr = nr = 0
        for rev, kids in self.slices.get(slice_, []):
            c = kids.get(role)
            if c is None:
                continue
            if rev == target:
                nd, nr = nd + c.replicas, nr + c.ready
            else:
                od, orr = od + c.replicas, orr + c.ready
        return od, nd, orr, nr


def roles_of(replicas: dict[str, int], surge: int = 1, unavailable: int = 0) -> list[RoleTarget]:
    return [RoleTarget(r, n, RollingUpdateConfig(surge, unavailable)) for r, n in replicas.items()]


def barrier_ok(obs: tuple[SliceObservation, ...], target: str, slice_: int) -> bool:
    o = next(o for o in obs if o.slice == slice_)
    rev = o.revision(target)
    return rev is None or all(c.ready >= c.replicas for c in rev.children.values())


def drive(
    cluster: Cluster,
    target: str,
    roles: list[RoleTarget],
    slices: int = 1,
    ready_per_tick: int | None = 1,
    check=None,
    max_stages: int = 400,
) -> list[DisaggregatedPlan]:
    """Reconcile, apply, let replicas become ready; repeat until complete. ``check(cluster)`` runs
    at every observed state."""
    plans = []
    for _ in range(max_stages):
        obs = cluster.observe()
        p = plan(obs, slices, target, roles)
        for s in p.slices:
            moved = any(line.new_after > line.new_before or line.old_after < line.old_before for line in s.roles)
            if moved and any(o.slice == s.slice for o in obs):  # steady too (early full drain)
                assert barrier_ok(obs, target, s.slice), "a role advanced before the barrier"
        if p.complete and not p.changed:
            return plans
        if p.changed:
            plans.append(p)
            cluster.apply(p)
            if check:
                check(cluster)
        elif not cluster.tick(ready_per_tick):
            raise AssertionError(f"stalled: {p.blocker}")
        elif check:
            check(cluster)
    raise AssertionError("did not converge")


# ---- the example: 6 prefill / 2 decode, maxSurge 1 --------------------------------------------

SIX_TWO = {"prefill": 6, "decode": 2}


@pytest.mark.parametrize("per_tick", [1, None])
def test_six_two_roll_keeps_floor_ceiling_ratio_and_barrier(per_tick) -> None:
    cluster = Cluster.converged(A, SIX_TWO)
    roles = roles_of(SIX_TWO, surge=1)
    seen = []

    def check(cl: Cluster) -> None:
        ready = {}
        for role, t in SIX_TWO.items():
            od, nd, orr, nr = cl.role_counts(0, role, B)
            assert orr + nr >= t - 0, (role, od, nd, orr, nr)  # floor on READY replicas
            assert od + nd <= t + 1, (role, od, nd)  # ceiling on declared (live) replicas
            ready[role] = orr + nr
        assert abs(ready["prefill"] - 3 * ready["decode"]) <= 3, ready  # within one step of 3:1
        seen.append(tuple(cl.role_counts(0, r, B)[:2] for r in SIX_TWO))

    plans = drive(cluster, B, roles, ready_per_tick=per_tick, check=check)
    # the applied stages are upstream's sequence exactly (no step was split or held)
    upstream = compute_all_steps((6, 2), (6, 2), (RollingUpdateConfig(1, 0),) * 2)
    applied = [tuple((line.old_after, line.new_after) for line in p.slices[0].roles) for p in plans]
    assert applied == [tuple(zip(s.old, s.new)) for s in upstream[1:]]
    assert cluster.slices[0] == [(B, {"prefill": Child(6, 6), "decode": Child(2, 2)})]  # A deleted, B clean


def test_first_stage_creates_the_new_revision_and_stamps_initial_replicas() -> None:
    cluster = Cluster.converged(A, SIX_TWO)
    p = plan(cluster.observe(), 1, B, roles_of(SIX_TWO))
    by_key = {c.key: c for c in p.children}
    assert by_key["0/prefill/aaaaaaaa"].initial_replicas == 6 and by_key["0/decode/aaaaaaaa"].initial_replicas == 2
    assert by_key["0/prefill/bbbbbbbb"].created and by_key["0/prefill/bbbbbbbb"].replicas == 1  # fused first step
    assert by_key["0/decode/bbbbbbbb"].replicas == 1 and by_key["0/decode/bbbbbbbb"].initial_replicas is None
    assert p.slices[0].branch == "scale-up"


def test_barrier_blocks_and_names_the_role() -> None:
    cluster = Cluster.converged(A, SIX_TWO)
    cluster.apply(plan(cluster.observe(), 1, B, roles_of(SIX_TWO)))
    cluster.slices[0][0][1]["prefill"].ready = 1  # prefill ready, decode not
    p = plan(cluster.observe(), 1, B, roles_of(SIX_TWO))
    assert not p.changed and p.slices[0].branch == BARRIER and not p.slices[0].stable
    assert p.blocker.code == WAITING
    assert p.blocker.message == "waiting for role decode of revision bbbbbbbb to have 1/1 ready replicas (0 ready)"
    assert p.blocker.groups == ("0/decode/bbbbbbbb",)


def test_progress_deadline_blocker_keeps_old_capacity() -> None:
    cluster = Cluster.converged(A, SIX_TWO)
    cluster.apply(plan(cluster.observe(), 1, B, roles_of(SIX_TWO)))
    kw = {"progress_deadline_seconds": 600, "new_scaled_at": {0: 1000.0}}
    early = plan(cluster.observe(), 1, B, roles_of(SIX_TWO), now=1500.0, **kw)
    assert early.blocker.code == WAITING
    late = plan(cluster.observe(), 1, B, roles_of(SIX_TWO), now=1700.0, **kw)
    assert late.blocker.code == PROGRESS_DEADLINE_EXCEEDED
    assert "700s after its last scale-up" in late.blocker.message and "role prefill" in late.blocker.message
    assert not late.changed
    assert {c.key: c.replicas for c in late.declared} == {
        "0/prefill/bbbbbbbb": 1,
        "0/decode/bbbbbbbb": 1,
        "0/prefill/aaaaaaaa": 6,
        "0/decode/aaaaaaaa": 2,
    }
    stage = to_stage(late)
    assert stage.blocker.code == PROGRESS_DEADLINE_EXCEEDED and not stage.complete


# ---- beat upstream: the availability floor on READY replicas ---------------------------------


def test_force_drain_waits_for_the_ready_replicas_it_relies_on() -> None:
    # addenda §4.6: 4/2, maxSurge 0, maxUnavailable 1: upstream goes [1,1]|[2,1] -> [0,0]|[3,2] at
    # once (ready prefill 2 < 4 - 1). Here the raise comes first, the drain once it is ready.
    roles = [RoleTarget("prefill", 4, RollingUpdateConfig(0, 1)), RoleTarget("decode", 2, RollingUpdateConfig(0, 1))]
    cluster = Cluster(
        {
            0: [
                (B, {"prefill": Child(2, 2), "decode": Child(1, 1)}),
                (A, {"prefill": Child(1, 1, 4), "decode": Child(1, 1, 2)}),
            ]
        }
    )
    p = plan(cluster.observe(), 1, B, roles)
    s = p.slices[0]
    assert s.branch == "force-drain" and (s.step.old, s.step.new) == ((0, 0), (3, 2))
    assert [(line.old_after, line.new_after) for line in s.roles] == [(1, 3), (1, 1)]
    assert s.applied.held_drain == ("prefill", "decode") and s.applied.held_raise == ("decode",)
    assert any("availability floor" in n for n in to_stage(p).notes)

    def check(cl: Cluster) -> None:
        for role, t in (("prefill", 4), ("decode", 2)):
            od, nd, orr, nr = cl.role_counts(0, role, B)
            assert orr + nr >= t - 1 and od + nd <= t

    check(cluster)
    drive(cluster, B, roles, check=check)


def test_upstream_surge_overshoot_is_not_applied() -> None:
    # planner quirk (test_ds_conformance): a force drain whose drain orphan prevention undoes asks
    # [1,1]|[0,1] -> [1,1]|[1,1] (role a: 1 + 1 > 1 + 0 = target + maxSurge). The ceiling holds
    # it; new replicas are raised first within the ceiling instead (role b, one batch).
    roles = [RoleTarget(n, t, RollingUpdateConfig(0, 1)) for n, t in (("a", 1), ("b", 3))]
    cluster = Cluster({0: [(B, {"a": Child(0, 0), "b": Child(1, 1)}), (A, {"a": Child(1, 1, 1), "b": Child(1, 1, 3)})]})
    p = plan(cluster.observe(), 1, B, roles)
    s = p.slices[0]
    assert (s.step.old, s.step.new, s.step.branch) == ((1, 1), (1, 1), "force-drain")
    assert s.branch == RAISE_FIRST and not s.ceiling_relaxed
    assert [line.cell for line in s.roles] == ["1|0", "1|2"]
    assert any("raised first" in n for n in p.notes)

    def check(cl: Cluster) -> None:
        for role, t in (("a", 1), ("b", 3)):
            od, nd, orr, nr = cl.role_counts(0, role, B)
            assert orr + nr >= t - 1 and od + nd <= t

    drive(Cluster.converged(A, {"a": 1, "b": 3}), B, roles, check=check)


def test_growing_role_keeps_its_ready_capacity() -> None:
    # upstream drains a growing role (initialOld 1 < target 2, maxUnavailable 0) to 0 before any
    # new replica exists: [1,1]|[0,0] -> [0,0]|[0,0]; here it keeps its ready replica
    roles = [RoleTarget("r0", 2, RollingUpdateConfig(2, 0)), RoleTarget("r1", 1, RollingUpdateConfig(0, 1))]
    assert [s.as_dict() for s in compute_all_steps((1, 1), (2, 1), tuple(r.config for r in roles))][1] == {
        "old": [0, 0],
        "new": [0, 0],
    }

    def check(cl: Cluster) -> None:
        od, nd, orr, nr = cl.role_counts(0, "r0", B)
        assert orr + nr >= 1 and od + nd <= 4

    drive(Cluster.converged(A, {"r0": 1, "r1": 1}), B, roles, check=check)


# ---- beat upstream: exact newest-first drain (A -> B -> C) -----------------------------------


def test_a_b_c_never_drains_an_old_revision_further_than_asked() -> None:
    roles_b = roles_of(SIX_TWO)
    cluster = Cluster.converged(A, SIX_TWO)
    for _ in range(2):  # A -> B: two stages ([6,2]|[1,1] then [5,2]|[1,1])
        p = plan(cluster.observe(), 1, B, roles_b)
        cluster.apply(p)
        cluster.tick(None)
    assert {r: cluster.role_counts(0, r, B)[:2] for r in SIX_TWO} == {"prefill": (5, 1), "decode": (2, 1)}
    baselines = set()
    for _ in range(100):  # B -> C mid-rollout
        obs = cluster.observe()
        p = plan(obs, 1, C, roles_b)
        s = p.slices[0]
        if p.complete and not p.changed:
            break
        if s.step is not None:
            before = {(rev.revision, role): c.replicas for rev in obs[0].revisions for role, c in rev.children.items()}
            for i, line in enumerate(s.roles):
                asked_budget = line.old_before - s.applied.old[i]
                drained = sum(
                    before[(c.revision, c.role)] - c.replicas
                    for c in s.children
                    if c.role == line.role and c.revision != C and (c.revision, c.role) in before
                )
                assert drained == asked_budget, (line, drained, asked_budget)  # exactly the budget
                assert s.applied.old[i] >= s.step.old[i]
            baselines.add(tuple(line.initial_old for line in s.roles))
        cluster.apply(p)
        cluster.tick(None)
    else:
        raise AssertionError("did not converge")
    assert baselines == {(6, 3)}  # A [5,2] + B [1,1] stamped at C's start, never shrinking mid-rollout
    assert [rev for rev, _ in cluster.slices[0]] == [C]


def test_newest_revision_drains_first_without_coordinated_over_drain() -> None:
    # B = [1,1] (newest old), A = [6,2]; the planner drains prefill by 1: upstream's coordinated
    # drain would zero B on both roles; here B's prefill goes to 0 and its decode stays
    roles = roles_of(SIX_TWO)
    cluster = Cluster(
        {
            0: [
                (C, {"prefill": Child(1, 1), "decode": Child(1, 1)}),
                (B, {"prefill": Child(1, 1, 1), "decode": Child(1, 1, 1)}),
                (A, {"prefill": Child(5, 5, 5), "decode": Child(2, 2, 2)}),
            ]
        }
    )
    p = plan(cluster.observe(), 1, C, roles)
    s = p.slices[0]
    assert s.branch == "proportional-drain"
    replicas = {c.key: c.replicas for c in p.declared}
    drained = {r: s.roles[i].old_before - s.applied.old[i] for i, r in enumerate(SIX_TWO)}
    assert replicas["0/prefill/bbbbbbbb"] == max(0, 1 - drained["prefill"])
    assert replicas["0/prefill/aaaaaaaa"] == 5 - max(0, drained["prefill"] - 1)
    assert replicas["0/decode/bbbbbbbb"] + replicas["0/decode/aaaaaaaa"] == 3 - drained["decode"]
    assert replicas["0/decode/bbbbbbbb"] == max(0, 1 - drained["decode"])


# ---- cleanup: removed roles, removed slices; slices never roll --------------------------------


def test_revision_left_with_only_a_removed_role_is_drained_and_deleted() -> None:
    # addenda §4.4: upstream sums old replicas over spec roles only and never deletes A here
    cluster = Cluster(
        {
            0: [
                (B, {"prefill": Child(6, 6), "decode": Child(2, 2)}),
                (A, {"prefill": Child(0, 0, 6), "decode": Child(0, 0, 2), "router": Child(2, 2, 2)}),
            ]
        }
    )
    p = plan(cluster.observe(), 1, B, roles_of(SIX_TWO))
    s = p.slices[0]
    assert s.mode != STEADY and [line.role for line in s.roles] == ["prefill", "decode", "router"]
    assert {c.key for c in s.deleted} == {"0/prefill/aaaaaaaa", "0/decode/aaaaaaaa", "0/router/aaaaaaaa"}
    cluster.apply(p)
    assert [rev for rev, _ in cluster.slices[0]] == [B]
    assert plan(cluster.observe(), 1, B, roles_of(SIX_TWO)).complete


def test_removed_role_drains_with_the_rollout() -> None:
    cluster = Cluster.converged(A, {"prefill": 6, "decode": 2, "router": 2})

    def check(cl: Cluster) -> None:
        for role, t in SIX_TWO.items():
            od, nd, orr, nr = cl.role_counts(0, role, B)
            assert orr + nr >= t and od + nd <= t + 1

    drive(cluster, B, roles_of(SIX_TWO), check=check)
    assert cluster.slices[0] == [(B, {"prefill": Child(6, 6), "decode": Child(2, 2)})]


def test_slice_changes_never_roll() -> None:
    cluster = Cluster.converged(A, SIX_TWO, slices=1)
    up = plan(cluster.observe(), 2, A, roles_of(SIX_TWO))
    assert [s.mode for s in up.slices] == [STEADY, STEADY]
    assert not up.slices[0].changed
    assert {c.key: c.replicas for c in up.slices[1].children} == {"1/prefill/aaaaaaaa": 6, "1/decode/aaaaaaaa": 2}
    cluster.apply(up)
    cluster.tick(None)
    down = plan(cluster.observe(), 1, A, roles_of(SIX_TWO))
    assert not down.slices[0].changed
    assert {c.key for c in down.children if not c.declared} == {"1/prefill/aaaaaaaa", "1/decode/aaaaaaaa"}
    # a template change with two slices rolls each slice on its own, same stages
    cluster = Cluster.converged(A, SIX_TWO, slices=2)
    plans = drive(cluster, B, roles_of(SIX_TWO), slices=2, ready_per_tick=None)
    for p in plans:
        assert p.slices[0].roles == tuple(line for line in p.slices[1].roles)


# ---- the Stage adapter and the prediction -------------------------------------------------------


def test_stage_encoding_and_prediction_match_the_drive() -> None:
    cluster = Cluster.converged(A, SIX_TWO)
    roles = roles_of(SIX_TWO)
    obs = cluster.observe()
    first = plan(obs, 1, B, roles)
    remaining = predict_remaining(first, obs, 1, roles)
    stage = to_stage(first, remaining)
    assert stage.policy == "disaggregatedset" and stage.target_revision == B and stage.partition is None
    assert stage.group_revisions == {
        "0/prefill": B,
        "0/decode": B,
        "0/prefill/bbbbbbbb": "1",
        "0/decode/bbbbbbbb": "1",
        "0/prefill/aaaaaaaa": "6",
        "0/decode/aaaaaaaa": "2",
    }
    assert [(g.id, g.phase, g.exists) for g in stage.groups] == [
        ("0/prefill", "6|1", False),
        ("0/decode", "2|1", False),
    ]
    assert stage.replicas == 10 and stage.case == "scale-up" and not stage.complete
    assert stage.remaining[0].groups == "ooooo" + "U" + "oo" + "U"
    assert stage.remaining[-1].groups == "U" * 6 + "U" * 2
    assert stage.remaining[-1].complete and not any(r.complete for r in stage.remaining[:-1])
    assert stage.remaining[0].ids[:6] == (
        "0/prefill/old/0",
        "0/prefill/old/1",
        "0/prefill/old/2",
        "0/prefill/old/3",
        "0/prefill/old/4",
        "0/prefill/new/0",
    )
    plans = drive(Cluster.converged(A, SIX_TWO), B, roles, ready_per_tick=None)
    assert [tuple((c.old, c.new) for c in r.cells) for r in remaining] == [
        tuple((line.old_after, line.new_after) for line in p.slices[0].roles) for p in plans[1:]
    ]
    assert remaining[0].row() == "0/prefill=5|1 0/decode=2|1"


def test_steady_state_is_complete() -> None:
    cluster = Cluster.converged(A, SIX_TWO)
    p = plan(cluster.observe(), 1, A, roles_of(SIX_TWO))
    assert p.complete and not p.changed and p.blocker is None
    stage = to_stage(p)
    assert stage.complete and all(g.ready and g.updated for g in stage.groups)
    fresh = plan((), 1, A, roles_of(SIX_TWO))
    assert {c.key: c.replicas for c in fresh.declared} == {"0/prefill/aaaaaaaa": 6, "0/decode/aaaaaaaa": 2}
    assert not fresh.complete and fresh.changed and fresh.blocker is None


WAITS = "waits for every role's new replicas to be ready (barrier; no old revision left)"


def _early_drain(decode_ready: int, prefill_target: int = 6, replaces: str | None = A) -> DisaggregatedPlan:
    """maxUnavailable drained every old replica (A at 0, still observed) while B is at 4|2 of its
    6|3 targets, decode 1 replica short of ready: the steady branch (no old replicas) is reached.
    ``replaces``: the annotation every rollout stage put on B's children (None: B is not rolling)."""
    obs = (
        SliceObservation(
            0,
            (
                RevisionObservation(
                    B,
                    {
                        "prefill": ChildObservation(4, 4, replaces=replaces),
                        "decode": ChildObservation(2, decode_ready, replaces=replaces),
                    },
                ),
                RevisionObservation(A, {"prefill": ChildObservation(0, 0, 6), "decode": ChildObservation(0, 0, 3)}),
            ),
        ),
    )
    return plan(obs, 1, B, roles_of({"prefill": prefill_target, "decode": 3}, surge=1, unavailable=2))


def test_steady_after_an_early_full_drain_holds_the_barrier() -> None:
    """Soak seed 71189: upstream's reconcileSimple raises every role to its target at once; here no
    target child is raised while one has unready replicas (a WAITING blocker, the old revision
    still deleted), and all of them jump to their targets once every new replica is ready."""
    held = _early_drain(decode_ready=1)
    s = held.slices[0]
    assert s.mode == STEADY and s.branch == BARRIER and not s.stable and not s.complete
    assert {c.key: c.replicas for c in s.declared} == {"0/prefill/bbbbbbbb": 4, "0/decode/bbbbbbbb": 2}
    assert {c.key for c in s.deleted} == {"0/prefill/aaaaaaaa", "0/decode/aaaaaaaa"}
    assert [(line.target, line.new_after) for line in s.roles] == [(6, 4), (3, 2)]
    assert held.blocker.code == WAITING and held.blocker.groups == ("0/decode/bbbbbbbb",)
    assert held.blocker.message == "waiting for role decode of revision bbbbbbbb to have 2/2 ready replicas (1 ready)"
    assert held.notes == (f"slice 0: raise of prefill, decode {WAITS}",)
    assert {c.replaces for c in s.declared} == {A}  # still catching up: the annotation stays
    free = _early_drain(decode_ready=2)
    assert {c.key: c.replicas for c in free.declared} == {"0/prefill/bbbbbbbb": 6, "0/decode/bbbbbbbb": 3}
    assert free.slices[0].branch == "" and free.slices[0].stable and free.blocker is None and not free.notes
    assert {c.replaces for c in free.declared} == {None}  # at the targets: the rollout is over
    shrink = _early_drain(decode_ready=1, prefill_target=3)  # a lowering is not a raise: it goes at once
    assert {c.key: c.replicas for c in shrink.declared} == {"0/prefill/bbbbbbbb": 3, "0/decode/bbbbbbbb": 2}
    assert shrink.notes == (f"slice 0: raise of decode {WAITS}",)


def test_a_scale_up_outside_a_rollout_is_applied_at_once_whatever_another_role_s_readiness() -> None:
    """Issue 24 item 2 (upstream reconcileSimple): no old revision and no replaces-revisions
    annotation — a replicas edit or an External autoscaler's raise — every role goes to its target
    in this reconcile although decode has an unready replica; no barrier, no blocker."""
    p = _early_drain(decode_ready=1, replaces=None)
    s = p.slices[0]
    assert {c.key: c.replicas for c in s.declared} == {"0/prefill/bbbbbbbb": 6, "0/decode/bbbbbbbb": 3}
    assert s.branch == "" and s.stable and p.blocker is None and not p.notes
    assert {c.replaces for c in s.declared} == {None}
    steady = (
        SliceObservation(
            0, (RevisionObservation(B, {"prefill": ChildObservation(4, 4), "decode": ChildObservation(2, 1)}),)
        ),
    )
    external = plan(steady, 1, B, [RoleTarget("prefill", 8, external=True), RoleTarget("decode", 2)])
    assert {c.key: c.replicas for c in external.declared} == {"0/prefill/bbbbbbbb": 8, "0/decode/bbbbbbbb": 2}


def test_every_rollout_stage_names_the_replaced_revisions_on_the_target_children() -> None:
    """The record the steady branch reads: every rollout stage declares the target children with
    ``replaces-revisions`` = the old revisions of the slice, and the stage that drains the last
    old replica with every role at its target declares them without it (no extra stage)."""
    cluster = Cluster.converged(A, SIX_TWO)
    plans = drive(cluster, B, roles_of(SIX_TWO), ready_per_tick=None)
    rolling = [p for p in plans if any(s.mode != STEADY for s in p.slices)]
    assert rolling, "the drive rolls"
    for p in rolling[:-1]:
        assert {c.replaces for c in p.declared if c.revision == B} == {A}
    assert {c.replaces for c in rolling[-1].declared if c.revision == B} == {None}
    assert all(c.replaces is None for p in plans for c in p.declared if c.revision == A)


def test_steady_barrier_past_the_progress_deadline_names_no_old_capacity() -> None:
    obs = (
        SliceObservation(
            0,
            (
                RevisionObservation(
                    B, {"prefill": ChildObservation(4, 4, replaces=A), "decode": ChildObservation(2, 1, replaces=A)}
                ),
            ),
        ),
    )
    p = plan(
        obs,
        1,
        B,
        roles_of({"prefill": 6, "decode": 3}),
        progress_deadline_seconds=600,
        new_scaled_at={0: 1000.0},
        now=1700.0,
    )
    assert not p.changed and p.blocker.code == PROGRESS_DEADLINE_EXCEEDED
    assert "no old revision is left" in p.blocker.message and "decode" in p.blocker.message


# ---- hypothesis: bounds and termination from random inputs -----------------------------------


@st.composite
def scenarios(draw):
    n = draw(st.integers(2, 3))
    names = ["r0", "r1", "r2"][:n]
    initial = draw(st.lists(st.integers(0, 8), min_size=n, max_size=n))
    target = draw(st.lists(st.integers(0, 8), min_size=n, max_size=n))
    cfg = [
        draw(
            st.builds(RollingUpdateConfig, st.integers(0, 3), st.integers(0, 3)).filter(
                lambda c: c.max_surge > 0 or c.max_unavailable > 0
            )
        )
        for _ in range(n)
    ]
    per_tick = draw(st.sampled_from([1, 2, None]))
    third = draw(st.none() | st.integers(1, 4))  # switch to a third revision after this many stages
    return names, initial, target, cfg, per_tick, third


@settings(max_examples=120, deadline=None)
@given(scenarios())
def test_bounds_and_termination(args) -> None:
    names, initial, target, cfg, per_tick, third = args
    roles = [RoleTarget(n, t, c) for n, t, c in zip(names, target, cfg)]
    cluster = Cluster.converged(A, dict(zip(names, initial)))
    goal = B
    stages = 0
    for _ in range(600):
        obs = cluster.observe()
        p = plan(obs, 1, goal, roles)
        if p.complete and not p.changed:
            break
        before = {n: cluster.role_counts(0, n, goal) for n in names}
        if p.changed:
            stages += 1
            cluster.apply(p)
            s = p.slices[0]
            lines = {line.role: line for line in s.roles}
            for n, t, c in zip(names, target, cfg):
                od, nd, orr, nr = cluster.role_counts(0, n, goal)
                bod, bnd, borr, bnr = before[n]
                line = lines[n]
                floor = max(0, min(line.target, line.initial_old) - c.max_unavailable)
                assert orr + nr >= min(floor, borr + bnr), (n, before[n], cluster.role_counts(0, n, goal))
                if not s.ceiling_relaxed:
                    assert od + nd <= max(t + c.max_surge, bod + bnd), (n, before[n], cluster.role_counts(0, n, goal))
            if third is not None and stages == third and goal == B:
                goal = C
        elif not cluster.tick(per_tick):
            raise AssertionError(f"stalled: {p.blocker}")
    else:
        raise AssertionError("did not converge")
    assert [rev for rev, _ in cluster.slices.get(0, [])] in ([goal], [])
    assert {n: cluster.role_counts(0, n, goal)[1] for n in names} == dict(zip(names, target))
