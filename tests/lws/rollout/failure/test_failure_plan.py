"""plan_failure_actions on literal snapshots: one test per rule (docs/failure-handling.md)."""

from __future__ import annotations

import json
from dataclasses import replace

from support.fixtures_failure import NAME, World, make_lws, pod

from pulumi_lws.lws import labels as L
from pulumi_lws.lws.rollout.failure.ordinal import (
    BACKOFF,
    BUDGET_EXCEEDED,
    RECREATE_GROUP,
    RESTART_PENDING,
    UNSCHEDULABLE,
    plan_failure_actions,
    plan_group_failure,
    with_failure_state,
)
from pulumi_lws.lws.rollout.failure.retention import RETAIN_FINALIZER
from pulumi_lws.lws.rollout.failure.termination import PREVIOUS_LEADER_UID


def plan(w: World, **stage_kw):
    return plan_failure_actions(w.lws, w.snapshot(), w.stage(**stage_kw))


def verbs(p) -> list[tuple[str, str, str]]:
    return [(a.verb, a.kind, a.name) for a in p.actions]


def execute(w: World, p) -> None:
    """Apply the plan's actions to the literal world the way the API server would (deletes only
    mark pods deleting: the grace period has not elapsed; a deleting pod whose last finalizer is
    removed is gone: it terminated long ago)."""
    for a in p.actions:
        obj = w.get(a.name, a.kind)
        assert a.uid == obj["metadata"]["uid"]
        if a.verb == "delete":
            w.delete(a.name)
        elif a.verb == "annotate":
            obj["metadata"].setdefault("annotations", {}).update(a.params["annotations"])
        elif a.verb == "finalize":
            fins = obj["metadata"].setdefault("finalizers", [])
            assert not (a.params.get("add") and obj["metadata"].get("deletionTimestamp")), "Forbidden"
            fins += [f for f in a.params.get("add", []) if f not in fins]
            obj["metadata"]["finalizers"] = [f for f in fins if f not in a.params.get("remove", [])]
            if not obj["metadata"]["finalizers"] and obj["metadata"].get("deletionTimestamp"):
                del w.objs[(a.kind, a.name)]


def test_healthy_groups_need_nothing():
    p = plan(World(make_lws()))
    assert p.actions == () and p.events == () and p.restart_counts is None


def test_worker_restart_recreates_group_sequential_marks_workers():
    w = World(make_lws())
    w.restart("lws-1-2")
    p = plan(w)
    assert verbs(p) == [("delete", "Pod", "lws-1"), ("annotate", "Pod", "lws-1-1"), ("annotate", "Pod", "lws-1-2")]
    delete = p.actions[0]
    assert delete.params == {"propagation": "Foreground"} and delete.uid == "L1"
    assert p.actions[1].params == {"annotations": {PREVIOUS_LEADER_UID: "L1"}}
    assert [e.code for e in p.events] == [RECREATE_GROUP] and "lws-1-2" in p.events[0].message


def test_parallel_deletes_workers_with_the_leader():
    w = World(make_lws(termination="Parallel"))
    w.restart("lws-0")  # the leader itself restarted
    p = plan(w)
    assert verbs(p) == [("delete", "Pod", "lws-0"), ("delete", "Pod", "lws-0-1"), ("delete", "Pod", "lws-0-2")]
    assert [a.uid for a in p.actions] == ["L0", "W01", "W02"]


def test_deleted_worker_recreates_group():
    w = World(make_lws())
    w.delete("lws-2-1")
    assert ("delete", "Pod", "lws-2") in verbs(plan(w))


def test_restart_policy_none_does_nothing():
    w = World(make_lws(policy="None"))
    w.restart("lws-1-1")
    w.delete("lws-2-2")
    assert plan(w).actions == ()


def test_idempotent_after_execution_and_workers_follow_once_leader_is_gone():
    w = World(make_lws())
    w.restart("lws-1-2")
    first = plan(w)
    execute(w, first)
    assert plan(w).actions == ()  # leader deleting: no second delete, workers already marked
    # the StatefulSet replaced the leader: the marked workers follow, without a new recreation
    w.group(1, created=w.now + 5)
    w.add(
        pod(
            "lws-1-1",
            w.get("lws-1-1")["metadata"]["labels"],
            uid="W11",
            created=0,
            annotations={PREVIOUS_LEADER_UID: "L1"},
            restarts=0,
        )
    )
    w.add(
        pod(
            "lws-1-2",
            w.get("lws-1-2")["metadata"]["labels"],
            uid="W12",
            created=0,
            annotations={PREVIOUS_LEADER_UID: "L1"},
            restarts=3,
        )
    )
    w.meta("lws-1")["uid"] = "L1b"
    follow = plan(w)
    assert verbs(follow) == [("delete", "Pod", "lws-1-1"), ("delete", "Pod", "lws-1-2")]
    assert [e.code for e in follow.events] == []  # a marked worker's restarts are not a new failure


def test_deleting_worker_older_than_leader_is_a_leftover():
    w = World(make_lws())
    w.group(0, created=500)
    w.get("lws-0-1")["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"  # previous incarnation
    w.delete("lws-0-1")
    assert plan(w).actions == ()


def test_worker_on_other_revision_is_skipped():
    w = World(make_lws())
    w.meta("lws-1-1")["labels"][L.TEMPLATE_REVISION_HASH] = "other"
    w.restart("lws-1-1")
    assert plan(w).actions == ()


def test_group_replaced_by_rollout_is_skipped():
    w = World(make_lws())
    w.restart("lws-2-1")
    assert plan(w, target="newrev", partition=0).actions == ()  # admitted, leader not on the target yet
    w2 = World(make_lws())
    w2.restart("lws-2-1")
    w2.get("lws-2", "StatefulSet")["status"]["updateRevision"] = "r2"  # worker STS rolling its pods
    assert plan(w2).actions == ()


def test_after_start_skips_pending_and_incomplete_groups():
    lws = make_lws(policy="RecreateGroupAfterStart")
    w = World(lws)
    w.restart("lws-0-1")
    w.get("lws-0-2")["status"]["phase"] = "Pending"
    p = plan(w)
    assert p.actions == () and p.deferred and p.events == ()
    del w.objs[("Pod", "lws-0-2")]  # incomplete
    assert plan(w).actions == ()
    w.add(
        pod(
            "lws-0-2",
            {L.NAME: NAME, L.GROUP_INDEX: "0", L.WORKER_INDEX: "2", L.TEMPLATE_REVISION_HASH: w.key},
            uid="W02b",
            phase="Running",
        )
    )
    assert ("delete", "Pod", "lws-0") in verbs(plan(w))


def test_after_start_unschedulable_pod_is_reported():
    w = World(make_lws(annotations={L.EXPERIMENTAL_RECREATE_AFTER_START: "true"}))
    w.restart("lws-1-1")
    w.add(
        pod(
            "lws-1-2",
            {L.NAME: NAME, L.GROUP_INDEX: "1", L.WORKER_INDEX: "2", L.TEMPLATE_REVISION_HASH: w.key},
            uid="W12",
            phase="Pending",
            unschedulable=True,
        )
    )
    p = plan(w)
    assert p.actions == () and [e.code for e in p.events] == [UNSCHEDULABLE] and "lws-1-2" in p.events[0].message


def test_budget_counts_per_revision_and_group():
    w = World(make_lws(max_restarts=3), counts=json.dumps({"oldrev/1": 2}))
    w.restart("lws-1-1")
    p = plan(w)
    assert verbs(p)[0] == ("annotate", "StatefulSet", NAME)  # the count is written before the delete
    value = p.actions[0].params["annotations"][L.GROUP_RESTART_COUNTS]
    assert json.loads(value) == {f"{w.key}/1": 1}  # a fresh budget on this revision; stale key pruned
    assert p.restart_counts == value and p.actions[0].uid == "sts-uid"
    out = with_failure_state([{"kind": "StatefulSet", "metadata": {"name": NAME, "annotations": {"a": "b"}}}], w.lws, p)
    assert out[0]["metadata"]["annotations"] == {"a": "b", L.GROUP_RESTART_COUNTS: value}


def test_counts_carried_forward_without_change():
    w = World(make_lws(max_restarts=2))
    w.get(NAME, "StatefulSet")["metadata"]["annotations"][L.GROUP_RESTART_COUNTS] = json.dumps({f"{w.key}/0": 1})
    p = plan(w)
    assert p.actions == () and json.loads(p.restart_counts) == {f"{w.key}/0": 1}


def test_exhaustion_retains_group_and_recover_releases_it():
    w = World(make_lws(max_restarts=1))
    w.get(NAME, "StatefulSet")["metadata"]["annotations"][L.GROUP_RESTART_COUNTS] = json.dumps({f"{w.key}/2": 1})
    w.restart("lws-2-1")
    p = plan(w)
    group = ["lws-2", "lws-2-1", "lws-2-2"]
    assert verbs(p) == [("annotate", "Pod", "lws-2")] + [("finalize", "Pod", n) for n in group] + [
        ("delete", "Pod", n) for n in group
    ]  # every finalizer is on before the first delete
    assert p.actions[0].params == {"annotations": {L.RESTART_BUDGET_EXHAUSTED: "true"}}
    assert all(a.params == {"add": [RETAIN_FINALIZER]} for a in p.actions[1:4])
    assert all(a.params == {"propagation": "Background"} for a in p.actions[4:])
    assert [a.uid for a in p.actions[1:]] == ["L2", "W21", "W22"] * 2
    assert p.degraded_groups == ("2",) and p.events[0].code == BUDGET_EXCEEDED
    manifests = [{"kind": "StatefulSet", "metadata": {"name": f"{NAME}-{i}"}} for i in range(3)]
    assert p.halted_groups == () and len(with_failure_state(manifests, w.lws, p)) == 3  # pods finalized first
    execute(w, p)
    again = plan(w)
    assert again.actions == () and again.halted_groups == (2,) and again.degraded_groups == ("2",)
    assert [m["metadata"]["name"] for m in with_failure_state(manifests, w.lws, again)] == ["lws-0", "lws-1"]
    w.delete("lws-2")  # kubectl delete of the retained leader: nothing changes, no recovery
    assert plan(w).actions == () and w.get("lws-2")["metadata"]["finalizers"] == [RETAIN_FINALIZER]
    w.annotate("lws-2", **{L.RECOVER: "true"})
    rec = plan(w)
    assert verbs(rec) == [("annotate", "StatefulSet", NAME)] + [("finalize", "Pod", n) for n in group]
    assert all(a.params == {"remove": [RETAIN_FINALIZER]} for a in rec.actions[1:])
    assert json.loads(rec.restart_counts) == {} and rec.events[0].code == "RecoverGroup"
    execute(w, rec)
    assert not any(k == ("Pod", n) for k in w.objs for n in group)  # released: the objects are gone
    after = plan(w)
    assert after.actions == () and after.halted_groups == () and after.degraded_groups == ()


def test_retention_skips_a_worker_already_deleting():
    w = World(make_lws(max_restarts=0))
    w.delete("lws-1-2")  # the failure itself; a finalizer cannot be added to it any more
    p = plan(w)
    assert ("finalize", "Pod", "lws-1-2") not in verbs(p) and ("delete", "Pod", "lws-1-2") not in verbs(p)
    assert ("finalize", "Pod", "lws-1-1") in verbs(p) and ("delete", "Pod", "lws-1") in verbs(p)


def test_exhausted_leader_never_retained_is_retained_then_recovered_by_delete():
    w = World(make_lws(max_restarts=1))
    w.annotate("lws-0", **{L.RESTART_BUDGET_EXHAUSTED: "true"})  # e.g. exhausted by an older version
    p = plan(w)
    assert verbs(p)[:3] == [
        ("finalize", "Pod", "lws-0"),
        ("finalize", "Pod", "lws-0-1"),
        ("finalize", "Pod", "lws-0-2"),
    ]
    assert p.halted_groups == ()
    w.annotate("lws-0", **{L.RECOVER: "true"})
    rec = plan(w)
    assert verbs(rec)[0] == ("delete", "Pod", "lws-0") and rec.actions[0].params == {"propagation": "Foreground"}


def _retained_world(**lws_kw) -> World:
    w = World(make_lws(max_restarts=1, **lws_kw))
    w.annotate("lws-2", **{L.RESTART_BUDGET_EXHAUSTED: "true"})
    for n in ("lws-2", "lws-2-1", "lws-2-2"):
        w.meta(n)["finalizers"] = [RETAIN_FINALIZER]
        w.delete(n)
    return w


def test_rollout_and_scale_down_release_retained_pods_without_recovery():
    w = _retained_world()
    rollout = plan(w, partition=0, target="newrev")
    assert [(a.verb, a.name, a.params) for a in rollout.actions] == [
        ("finalize", n, {"remove": [RETAIN_FINALIZER]}) for n in ("lws-2", "lws-2-1", "lws-2-2")
    ]
    assert rollout.degraded_groups == () and not rollout.events
    w = _retained_world()
    down = plan_failure_actions(w.lws, w.snapshot(), replace(w.stage(), replicas=2))
    assert [a.name for a in down.actions if a.verb == "finalize"] == ["lws-2", "lws-2-1", "lws-2-2"]
    assert plan(w, partition=3, target="newrev").actions == ()  # below the partition: not replaced yet


def test_lws_deletion_releases_retained_pods():
    w = _retained_world()
    w.meta(NAME, "StatefulSet")["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert [a.verb for a in plan(w).actions] == ["finalize"] * 3


def test_zero_budget_exhausts_on_first_failure():
    w = World(make_lws(max_restarts=0))
    w.delete("lws-0-2")
    p = plan(w)
    assert p.degraded_groups == ("0",) and [e.code for e in p.events] == [BUDGET_EXCEEDED]
    assert p.restart_counts == "{}"  # exhaustion consumes nothing
    assert all(a.params.get("propagation") != "Foreground" for a in p.actions)  # retained, not recreated


def test_backoff_defers_until_leader_is_old_enough():
    lws = make_lws(backoff={"baseSeconds": 10, "capSeconds": 300})
    w = World(lws, now=100.0)
    w.get(NAME, "StatefulSet")["metadata"]["annotations"][L.GROUP_RESTART_COUNTS] = json.dumps({f"{w.key}/2": 3})
    w.group(2, created=37.0)  # age 63 s; delay min(10 * 2**3, 300) = 80 s: 17 s left
    w.restart("lws-2-1")
    p = plan(w)
    assert [e.code for e in p.events] == [BACKOFF]
    assert str(p.events[0]) == "GroupRestartBackoff: group 2 recreates in 17s (restart 4)"
    assert verbs(p) == [("annotate", "Pod", "lws-2")] and RESTART_PENDING in p.actions[0].params["annotations"]
    assert p.deferred
    execute(w, p)
    w.restart("lws-2-1", 0)  # the failure signal went away (e.g. the deleted worker was recreated)
    assert plan(w).actions == ()  # still waiting, marker already written
    w.now = 117.0
    late = plan(w)
    assert ("delete", "Pod", "lws-2") in verbs(late) and late.events[0].code == RECREATE_GROUP
    assert json.loads(late.restart_counts) == {f"{w.key}/2": 4}


def test_backoff_cap_and_stable_group_recovers_immediately():
    from pulumi_lws.lws.rollout.failure.restart_budget import backoff_delay

    lws = make_lws(backoff={"baseSeconds": 10, "capSeconds": 60})
    assert [backoff_delay(lws, n) for n in range(5)] == [10, 20, 40, 60, 60]
    w = World(lws, now=1000.0)  # group born at 0: older than any delay
    w.restart("lws-0-1")
    assert ("delete", "Pod", "lws-0") in verbs(plan(w))


def test_parallel_termination_of_a_deleting_leader():
    w = World(make_lws(termination="Parallel"))
    w.delete("lws-1", at=50)
    w.add(
        pod(
            "lws-1-2",
            {L.NAME: NAME, L.GROUP_INDEX: "1", L.WORKER_INDEX: "2", L.TEMPLATE_REVISION_HASH: w.key},
            uid="W12b",
            created=60,
        )
    )  # already a replacement: untouched
    p = plan(w)
    assert verbs(p) == [("delete", "Pod", "lws-1-1")] and p.actions[0].uid == "W11"


def test_sequential_rollout_leader_deletion_is_not_followed():
    w = World(make_lws())
    w.group(1, key="oldrev")
    w.delete("lws-1")
    assert plan(w, partition=3).actions == ()  # old-revision leader replaced by the rollout


def test_group_function_for_hash_mode():
    lws = make_lws()
    w = World(lws)
    w.restart("lws-0-1")
    out = plan_group_failure(
        lws, "abcd1234", w.get("lws-0"), [w.get("lws-0-1"), w.get("lws-0-2")], count=0, now=w.snapshot().now
    )
    assert out.consumed and out.actions[0].name == "lws-0" and "abcd1234" in out.events[0].message


def test_scaled_away_group_sequential_adds_nothing_parallel_deletes_workers():
    for termination, expected in (("Sequential", []), ("Parallel", ["lws-2-1", "lws-2-2"])):
        w = World(make_lws(termination=termination))
        w.delete("lws-2")
        p = plan_failure_actions(w.lws, w.snapshot(), replace(w.stage(), replicas=2))
        assert [a.name for a in p.actions] == expected


def test_external_leader_deletion_marks_workers_sequential():
    w = World(make_lws(policy="None"))  # termination follows a leader whatever the restart policy
    w.delete("lws-0")
    p = plan(w)
    assert verbs(p) == [("annotate", "Pod", "lws-0-1"), ("annotate", "Pod", "lws-0-2")]
    execute(w, p)
    assert plan(w).actions == ()
