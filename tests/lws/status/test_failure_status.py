"""Degraded / GroupUnschedulable conditions merged into the LWS status (lws/rollout/failure/ordinal.py)."""

from __future__ import annotations

from support.fixtures_failure import World, make_lws

from pulumi_lws.lws import labels as L
from pulumi_lws.lws.rollout.failure.ordinal import failure_conditions, merge_failure_status
from pulumi_lws.lws.rollout.failure.termination import follow_actions

BASE = {
    "replicas": 3,
    "conditions": [
        {"type": "Available", "status": "True", "reason": "AllGroupsReady", "message": "All replicas are ready"},
        {"type": "Progressing", "status": "False", "reason": "AllGroupsReady", "message": "All replicas are ready"},
    ],
}


def test_no_conditions_without_budget_or_problems():
    w = World(make_lws())
    assert failure_conditions(w.lws, w.snapshot()) == {}
    assert merge_failure_status(BASE, w.lws, w.snapshot()) == BASE


def test_degraded_false_when_budget_set_true_when_exhausted():
    w = World(make_lws(max_restarts=1))
    assert failure_conditions(w.lws, w.snapshot())["Degraded"]["status"] == "False"
    w.annotate("lws-2", **{L.RESTART_BUDGET_EXHAUSTED: "true"})
    status = merge_failure_status(BASE, w.lws, w.snapshot())
    degraded = status["conditions"][-1]
    assert degraded["type"] == "Degraded" and degraded["status"] == "True"
    assert degraded["reason"] == "ReplicaRestartBudgetExceeded" and "2" in degraded["message"]
    assert BASE["conditions"][-1]["type"] == "Progressing"  # input not mutated


def test_unschedulable_leader_sets_progressing_reason():
    w = World(make_lws())
    w.get("lws-1")["status"]["phase"] = "Pending"
    w.get("lws-1")["status"]["conditions"].append(
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}
    )
    status = merge_failure_status(BASE, w.lws, w.snapshot())
    prog = [c for c in status["conditions"] if c["type"] == "Progressing"]
    assert prog == [
        {
            "type": "Progressing",
            "status": "True",
            "reason": "GroupUnschedulable",
            "message": "1 replicas cannot be scheduled",
        }
    ]


def test_marked_workers_follow_when_leader_absent():
    w = World(make_lws())
    w.annotate("lws-0-1", **{"pulumi-lws.io/previous-leader-uid": "L0"})
    assert follow_actions(w.get("lws-0"), [w.get("lws-0-1")]) == ()  # same leader still there
    assert [a.name for a in follow_actions(None, [w.get("lws-0-1")])] == ["lws-0-1"]
