"""Recovery (recoveryPolicy, restartGracePeriodSeconds) through ``reconcile`` on literal snapshots:
the uid-guarded pod deletes, the grace-period blocker, the generation rule for deleted pods, the
Creating marking the planners see, #372 and #743, and the status."""

from __future__ import annotations

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from ms_recovery_fixtures import (
    NOW,
    crash,
    deletes,
    group_pods,
    pd,
    pod,
    recreate,
    restart,
    running,
    snap,
    terminating,
)

from pulumi_lws.modelserving.reconcile import reconcile, status_of
from pulumi_lws.modelserving.recovery import (
    GENERATION_SLACK_SECONDS,
    GRACE_PERIOD,
    PHASE,
)

PREFILL2 = ["pd-2-prefill-0-0", "pd-2-prefill-0-w-1"]


def uids(names):
    return [(n, f"uid-{n}") for n in names]


def view(stage, g):
    return next(v for v in stage.groups if v.id == str(g))


def test_healthy_cluster_has_no_recovery():
    ms = pd()
    stage = reconcile(ms, snap(running(ms))).stage
    assert stage.complete and stage.actions == () and stage.notes == ()


def test_role_recreate_deletes_the_whole_role_replica_with_uids():
    ms = pd()
    objs = running(ms)
    restart(objs, "pd-2-prefill-0-w-1", NOW - 10)
    stage = reconcile(ms, snap(objs)).stage
    assert deletes(stage) == uids(PREFILL2)  # entry + worker, not decode, not other groups
    assert all(a.params == {"propagation": "Background"} for a in stage.actions)
    assert "RoleRecreate: recreating role prefill-0 of pd-2" in stage.actions[0].reason
    assert not stage.complete and stage.blocker is None
    assert view(stage, 2).phase == PHASE and not view(stage, 2).ready
    assert any("pd-2-prefill-0-w-1 restarted" in n for n in stage.notes)


def test_failed_pod_and_init_container_restart_are_failures():
    ms = pd()
    objs = running(ms)
    crash(objs, "pd-1-decode-0-0", NOW - 1)
    p = pod(objs, "pd-0-prefill-0-0")  # an init container restarting while Pending
    p["status"] = {
        "phase": "Pending",
        "initContainerStatuses": [
            {"name": "init", "restartCount": 2, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
        ],
    }
    stage = reconcile(ms, snap(objs)).stage
    assert deletes(stage) == uids(["pd-0-prefill-0-0", "pd-0-prefill-0-w-1", "pd-1-decode-0-0", "pd-1-decode-0-w-1"])


def test_a_restarted_pod_that_is_ready_again_is_healthy():
    ms = pd()
    objs = running(ms)
    restart(objs, "pd-2-prefill-0-w-1", NOW - 100)
    p = pod(objs, "pd-2-prefill-0-w-1")
    p["status"]["conditions"][0]["status"] = "True"
    stage = reconcile(ms, snap(objs)).stage
    assert stage.actions == () and stage.complete


def test_grace_period_waits_with_a_named_blocker_then_recreates():
    ms = pd(grace=30)
    objs = running(ms)
    restart(objs, "pd-2-prefill-0-w-1", NOW - 10)
    stage = reconcile(ms, snap(objs)).stage
    assert stage.actions == () and not stage.complete
    assert stage.blocker.code == GRACE_PERIOD
    assert stage.blocker.message == "waiting 20s restartGracePeriodSeconds before recreating role prefill-0 of pd-2"
    assert stage.blocker.groups == ("2",) and view(stage, 2).phase == PHASE
    assert stage.notes == (stage.blocker.message,)
    # 20 s later the pod is still not ready: the role replica is recreated
    later = reconcile(ms, snap(objs, NOW + 20)).stage
    assert deletes(later) == uids(PREFILL2) and later.blocker is None
    assert "for 30s restartGracePeriodSeconds" in later.actions[0].reason


def test_serving_group_recreate_deletes_every_pod_of_the_group():
    ms = pd(policy="ServingGroupRecreate", grace=5)
    objs = running(ms)
    restart(objs, "pd-1-decode-0-w-1", NOW - 3)
    stage = reconcile(ms, snap(objs)).stage
    assert stage.actions == ()
    assert stage.blocker.message == "waiting 2s restartGracePeriodSeconds before recreating ServingGroup pd-1"
    stage = reconcile(ms, snap(objs, NOW + 2)).stage
    assert deletes(stage) == uids(group_pods(1))
    assert "ServingGroupRecreate: recreating ServingGroup pd-1" in stage.actions[0].reason


def test_policy_none_deletes_only_the_failed_pod():
    ms = pd(policy="None", grace=30)
    objs = running(ms)
    restart(objs, "pd-2-prefill-0-w-1", NOW - 10)
    stage = reconcile(ms, snap(objs)).stage
    assert (
        stage.blocker.message
        == "waiting 20s restartGracePeriodSeconds before recreating pod pd-2-prefill-0-w-1 of pd-2"
    )
    stage = reconcile(ms, snap(objs, NOW + 25)).stage
    assert deletes(stage) == uids(["pd-2-prefill-0-w-1"])


def test_deleted_pod_restarts_the_rest_of_its_role_replica_once():
    ms = pd()
    objs = running(ms)
    recreate(objs, "pd-2-prefill-0-w-1", NOW - 100)  # kubectl delete / eviction; its StatefulSet brought it back
    stage = reconcile(ms, snap(objs)).stage
    # the whole replica, the young pod too, so that afterwards every pod is of one generation
    assert deletes(stage) == [
        ("pd-2-prefill-0-0", "uid-pd-2-prefill-0-0"),
        ("pd-2-prefill-0-w-1", "uid-pd-2-prefill-0-w-1-new"),
    ]
    assert "was recreated" in stage.actions[0].reason
    assert view(stage, 2).phase == PHASE and not view(stage, 2).ready  # every pod was Ready: marked Creating
    status = status_of(ms, snap(objs))
    assert status["availableReplicas"] == 2
    # upstream: a group not available keeps the rollout "active" (UpdateInProgress), naming the group
    assert [c["message"] for c in status["conditions"] if c["status"] == "True"] == [
        "Some groups is progressing: [2], Updated Groups are: [0 1 2]"
    ]


@pytest.mark.parametrize(
    "gap, restarted", [(30 + GENERATION_SLACK_SECONDS, False), (30 + GENERATION_SLACK_SECONDS + 1, True)]
)
def test_generation_rule_threshold_is_termination_grace_plus_slack(gap, restarted):
    ms = pd()
    objs = running(ms)
    recreate(objs, "pd-2-prefill-0-0", NOW - 200)  # the replica restarted: entry first,
    recreate(objs, "pd-2-prefill-0-w-1", NOW - 200 + gap)  # the worker's predecessor took longer to go
    stage = reconcile(ms, snap(objs)).stage
    assert bool(deletes(stage)) is restarted


def test_no_loop_after_the_restart_and_no_second_delete_while_terminating():
    ms = pd()
    objs = running(ms)
    recreate(objs, "pd-2-prefill-0-w-1", NOW - 100)
    terminating(objs, PREFILL2, NOW)  # the restart's deletes are in flight
    assert reconcile(ms, snap(objs, NOW + 1)).stage.actions == ()
    recreate(objs, "pd-2-prefill-0-0", NOW + 1)
    recreate(objs, "pd-2-prefill-0-w-1", NOW + 30)  # within terminationGracePeriodSeconds of its sibling
    stage = reconcile(ms, snap(objs, NOW + 100)).stage
    assert stage.actions == () and stage.complete


def test_policy_none_leaves_recreated_pods_alone():
    ms = pd(policy="None")
    objs = running(ms)
    recreate(objs, "pd-2-prefill-0-w-1", NOW - 100)
    assert reconcile(ms, snap(objs)).stage.actions == ()


def test_deleting_group_and_scaled_away_group_are_not_recovered():
    ms = pd()
    objs = running(ms)
    crash(objs, "pd-2-prefill-0-w-1", NOW - 1)
    smaller = pd(replicas=2)
    stage = reconcile(smaller, snap(objs)).stage  # the stage deletes group 2: Pulumi removes its StatefulSets
    assert "2" not in stage.group_revisions and stage.actions == ()
    for o in objs:
        if o["kind"] == "StatefulSet" and o["metadata"]["name"].startswith("pd-2-"):
            o["metadata"]["deletionTimestamp"] = "2026-01-01T00:16:00Z"
    assert reconcile(ms, snap(objs)).stage.actions == ()


def test_a_group_being_recovered_spends_no_rollout_budget_on_top():
    """maxUnavailable 1: group 1 (all pods Ready, mixed generations) is being recreated, so it is
    the unavailable one: the rollout replaces it first instead of taking group 2 down as well."""
    old = pd("vllm:1")
    objs = running(old)
    recreate(objs, "pd-1-decode-0-w-1", NOW - 100)
    new = pd("vllm:2")
    stage = reconcile(new, snap(objs)).stage
    replaced = [v.id for v in stage.groups if v.phase == "replacing"]
    assert replaced == ["1"]
    assert sorted(n for n, _ in deletes(stage)) == ["pd-1-decode-0-0", "pd-1-decode-0-w-1"]
    # without the recovery the planner would pick the highest ordinal
    healthy = reconcile(new, snap(running(old))).stage
    assert [v.id for v in healthy.groups if v.phase == "replacing"] == ["2"]


def test_unavailable_outdated_group_never_blocks_the_rollout_743():
    """kthena#743: group 0 runs a bad old revision and fails; the rollout replaces it (unhealthy
    outdated groups first) and recovery restarts it — nothing waits for it to become ready."""
    old = pd("vllm:1")
    objs = running(old)
    crash(objs, "pd-0-prefill-0-0", NOW - 5)
    new = pd("vllm:2")
    stage = reconcile(new, snap(objs)).stage
    assert stage.blocker is None
    assert [v.id for v in stage.groups if v.phase == "replacing"] == ["0"]
    assert stage.group_revisions["0"] == stage.target_revision
    assert sorted(n for n, _ in deletes(stage)) == ["pd-0-prefill-0-0", "pd-0-prefill-0-w-1"]


def test_failed_role_is_rebuilt_under_role_rolling_update_372():
    """kthena#372: under RoleRollingUpdate a failed role replica is still rebuilt while another
    role rolls (and the planner counts it as not ready)."""
    old = pd("vllm:1", strategy="RoleRollingUpdate")
    objs = running(old)
    crash(objs, "pd-0-prefill-0-w-1", NOW - 5)
    new = pd("vllm:1", strategy="RoleRollingUpdate", decode_image="vllm:2")  # only decode changes
    stage = reconcile(new, snap(objs)).stage
    assert "0/prefill/0" in stage.group_revisions  # still declared: its StatefulSets recreate the pods
    assert deletes(stage) == uids(["pd-0-prefill-0-0", "pd-0-prefill-0-w-1"])
    assert not view(stage, 0).ready
    # without a rollout the same failure is rebuilt the same way
    steady = reconcile(old, snap(objs)).stage
    assert deletes(steady) == uids(["pd-0-prefill-0-0", "pd-0-prefill-0-w-1"])


def test_status_marks_a_group_waiting_for_its_grace_period_not_available():
    ms = pd(grace=60)
    objs = running(ms)
    restart(objs, "pd-0-decode-0-w-1", NOW - 1)
    status = status_of(ms, snap(objs))
    assert status["availableReplicas"] == 2
    assert [c["message"] for c in status["conditions"] if c["status"] == "True"] == [
        "Some groups is progressing: [0], Updated Groups are: [0 1 2]"
    ]
