"""Hash-mode blockers (lws/rollout/hash/blockers.py) and terminal leaders in the planner (lws/rollout/hash/planner.py),
on hand-built snapshots: one test per rule."""

from __future__ import annotations

from support.fixtures_hash import NS, cr, deployment, key_of, leader, make_lws, rev, snap, worker, worker_sts

from pulumi_lws.core.contract.stage import GroupView
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.reconcile import reconcile
from pulumi_lws.lws.rollout.budget import DEADLOCK_717
from pulumi_lws.lws.rollout.hash import blockers as HB
from pulumi_lws.lws.rollout.hash.planner import leader_address
from pulumi_lws.lws.rollout.ordinal.planner import WAITING
from pulumi_lws.lws.status.summary import lws_status

V1, V2 = make_lws(image="v1", replicas=3, ms=0), make_lws(image="v2", replicas=3, ms=0)
R1, R2 = rev(V1), rev(V2)
NO_FIT = "0/6 nodes are available: 6 Insufficient nvidia.com/gpu."


def unschedulable(pod: dict, message: str = NO_FIT) -> dict:
    """The scheduler tried and failed: Pending, PodScheduled=False/Unschedulable."""
    pod["status"] = {
        "phase": "Pending",
        "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}],
    }
    return pod


def settled(name: str, revision: str, *, created: int, ready: bool = True) -> dict:
    """An admitted leader the planner has nothing to do for (identity, address, group-ready in sync)."""
    p = leader(name, revision, created=created, gated=False, ready=ready, group_ready="True" if ready else "False")
    p["metadata"]["annotations"][L.LEADER_ADDRESS] = leader_address("web", NS, key_of(p))
    return p


def view(gid: str, *, updated: bool, ready: bool = False, phase: str = "", leader_name: str | None = None) -> GroupView:
    return GroupView(
        id=gid,
        revision=R2 if updated else R1,
        ready=ready,
        updated=updated,
        phase=phase,
        key=gid * 5,
        leader=leader_name or f"web-{gid}",
    )


def old_pair() -> list[dict]:
    a, b = settled("web-a", R1, created=0), settled("web-b", R1, created=1)
    return [a, worker_sts(a), b, worker_sts(b)]


def stuck_new(**kw) -> dict:
    n = settled("web-n", R2, created=10, ready=False, **kw)
    return unschedulable(n)


# ---- unschedulable groups ------------------------------------------------------------------------


def test_unschedulable_groups_name_the_first_stuck_pod_and_the_scheduler_message():
    n = stuck_new()
    w_ok, w_stuck = worker(n, 1), unschedulable(worker(n, 2), "0/6 nodes: node(s) didn't match selector")
    m = settled("web-m", R2, created=11, ready=False)
    views = [view("n", updated=True, leader_name="web-n"), view("m", updated=True, leader_name="web-m")]
    views = [GroupView(**{**v.__dict__, "key": key_of(p)}) for v, p in zip(views, (n, m))]
    stuck = HB.unschedulable_groups(NS, views, [n, w_ok, w_stuck, m, unschedulable(worker(m, 1))])
    assert stuck == [HB.StuckGroup("n", "web-n", NO_FIT), HB.StuckGroup("m", f"web-{key_of(m)[:8]}-1", NO_FIT)]


def test_gated_old_and_terminating_groups_are_not_unschedulable():
    gated = leader("web-g", R2)  # PodScheduled=False reason SchedulingGated: our gate, not the scheduler
    old = unschedulable(leader("web-o", R1, gated=False))
    dying = unschedulable(leader("web-d", R2, gated=False, deleting=True))
    views = [
        view("g", updated=True, phase="gated", leader_name="web-g"),
        view("o", updated=False, leader_name="web-o"),
        view("d", updated=True, phase="terminating", leader_name="web-d"),
    ]
    assert HB.unschedulable_groups(NS, views, [gated, old, dying]) == []


# ---- the Deployment budget and #717 ----------------------------------------------------------------


def test_deployment_forbids_termination_at_min_available():
    two_old_one_new = [
        view("a", updated=False, ready=True),
        view("b", updated=False, ready=True),
        view("n", updated=True),
    ]
    assert HB.deployment_forbids_termination(V2, two_old_one_new)  # available 2 = R - MU
    three_old = [
        view("a", updated=False, ready=True),
        view("b", updated=False, ready=True),
        view("c", updated=False, ready=True),
        view("n", updated=True),
    ]
    assert not HB.deployment_forbids_termination(V2, three_old)  # one old group may still go
    assert not HB.deployment_forbids_termination(make_lws(image="v2", replicas=3, mu=2, ms=0), two_old_one_new)


def test_717_needs_stuck_new_groups_ready_old_holders_and_a_forbidding_budget():
    views = [view("a", updated=False, ready=True), view("b", updated=False, ready=True), view("n", updated=True)]
    stuck = [HB.StuckGroup("n", "web-n", NO_FIT)]
    b = HB.deadlock_717(V2, stuck, views)
    assert b is not None and b.code == DEADLOCK_717 and b.groups == ("n",)
    assert "G-n on the new revision is unschedulable (web-n: " + NO_FIT in b.message
    assert "old groups G-a, G-b hold" in b.message and "maxUnavailable=1" in b.message
    assert b.remedies[0] == HB.TWO_STEPS and "(newReplicas - oldReplicas) + 1 (here 2)" in b.remedies[1]
    assert HB.deadlock_717(V2, [], views) is None
    assert HB.deadlock_717(V2, stuck, [view("n", updated=True)]) is None  # nothing old holds capacity
    assert HB.deadlock_717(make_lws(image="v2", replicas=3, mu=2, ms=0), stuck, views) is None


def test_717_remedy_matches_the_seeds_figures():
    one_old = [view("a", updated=False, ready=True)]  # 1 x 8 GPU -> 2 x 4 GPU: maxUnavailable 2
    assert "(here 2)" in HB.remedies_717(make_lws(replicas=2, ms=0), one_old)[1]
    four_old = [view(c, updated=False, ready=True) for c in "abcd"]  # 4 -> 8: maxUnavailable 5
    assert "(here 5)" in HB.remedies_717(make_lws(replicas=8, ms=0), four_old)[1]


def test_unschedulable_blocker_lists_groups_pods_and_messages():
    b = HB.unschedulable_blocker([HB.StuckGroup("n", "web-n", NO_FIT), HB.StuckGroup("m", "web-m-1", "taint")])
    assert b.code == HB.UNSCHEDULABLE and b.groups == ("n", "m") and b.remedies == HB.UNSCHEDULABLE_REMEDIES
    assert (
        b.message
        == f"groups G-n, G-m on the new revision are unschedulable: G-n pod web-n: {NO_FIT}; G-m pod web-m-1: taint"
    )


# ---- waiting and the order ------------------------------------------------------------------------


def test_waiting_blocker_names_what_the_rollout_waits_for():
    w = HB.waiting_blocker
    assert (
        w(V2, [view("n", updated=True), view("a", updated=False, ready=True)]).message
        == "waiting for group G-n to become ready"
    )
    assert (
        w(V2, [view("n", updated=True, ready=True), view("d", updated=False, phase="terminating")]).message
        == "waiting for group G-d to be removed"
    )
    assert (
        w(V2, [view("a", updated=False, ready=True), view("b", updated=False)]).message
        == "waiting for old groups G-a, G-b to be replaced by the leader Deployment"
    )
    assert "G-x to be recovered" in w(V2, [view("x", updated=True, phase="exhausted")]).message
    assert (
        w(V2, [view("n", updated=True, ready=True)]).message
        == "waiting for the leader Deployment to create 2 more group(s) (1 of 3 admitted)"
    )
    assert all(w(V2, vs).code == WAITING for vs in ([view("n", updated=True)], []))


def test_blocker_order_and_at_rest():
    n = stuck_new()
    views = [
        view("a", updated=False, ready=True),
        view("b", updated=False, ready=True),
        GroupView(id="n", revision=R2, ready=False, updated=True, key=key_of(n), leader="web-n"),
    ]
    hb = HB.hash_blocker
    assert hb(V2, views, [n], ["g"], 1, complete=False, at_rest=False).code == DEADLOCK_717
    mu2 = make_lws(image="v2", replicas=3, mu=2, ms=0)
    assert hb(mu2, views, [n], ["g"], 1, complete=False, at_rest=False).code == HB.UNSCHEDULABLE
    fine = [view("a", updated=False, ready=True), view("n", updated=True)]
    assert hb(V2, fine, [], ["g"], 1, complete=False, at_rest=False).code == HB.DEFERRED
    assert hb(V2, fine, [], [], 0, complete=False, at_rest=True).code == WAITING
    assert hb(V2, fine, [], [], 0, complete=False, at_rest=False) is None  # the stage itself is progress
    assert hb(V2, views, [n], ["g"], 1, complete=True, at_rest=True) is None


# ---- through the planner ----------------------------------------------------------------------------


def test_planner_reports_717_for_a_stuck_new_group_behind_ready_old_groups():
    objs = [cr(V1, 1), cr(V2, 2), *old_pair(), stuck_new(), deployment(R2, replicas=3, ready=2, updated=1)]
    st = reconcile(V2, snap(*objs)).stage
    assert st.blocker is not None and st.blocker.code == DEADLOCK_717 and not st.complete
    mu2 = make_lws(image="v2", replicas=3, mu=2, ms=0)
    st2 = reconcile(mu2, snap(*objs)).stage
    assert st2.blocker is not None and st2.blocker.code == HB.UNSCHEDULABLE and NO_FIT in st2.blocker.message


def test_planner_waits_for_groups_only_at_rest():
    n = settled("web-n", R2, created=10, ready=False)
    objs = [cr(V1, 1), cr(V2, 2), *old_pair(), n, worker_sts(n, ready=False)]
    st = reconcile(V2, snap(*objs, deployment(R2, replicas=3, ready=2, updated=1))).stage
    assert st.actions == () and st.blocker is not None and st.blocker.code == WAITING
    assert st.blocker.message == f"waiting for group G-{key_of(n)[:8]} to become ready"
    old_deploy = deployment(R1, replicas=3, ready=2, updated=0)  # the Deployment has not taken the new template yet
    assert reconcile(V2, snap(*objs, old_deploy)).stage.blocker is None


# ---- terminal leaders in the planner ----------------------------------------------------------------


def failed_pair(policy: str = "PostTermination"):
    lws = make_lws(image="v2", replicas=2, policy=policy)
    r = rev(lws)
    a = settled("web-a", r, created=0)
    f = leader("web-f", r, created=1, gated=False, phase="Failed", group_ready="False")
    n = leader("web-n", r, created=20)  # the ReplicaSet's replacement, born gated
    objs = [cr(lws), a, worker_sts(a), f, worker_sts(f, ready=False), worker(f, 1), worker(f, 2), n]
    return lws, objs, f, n


def test_failed_leader_is_a_terminating_group_with_no_actions_nor_objects():
    lws, objs, f, _n = failed_pair()
    res = reconcile(lws, snap(*objs))
    g = next(v for v in res.stage.groups if v.leader == "web-f")
    assert g.phase == "terminating" and not g.workers and not g.ready
    assert not [a for a in res.stage.actions if a.name == "web-f" and a.verb != "delete"]
    assert ("delete", "web-f") in [(a.verb, a.name) for a in res.stage.actions]  # failure handling tears it down
    host = f"web-{key_of(f)[:8]}"
    assert host not in {m["metadata"]["name"] for m in res.manifests if m["kind"] in ("StatefulSet", "Service")}
    assert any("web-f" in note and "Failed" in note for note in res.stage.notes)


def test_failed_leader_frees_its_slot_post_termination_after_its_pods_are_gone():
    lws, objs, f, _n = failed_pair()
    st = reconcile(lws, snap(*objs)).stage
    assert "ungate" not in [a.verb for a in st.actions if a.name == "web-n"]  # its pods still exist
    assert st.blocker is not None and st.blocker.code == HB.DEFERRED
    gone = [
        o
        for o in objs
        if o is not f
        and (o.get("metadata") or {}).get("labels", {}).get(L.GROUP_INDEX) != key_of(f)
        and o["metadata"]["name"] != f"web-{key_of(f)[:8]}"
    ]
    st2 = reconcile(lws, snap(*gone)).stage
    assert "ungate" in [a.verb for a in st2.actions if a.name == "web-n"]  # not held by the revision cap


def test_failed_leader_replacement_is_admitted_at_once_when_immediate():
    lws, objs, _f, _n = failed_pair("Immediate")
    st = reconcile(lws, snap(*objs)).stage
    assert "ungate" in [a.verb for a in st.actions if a.name == "web-n"]


def test_failed_leader_is_not_counted_in_status():
    lws, objs, _f, _n = failed_pair()
    s = snap(*objs, deployment(rev(lws), replicas=2, ready=1, updated=2))
    status = lws_status(lws, s, reconcile(lws, s).stage)
    assert (status["replicas"], status["readyReplicas"], status["updatedReplicas"]) == (2, 1, 2)  # web-a + web-n


# ---- in the simulator: the seeds' 1 x 8 GPU -> 2 x 4 GPU example, and its remedy --------------------


def test_sim_717_is_named_and_the_max_unavailable_remedy_unblocks_it():
    from support.reliability_helpers import Harness, final_state_problems, lws_manifest

    node = [
        {
            "name": "gpu-0",
            "labels": {"kubernetes.io/hostname": "gpu-0"},
            "capacity": {"cpu": 64, "memory": "512Gi", "nvidia.com/gpu": 8},
        }
    ]
    spec = dict(size=1, hash_mode=True, ms=0)
    h = Harness.create(lws_manifest(replicas=1, image="img:1", gpus=8, mu=1, **spec), nodes=node)
    h.change_spec(lws_manifest(replicas=2, image="img:2", gpus=4, mu=1, **spec))
    for _ in range(20):
        h.up()
        h.check()
        h.advance(2.0)
    blocker = h.last.stage.blocker
    assert blocker is not None and blocker.code == DEADLOCK_717 and "(here 2)" in blocker.remedies[1]
    assert h.view().available == 1  # the old group keeps serving
    h.change_spec(lws_manifest(replicas=2, image="img:2", gpus=4, mu=2, **spec))  # the remedy
    for _ in range(40):
        h.up()
        h.check()
        if h.converged():
            break
        h.advance(2.0)
    assert h.converged() and final_state_problems(h) == []
