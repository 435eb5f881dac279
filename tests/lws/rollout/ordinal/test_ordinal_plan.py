"""plan_ordinal on Snapshots: observation, fixed point, group revisions, blockers, RolloutFirst, status."""

from __future__ import annotations

from support.fixtures_ordinal import catalog_for, make_lws, snapshot_from_chars

from pulumi_lws.lws.reconcile import ReconcileOptions
from pulumi_lws.lws.revision import revision_key
from pulumi_lws.lws.rollout.budget import DEADLOCK_717
from pulumi_lws.lws.rollout.ordinal.groups import observe_ordinal_groups
from pulumi_lws.lws.rollout.ordinal.planner import plan_ordinal
from pulumi_lws.lws.status.ordinal import ordinal_status

OLD = make_lws(image="v1")


def plan(new, chars, *, sts_key="old", order="ScaleFirst", **kw):
    key = {"old": revision_key(OLD), "new": revision_key(new), None: None}[sts_key]
    snap = snapshot_from_chars(chars, old=OLD, new=new, sts_key=key, **kw)
    return plan_ordinal(new, snap, catalog_for(new, snap), ReconcileOptions(update_order=order)), snap


def test_observe_groups_legend_and_surge():
    new = make_lws(image="v2", ms=2)
    snap = snapshot_from_chars("oxUu-U", old=OLD, new=new, sts_key=revision_key(new), unschedulable=frozenset({3}))
    groups = observe_ordinal_groups(new, snap, revision_key(new))
    assert "".join(g.char for g in groups) == "oxUu-U"
    assert [g.surge for g in groups] == [False] * 4 + [True] * 2
    assert groups[3].phase == "unschedulable" and groups[1].phase == "pending"
    assert groups[0].revision == revision_key(OLD) and groups[2].revision == revision_key(new)


def test_no_leader_sts_is_case_1():
    new = make_lws(image="v2")
    stage, _ = plan(new, "", sts_key=None)
    assert (stage.replicas, stage.partition, stage.case) == (4, 0, "1")
    assert set(stage.group_revisions.values()) == {revision_key(new)}
    assert not stage.complete and stage.blocker is None


def test_template_change_applies_the_fixed_point_and_keeps_old_groups_old():
    new = make_lws(image="v2", mu=2, ms=2)
    stage, _ = plan(new, "oooo", partition=0)
    assert (stage.replicas, stage.partition, stage.case) == (6, 2, "5")
    old, tgt = revision_key(OLD), revision_key(new)
    assert stage.group_revisions == {"0": old, "1": old, "2": tgt, "3": tgt, "4": tgt, "5": tgt}
    assert [(p.replicas, p.partition) for p in stage.remaining] == [(6, 0), (4, 0)]


def test_rerun_is_identical_and_never_pushes_target_below_partition():
    new = make_lws(image="v2", mu=2, ms=2)
    key = revision_key(new)
    snap = snapshot_from_chars("oouuUu", old=OLD, new=new, sts_key=key, partition=2, annotation=4)
    cat = catalog_for(new, snap)
    a, b = plan_ordinal(new, snap, cat, ReconcileOptions()), plan_ordinal(new, snap, cat, ReconcileOptions())
    assert a == b
    assert all(rev != key for i, rev in a.group_revisions.items() if int(i) < a.partition)
    assert a.blocker is not None and a.blocker.code == "waiting-for-groups"
    assert a.blocker.message == "waiting for groups 2,3,5 to become ready"


def test_absent_group_below_partition_gets_nearest_old_revision():
    new = make_lws(image="v2")
    stage, _ = plan(new, "o-oU", sts_key="new", partition=3, annotation=4)
    assert stage.group_revisions["1"] == revision_key(OLD)


def test_complete_when_everything_updated_and_ready():
    new = make_lws(image="v2")
    stage, snap = plan(new, "UUUU", sts_key="new")
    assert stage.complete and stage.blocker is None and (stage.replicas, stage.partition, stage.case) == (4, 0, "3")
    status = ordinal_status(new.name, stage.groups, new.replicas, 0, snap.get("StatefulSet", "demo"))
    assert (status["readyReplicas"], status["updatedReplicas"], status["updateDone"]) == (4, 4, True)
    assert [c["type"] for c in status["conditions"] if c["status"] == "True"] == ["Available"]


def test_status_update_in_progress():
    new = make_lws(image="v2")
    stage, snap = plan(new, "ooUu", sts_key="new", partition=2)
    status = ordinal_status(new.name, stage.groups, new.replicas, 0, snap.get("StatefulSet", "demo"))
    assert (status["readyReplicas"], status["updatedReplicas"]) == (3, 2)
    assert {c["type"] for c in status["conditions"] if c["status"] == "True"} == {"Progressing", "UpdateInProgress"}


def test_717_deadlock_scale_first():
    """1 x 8 GPU -> 2 x 4 GPU on an 8-GPU cluster: the added group never schedules."""
    old = make_lws(replicas=1, image="v1", gpus=8)
    new = make_lws(replicas=2, image="v1", gpus=4)
    key = revision_key(new)
    snap = snapshot_from_chars(
        "ou", old=old, new=new, sts_key=key, partition=1, annotation=2, unschedulable=frozenset({1})
    )
    stage = plan_ordinal(new, snap, catalog_for(new, snap), ReconcileOptions())
    assert (stage.replicas, stage.partition) == (2, 1)
    assert stage.blocker is not None and stage.blocker.code == DEADLOCK_717
    assert stage.blocker.groups == ("1",) and len(stage.blocker.remedies) >= 2
    assert "two steps" in stage.blocker.remedies[0] and "maxUnavailable" in stage.blocker.remedies[1]


def test_rollout_first_replaces_old_group_before_scaling_up():
    old = make_lws(replicas=1, image="v1", gpus=8)
    new = make_lws(replicas=2, image="v1", gpus=4)
    snap = snapshot_from_chars("o", old=old, new=new, sts_key=revision_key(old))
    stage = plan_ordinal(new, snap, catalog_for(new, snap), ReconcileOptions(update_order="RolloutFirst"))
    assert (stage.replicas, stage.partition, stage.case) == (1, 0, "rf")  # no added ordinal yet
    assert stage.group_revisions == {"0": revision_key(new)}
    assert [(p.replicas, p.partition) for p in stage.remaining] == [(2, 0)]
    # group 0 comes back on the new revision: now scale up
    snap2 = snapshot_from_chars("U", old=old, new=new, sts_key=revision_key(new), annotation=2)
    stage2 = plan_ordinal(new, snap2, catalog_for(new, snap2), ReconcileOptions(update_order="RolloutFirst"))
    assert (stage2.replicas, stage2.partition) == (2, 0)


def test_rollout_first_from_annotation():
    old = make_lws(replicas=1, image="v1", gpus=8)
    new = make_lws(replicas=2, image="v1", gpus=4, annotations={"pulumi-lws.io/update-order": "RolloutFirst"})
    snap = snapshot_from_chars("o", old=old, new=new, sts_key=revision_key(old))
    from pulumi_lws.lws.reconcile import reconcile

    assert reconcile(new, snap).stage.replicas == 1


def test_user_partition_keeps_surge_reported_as_blocker():
    new = make_lws(replicas=1, image="v2", mu=0, ms=1, partition=1)
    stage, _ = plan(new, "oU", sts_key="new", partition=1, annotation=1)
    assert (stage.replicas, stage.partition, stage.complete) == (2, 1, False)
    assert stage.blocker is not None and stage.blocker.code == "surge-held-by-partition"


def test_user_partition_complete_without_surge():
    new = make_lws(replicas=4, image="v2", partition=2)
    stage, _ = plan(new, "ooUU", sts_key="new", partition=2)
    assert stage.complete and stage.partition == 2
    assert stage.group_revisions["0"] == revision_key(OLD) and stage.group_revisions["3"] == revision_key(new)


def test_717_under_rollout_first_is_not_a_deadlock_plan():
    """RolloutFirst never creates the added ordinal while the old group is there."""
    old = make_lws(replicas=4, image="v1", gpus=8)
    new = make_lws(replicas=8, image="v1", gpus=4)
    snap = snapshot_from_chars("oooo", old=old, new=new, sts_key=revision_key(old))
    stage = plan_ordinal(new, snap, catalog_for(new, snap), ReconcileOptions(update_order="RolloutFirst"))
    assert (stage.replicas, stage.partition) == (4, 3)
    assert [(p.replicas, p.partition) for p in stage.remaining] == [(4, 2), (4, 1), (4, 0), (8, 0)]
    assert any("RolloutFirst" in n for n in stage.notes)


def test_nothing_to_predict_once_the_shape_is_final() -> None:
    """Partition 0 and replicas R with no user partition: upstream's Case 3 from here on, so the
    prediction is complete without walking groups one by one (fast creation): one stage, every
    group ready (as the other APIs predict a creation), or none when every group already is."""
    from pulumi_lws.core.contract.stage import PredictedStage
    from pulumi_lws.lws.rollout.ordinal.algo import Decision, LeaderSts, RolloutInputs
    from pulumi_lws.lws.rollout.ordinal.predict import at_rest_from_here, remaining_stages

    creating = RolloutInputs(
        replicas=10, max_unavailable=1, max_surge=2, user_partition=0, sts=None, template_changed=False, states=""
    )
    assert at_rest_from_here(creating, Decision(0, 10, "1"))
    assert remaining_stages(creating) == ((PredictedStage(10, 0, "U" * 10, complete=True),), True)
    settled = RolloutInputs(
        replicas=3,
        max_unavailable=1,
        max_surge=0,
        user_partition=0,
        sts=LeaderSts(3, 0, 3),
        template_changed=False,
        states="UUU",
    )
    assert remaining_stages(settled) == ((), True)
    with_partition = RolloutInputs(
        replicas=10,
        max_unavailable=1,
        max_surge=2,
        user_partition=3,
        sts=LeaderSts(10, 3, 10),
        template_changed=False,
        states="oooUUUUUUU",
    )
    assert not at_rest_from_here(with_partition, Decision(3, 10, "5"))
    surging = RolloutInputs(
        replicas=4,
        max_unavailable=2,
        max_surge=2,
        user_partition=0,
        sts=LeaderSts(4, 0, 4),
        template_changed=True,
        states="oooo",
    )
    stages, finished = remaining_stages(surging)
    assert finished and [(s.replicas, s.partition) for s in stages][-1] == (4, 0) and len(stages) >= 2
