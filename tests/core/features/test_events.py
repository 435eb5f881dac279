"""Events of a reconcile (pulumi_lws.core.features.events): every action kind has its Event on the object
it concerns, with upstream's reason where upstream has one; blocker entered/cleared, rollout
started/completed and surge reclaimed on the workload; re-running the same reconcile records no
new Event object (deterministic names; action events are bumped, state events not re-recorded)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pulumi_lws.core.contract.stage import (
    WEBHOOK_LABELS_REASON,
    Action,
    Blocker,
    GroupView,
    Stage,
)
from pulumi_lws.core.features.events import (
    BLOCKER_CLEARED,
    COMPLETED,
    DEFAULT_REASONS,
    STARTED,
    SURGE_RECLAIMED,
    WorkloadRef,
    derive_events,
    report_events,
)
from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.workloads import workload_for

REF = WorkloadRef("LeaderWorkerSet", "leaderworkerset.x-k8s.io/v1", "default", "web")
LWS_REASONS = workload_for("LeaderWorkerSet").upstream.event_reasons
ACTIONS = (
    Action("label", "Pod", "web-1", {"labels": {"a": "b"}}, uid="u1"),
    Action("annotate", "StatefulSet", "web", {"annotations": {"x": "1"}}, uid="u2"),
    Action("ungate", "Pod", "web-2", {"gate": "g"}, uid="u3"),
    Action("set-condition", "Pod", "web-3", {"type": "GroupReady", "status": "True"}, uid="u4"),
    Action("finalize", "Pod", "web-4", {"add": ["f"]}, uid="u5"),
    Action("delete", "Pod", "web-5", {"propagation": "Foreground"}, uid="u6"),
    Action("disown", "Service", "web", {"owners": ["cr"]}, uid="u7"),
)


def stage(*, actions=(), blocker=None, complete=False, groups=None, notes=(), replicas=2, target="rev2") -> Stage:
    groups = groups if groups is not None else (GroupView("0", "rev1", True, False), GroupView("1", target, True, True))
    return Stage(
        policy="lws/ordinal",
        target_revision=target,
        replicas=replicas,
        partition=0,
        group_revisions={g.id: target for g in groups},
        groups=tuple(groups),
        actions=tuple(actions),
        blocker=blocker,
        complete=complete,
        notes=tuple(notes),
    )


def recorded(events, previous=()):
    """What the cluster shows after recording ``events`` (a SimCluster as the sink)."""
    cluster = SimCluster()
    for ev in previous:
        cluster.store.create(ev)
    cluster.record_events("default", events)
    return cluster.list("Event")


def test_every_action_kind_has_its_event_on_the_object_it_concerns():
    events = derive_events(REF, stage(actions=ACTIONS), reasons=LWS_REASONS)
    by_object = {
        (e.regarding["kind"], e.regarding["name"]): e for e in events if e.regarding["kind"] != "LeaderWorkerSet"
    }
    assert len(by_object) == len(ACTIONS)
    for action in ACTIONS:
        event = by_object[(action.kind, action.name)]
        assert event.regarding["uid"] == action.uid
        assert event.reason == LWS_REASONS.get(action.verb, DEFAULT_REASONS[action.verb])
    assert by_object[("Pod", "web-2")].reason == "GroupReplacementAdmitted"  # upstream's reasons
    assert by_object[("Pod", "web-5")].reason == "RecreateGroup" and by_object[("Pod", "web-5")].action == "Delete"
    assert {e.reason for e in events} >= set(DEFAULT_REASONS.values()) - {"GateRemoved", "ObjectDeleted"}


def test_webhook_label_bookkeeping_has_no_event():
    action = Action("label", "Pod", "web-0", {"labels": {"k": "v"}}, reason=WEBHOOK_LABELS_REASON)
    assert not [e for e in derive_events(REF, stage(actions=(action,))) if e.regarding["kind"] == "Pod"]


def test_failure_notes_become_upstream_events_on_the_workload():
    notes = (
        "RecreateGroup: group 2: worker web-2-1 failed",
        "GroupRestartBackoff: group 1 recreates in 8s (restart 2)",
        "plain note without a reason",
    )
    events = [e for e in derive_events(REF, stage(notes=notes)) if e.reason not in (STARTED,)]
    assert [(e.reason, e.type, e.regarding["kind"]) for e in events] == [
        ("RecreateGroup", "Normal", "LeaderWorkerSet"),
        ("GroupRestartBackoff", "Warning", "LeaderWorkerSet"),
    ]
    later = derive_events(REF, stage(notes=("GroupRestartBackoff: group 1 recreates in 3s (restart 2)",)))
    assert events[1].name in {e.name for e in later}  # the same backoff, bumped: not a new Event per second


def test_blocker_entered_once_then_cleared_once():
    blocked = stage(blocker=Blocker("unschedulable", "group 1 cannot be scheduled"))
    first = recorded(derive_events(REF, blocked))
    assert [e["reason"] for e in first if e["reason"] not in (STARTED,)] == ["GroupUnschedulable"]
    assert derive_events(REF, blocked, first) == ()  # planned twice: nothing new
    cleared = derive_events(REF, stage(), first)
    assert [e.reason for e in cleared] == [BLOCKER_CLEARED]
    after = recorded(cleared, first)
    assert derive_events(REF, stage(), after) == ()
    again = derive_events(REF, blocked, after)  # re-entered: the entered Event is bumped, not duplicated
    assert [e.name for e in again] == [e["metadata"]["name"] for e in first if e["reason"] == "GroupUnschedulable"]


def test_rollout_started_then_completed_once():
    started = recorded(derive_events(REF, stage()))
    assert [e["reason"] for e in started] == [STARTED]
    assert derive_events(REF, stage(), started) == ()
    done = stage(complete=True, groups=(GroupView("0", "rev2", True, True), GroupView("1", "rev2", True, True)))
    completed = derive_events(REF, done, started)
    assert [e.reason for e in completed] == [COMPLETED] and "promoted" in completed[0].message
    assert derive_events(REF, done, recorded(completed, started)) == ()


def test_surge_reclaimed_is_upstreams_groups_progressing():
    groups = (
        GroupView("0", "rev2", True, True, index=0),
        GroupView("1", "rev2", True, True, index=1),
        GroupView("2", "rev2", True, True, surge=True, index=2),
    )
    events = derive_events(REF, stage(groups=groups, replicas=2))
    [surge] = [e for e in events if e.reason == SURGE_RECLAIMED]
    assert surge.message == "deleting surge replica web-2" and surge.action == "Delete"
    assert not [
        e for e in derive_events(REF, stage(groups=groups, replicas=2), recorded(events)) if e.reason == SURGE_RECLAIMED
    ]


def test_the_same_reconcile_twice_creates_no_new_event_object():
    cluster = SimCluster()
    s = stage(
        actions=ACTIONS,
        blocker=Blocker("waiting-for-groups", "group 0 not ready"),
        notes=("RecreateGroup: group 2: worker failed",),
    )
    first = report_events(cluster, REF, s, LWS_REASONS)
    names = sorted(e["metadata"]["name"] for e in cluster.list("Event"))
    second = report_events(cluster, REF, s, LWS_REASONS)
    events = cluster.list("Event")
    assert sorted(e["metadata"]["name"] for e in events) == names and len(names) == len(first)
    counts = {e["reason"]: e["count"] for e in events}
    assert counts["GroupReplacementAdmitted"] == 2 and counts[STARTED] == 1 and counts["BlockerEntered"] == 1
    assert all(line.endswith("count 2") for line in second)
    assert all(e["metadata"]["labels"]["pulumi-lws.io/workload-name"] == "web" for e in events)


def test_an_actuator_without_events_records_nothing():
    class Plain:
        def execute(self, namespace, actions):
            return []

    assert report_events(Plain(), REF, stage(actions=ACTIONS)) == []


verbs = st.sampled_from(ACTIONS)
codes = st.sampled_from([None, "unschedulable", "waiting-for-groups", "no-availability-budget"])


@settings(max_examples=60, deadline=None)
@given(actions=st.lists(verbs, max_size=5), code=codes, complete=st.booleans())
def test_property_rerunning_any_stage_adds_no_event_object(actions, code, complete):
    cluster = SimCluster()
    s = stage(actions=actions, blocker=Blocker(code, "why") if code else None, complete=complete)
    report_events(cluster, REF, s, LWS_REASONS)
    before = {e["metadata"]["name"]: e["count"] for e in cluster.list("Event")}
    report_events(cluster, REF, s, LWS_REASONS)
    after = {e["metadata"]["name"]: e["count"] for e in cluster.list("Event")}
    assert set(after) == set(before)
    assert all(after[n] - before[n] in (0, 1) for n in after)
