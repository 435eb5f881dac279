"""The quiet-pod fast path of ``plan_failure_actions`` (failure/quiet.py) equals the full
per-group pass it replaced (kept below as the reference) on random worlds: restarts, deletions,
failure annotations, finalizers, Pending pods, missing pods, mixed revisions, observed counts,
stages scaling up or down and partitions anywhere."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from support.fixtures_failure import NAME, World, make_lws, ts

from pulumi_lws.core.contract.snapshot import Snapshot, is_deleting
from pulumi_lws.core.contract.stage import Action, Stage
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.observe import revision_of
from pulumi_lws.lws.rollout.failure import restart_budget as B
from pulumi_lws.lws.rollout.failure.ordinal import (
    RESTART_PENDING,
    FailurePlan,
    GroupOutcome,
    counts_action,
    next_counts,
    plan_failure_actions,
    plan_group_failure,
    release_outcome,
    released_groups,
    replaced_by_rollout,
    rolled_away,
)
from pulumi_lws.lws.rollout.failure.quiet import is_quiet
from pulumi_lws.lws.rollout.failure.retention import RETAIN_FINALIZER
from pulumi_lws.lws.rollout.failure.termination import PREVIOUS_LEADER_UID, ordinal_members, plan_termination_actions
from pulumi_lws.lws.status.failure import is_exhausted


def reference_plan_failure_actions(lws, snapshot: Snapshot, stage: Stage) -> FailurePlan:
    """plan_failure_actions before the fast path: every group of [0, replicas) planned."""
    sts = snapshot.get("StatefulSet", lws.name)
    if sts is None:
        return FailurePlan()
    members = ordinal_members(lws, snapshot)
    if is_deleting(sts):
        return FailurePlan(actions=released_groups(members, 0, "is deleted with the LeaderWorkerSet"))
    raw = B.observed_counts_raw(lws, snapshot)
    counts = B.parse_counts(raw)
    outcomes: dict[int, GroupOutcome] = {}
    keys: dict[int, str] = {}
    live_keys = {B.count_key(rev, i) for i, rev in stage.group_revisions.items()}
    for i in range(stage.replicas):
        leader, workers = members.get(i, (None, []))
        if leader is None:
            continue
        keys[i] = B.count_key(revision_of(leader), str(i))
        live_keys.add(keys[i])
        if is_exhausted(leader) and rolled_away(leader, i, stage):
            outcomes[i] = release_outcome(str(i), leader, workers, "is replaced by the rollout")
        elif is_exhausted(leader) or not replaced_by_rollout(
            leader, snapshot.get("StatefulSet", f"{lws.name}-{i}"), i, stage
        ):
            outcomes[i] = plan_group_failure(
                lws, str(i), leader, workers, count=counts.get(keys[i], 0), now=snapshot.now
            )
    new_counts = next_counts(counts, keys, outcomes, live_keys)
    value = B.dump_counts(new_counts) if (B.tracks_counts(lws) or raw is not None) else None
    actions: list[Action] = []
    if value is not None and new_counts != counts:
        act = counts_action(lws, snapshot, value)
        actions += [act] if act else []
    for i in sorted(outcomes):
        actions += outcomes[i].actions
    actions += released_groups(members, stage.replicas, "is scaled away")
    seen = {(a.verb, a.name) for a in actions}
    actions += [a for a in plan_termination_actions(lws, snapshot, stage, members) if (a.verb, a.name) not in seen]
    return FailurePlan(
        actions=tuple(actions),
        events=tuple(e for i in sorted(outcomes) for e in outcomes[i].events),
        degraded_groups=tuple(str(i) for i in sorted(outcomes) if outcomes[i].halted),
        halted_groups=tuple(i for i in sorted(outcomes) if outcomes[i].retained),
        restart_counts=value,
        deferred=any(o.deferred for o in outcomes.values()),
    )


POD_CHANGES = st.sampled_from(
    [
        "restart",
        "delete",
        "pending",
        "pending_marker",
        "follow",
        "exhausted",
        "recover",
        "retain",
        "other_finalizer",
        "gone",
        "old",
        "late",
        "none",
        "none",
        "none",
        "none",
    ]
)


@st.composite
def worlds(draw):
    replicas, size = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    policy = draw(st.sampled_from([None, "RecreateGroupAfterStart", "None"]))
    budget = policy != "None"  # restart budgets and backoff need a restart policy (validation)
    lws = make_lws(
        replicas=replicas,
        size=size,
        policy=policy,
        max_restarts=draw(st.sampled_from([None, 0, 1, 3])) if budget else None,
        backoff=draw(st.sampled_from([None, {"baseSeconds": 10, "capSeconds": 60}])) if budget else None,
        termination=draw(st.sampled_from([None, "Parallel"])),
    )
    counts = draw(
        st.sampled_from(
            [
                None,
                "",
                "{}",
                "not json",
                json.dumps({f"{revision_of_key(lws)}/{i}": draw(st.integers(1, 3)) for i in range(replicas)}),
                '{"stale/9":2}',
            ]
        )
    )
    w = World(lws, counts=counts)
    old_key = "oldrev"
    if draw(st.booleans()):  # one group beyond replicas: what a scale-down leaves
        w.group(replicas)
    for (kind, name), obj in list(w.objs.items()):
        if kind != "Pod":
            continue
        change = draw(POD_CHANGES)
        meta = obj["metadata"]
        if change == "restart":
            w.restart(name, draw(st.integers(1, 2)))
        elif change == "delete":
            w.delete(name, at=draw(st.sampled_from([-5.0, 500.0, 999.0])))
        elif change == "pending":
            obj["status"]["phase"] = "Pending"
        elif change == "pending_marker":
            w.annotate(name, **{RESTART_PENDING: "Worker pod x failed"})
        elif change == "follow":
            w.annotate(name, **{PREVIOUS_LEADER_UID: draw(st.sampled_from(["L0", "L1", "gone"]))})
        elif change == "exhausted":
            w.annotate(name, **{L.RESTART_BUDGET_EXHAUSTED: "true"})
        elif change == "recover":
            w.annotate(name, **{L.RESTART_BUDGET_EXHAUSTED: "true", L.RECOVER: "true"})
        elif change == "retain":
            meta["finalizers"] = [RETAIN_FINALIZER]
        elif change == "other_finalizer":
            meta["finalizers"] = ["example.com/other"]
        elif change == "gone":
            del w.objs[(kind, name)]
        elif change == "old":
            meta["labels"][L.TEMPLATE_REVISION_HASH] = old_key
        elif change == "late":
            meta["creationTimestamp"] = ts(2000.0)
    if draw(st.booleans()):
        w.meta(NAME, "StatefulSet")["deletionTimestamp"] = ts(900.0)
    for i in range(replicas):
        if ("StatefulSet", f"{NAME}-{i}") in w.objs and draw(st.booleans()):
            w.get(f"{NAME}-{i}", "StatefulSet")["status"]["updateRevision"] = "r2"  # rolling
    target = draw(st.sampled_from([w.key, old_key]))
    stage_replicas = draw(st.integers(0, replicas + 1))
    stage = Stage(
        policy="lws/ordinal",
        target_revision=target,
        replicas=stage_replicas,
        partition=draw(st.integers(0, stage_replicas)),
        group_revisions={str(i): draw(st.sampled_from([w.key, old_key])) for i in range(stage_replicas)},
    )
    return lws, w.snapshot(), stage


def revision_of_key(lws) -> str:
    from pulumi_lws.lws.revision import revision_key

    return revision_key(lws)


@settings(max_examples=400, deadline=None)
@given(worlds())
def test_fast_path_equals_the_full_pass(world):
    lws, snapshot, stage = world
    assert plan_failure_actions(lws, snapshot, stage) == reference_plan_failure_actions(lws, snapshot, stage)


def test_a_quiet_fleet_reads_no_group():
    w = World(make_lws(replicas=3))
    assert all(is_quiet(p) for p in w.snapshot().list("Pod"))
    w.restart("lws-1-1")
    assert [p["metadata"]["name"] for p in w.snapshot().list("Pod") if not is_quiet(p)] == ["lws-1-1"]
