"""Hash identity while paused: the held-groups record and the recovery admissions
(:mod:`pulumi_lws.lws.rollout.failure.hash_paused`), on hand-made leader pods."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from support.fixtures_hash import NAME, NS, leader, make_lws

from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.core.contract.stage import Action, Stage
from pulumi_lws.core.features.hold import RECOVERY_PARAM
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.rollout.failure.hash_paused import (
    HELD_GROUPS_ANNOTATION,
    dump_held,
    held_record,
    parse_held,
    recovery_admissions,
    with_paused_recovery,
)
from pulumi_lws.lws.rollout.hash.admission import is_gated

OLD, NEW = "aaaaaaaa", "bbbbbbbb"


def deployment(*, paused: bool, held: str | None) -> dict:
    ann = {HELD_GROUPS_ANNOTATION: held} if held is not None else {}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": NAME, "namespace": NS, "uid": "d-uid", "annotations": ann},
        "spec": {"replicas": 4, "paused": paused},
    }


def stage(actions=()) -> Stage:
    return Stage(
        policy="lws/hash", target_revision=NEW, replicas=4, partition=None, group_revisions={}, actions=tuple(actions)
    )


def test_record_round_trips_and_rejects_malformed_values():
    assert parse_held(dump_held({OLD: 3, NEW: 1})) == {OLD: 3, NEW: 1}
    assert dump_held({OLD: 0, NEW: 2}) == f"{NEW}=2"
    assert parse_held(None) is None and parse_held("x=y") is None and parse_held("=3") is None


def test_the_record_is_read_only_while_the_observed_deployment_is_paused():
    leaders = [leader("a", OLD, gated=False), leader("b", NEW, gated=False), leader("s", NEW, created=5)]
    assert held_record(deployment(paused=True, held=f"{OLD}=2"), leaders) == ({OLD: 2}, False)
    # a record from an earlier pause (the Deployment was resumed since) is recomputed from what exists
    assert held_record(deployment(paused=False, held=f"{OLD}=2"), leaders) == ({OLD: 1, NEW: 1}, True)
    assert held_record(deployment(paused=False, held=None), leaders) == ({OLD: 1, NEW: 1}, True)


def test_only_the_replacement_of_a_recreated_group_is_admitted_never_a_surge_leader():
    lws = make_lws(replicas=4, policy="Immediate")
    surge = leader("s", NEW, created=1)  # made by the Deployment before the pause: gated, not held
    replacement = leader("r", NEW, created=9)  # made by the ReplicaSet after its group failed
    old_replacement = leader("o", OLD, created=8)
    leaders = [
        leader("a", OLD, gated=False),
        leader("b", OLD, gated=False),
        old_replacement,
        leader("c", NEW, gated=False),
        surge,
        replacement,
    ]
    held = {OLD: 3, NEW: 2}  # one group of each revision was recreated
    chosen = recovery_admissions(lws, leaders, leaders, held, NEW)
    assert [p["metadata"]["name"] for p in chosen] == ["o", "r"]
    assert recovery_admissions(lws, leaders, leaders, {OLD: 2, NEW: 1}, NEW) == []  # nothing missing


def test_post_termination_waits_for_the_failed_group_to_be_gone():
    lws = make_lws(replicas=2, policy="PostTermination")
    leaders = [leader("a", NEW, gated=False), leader("x", NEW, gated=False, deleting=True), leader("r", NEW, created=9)]
    assert recovery_admissions(lws, leaders, leaders, {NEW: 2}, NEW) == []
    gone = [leaders[0], leaders[2]]
    assert [p["metadata"]["name"] for p in recovery_admissions(lws, gone, gone, {NEW: 2}, NEW)] == ["r"]


def test_paused_stage_marks_the_admission_and_records_once_unpaused_drops_the_record():
    lws = make_lws(replicas=2, policy="Immediate")
    a, r = leader("a", NEW, gated=False), leader("r", NEW, created=9)
    snap = Snapshot.of([deployment(paused=True, held=f"{NEW}=2"), a, r])
    planned = Action("ungate", "Pod", "r", {"gate": "g"}, uid="uid-r")
    out = with_paused_recovery(lws, snap, stage([planned]), True)
    assert [(x.verb, x.name, x.params.get(RECOVERY_PARAM)) for x in out.actions] == [("ungate", "r", True)]
    fresh = Snapshot.of([deployment(paused=False, held=None), a, leader("x", NEW, gated=False, deleting=True)])
    first = with_paused_recovery(lws, fresh, stage(), True)
    assert [(x.verb, x.kind, x.params) for x in first.actions] == [
        ("annotate", "Deployment", {"annotations": {HELD_GROUPS_ANNOTATION: f"{NEW}=2"}})
    ]
    resumed = with_paused_recovery(lws, snap, stage([planned]), False)
    assert resumed.actions[0] == planned
    assert resumed.actions[1].params == {"annotations": {HELD_GROUPS_ANNOTATION: None}}


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([OLD, NEW]), st.sampled_from(["live", "gated", "deleting", "exhausted"])), max_size=10
    ),
    st.integers(0, 5),
    st.integers(0, 5),
    st.sampled_from(["Immediate", "PostTermination"]),
)
def test_property_no_revision_exceeds_what_the_pause_holds(shape, held_old, held_new, policy):
    lws = make_lws(replicas=4, policy=policy)
    leaders = [
        leader(
            f"p{i}",
            r,
            created=i,
            gated=s == "gated",
            deleting=s in ("deleting", "exhausted"),
            exhausted=s == "exhausted",
        )
        for i, (r, s) in enumerate(shape)
    ]
    held = {OLD: held_old, NEW: held_new}
    chosen = recovery_admissions(lws, leaders, leaders, held, NEW)
    for rev in (OLD, NEW):
        occupied = sum(1 for r, s in shape if r == rev and s in ("live", "exhausted"))
        admitted = sum(1 for p in chosen if p["metadata"]["labels"][L.TEMPLATE_REVISION_HASH] == rev)
        assert all(is_gated(p) for p in chosen)
        assert admitted <= max(0, held[rev] - occupied)
