"""Hash-mode planner (lws/rollout/hash/planner.py) against hand-built snapshots."""

from __future__ import annotations

import pytest
from support.fixtures_hash import NS, cr, deployment, key_of, leader, make_lws, rev, snap, worker, worker_sts

from pulumi_lws.lws import labels as L
from pulumi_lws.lws.reconcile import reconcile
from pulumi_lws.lws.rollout.hash.planner import group_host, leader_address

V1, V2 = make_lws(image="v1"), make_lws(image="v2")
R1, R2 = rev(V1), rev(V2)


def plan(lws, *objs):
    return reconcile(lws, snap(*objs)).stage


def verbs(stage, pod_name):
    return [a.verb for a in stage.actions if a.name == pod_name]


def action(stage, pod_name, verb):
    found = [a for a in stage.actions if a.name == pod_name and a.verb == verb]
    return found[0] if found else None


def view(stage, pod):
    return next(g for g in stage.groups if g.leader == pod["metadata"]["name"])


# ---- first leaders: identity, admission, workers ------------------------------------------------


def test_fresh_leaders_get_identity_address_ungate_and_workers():
    a = leader("web-a", R1, created=1, labelled=False)
    b = leader("web-b", R1, created=2, labelled=False)
    st = plan(V1, cr(V1), a, b)
    assert st.policy == "lws/hash" and st.replicas == 2 and st.partition is None
    for p in (a, b):
        key = key_of(p)
        assert verbs(st, p["metadata"]["name"]) == ["label", "annotate", "ungate", "set-condition"]
        assert action(st, p["metadata"]["name"], "label").params == {"labels": {L.GROUP_KEY: key, L.GROUP_INDEX: key}}
        assert action(st, p["metadata"]["name"], "label").uid == p["metadata"]["uid"]
        assert action(st, p["metadata"]["name"], "annotate").params == {
            "annotations": {L.LEADER_ADDRESS: f"web-{key[:8]}.{NS}"}
        }
        assert action(st, p["metadata"]["name"], "ungate").params == {"gate": L.GROUP_REPLACEMENT_GATE}
        cond = action(st, p["metadata"]["name"], "set-condition").params
        assert cond == {
            "type": L.GROUP_READY_CONDITION,
            "status": "False",
            "reason": "WorkerStatefulSetNotReady",
            "message": f"worker StatefulSet web-{key[:8]} is not created yet",
        }
        g = view(st, p)
        assert g.id == key[:8] and g.key == key and g.workers and g.revision == R1 and st.group_revisions[g.id] == R1
    assert st.blocker is None and not st.complete


def test_key_derivation_and_actions_are_stable_across_reruns():
    objs = [cr(V1), leader("web-a", R1, labelled=False), leader("web-b", R1, gated=False, ready=True)]
    first, second = plan(V1, *objs), plan(V1, *objs)
    assert first.actions == second.actions and first.groups == second.groups
    assert [g.id for g in first.groups] == [g.id for g in second.groups]


def test_settled_group_needs_no_actions():
    a = leader(
        "web-a",
        R1,
        gated=False,
        ready=True,
        group_ready="True",
        annotations={L.LEADER_ADDRESS: leader_address("web", NS, key_of(leader("web-a", R1)))},
    )
    st = plan(V1, cr(V1), a, worker_sts(a))
    assert st.actions == ()
    assert view(st, a).ready and view(st, a).workers and view(st, a).char == "U"


def test_admitted_leader_loses_deletion_cost():
    a = leader("web-a", R1, annotations={L.POD_DELETION_COST: "-100"})
    st = plan(V1, cr(V1), a)
    ann = action(st, "web-a", "annotate").params["annotations"]
    assert ann[L.POD_DELETION_COST] is None


# ---- the seeds' trace, stage 2 (PostTermination) and the Immediate variant ---------------------


def _stage2(lws):
    aaa = leader("web-aaa", R1, created=0, gated=False, ready=True, group_ready="True")
    bbb = leader("web-bbb", R1, created=1, gated=False, deleting=True)
    ccc = leader("web-ccc", R2, created=10)
    ddd = leader("web-ddd", R2, created=11)
    objs = [
        cr(V1, 1),
        cr(V2, 2),
        aaa,
        worker_sts(aaa),
        worker(aaa, 1),
        worker(aaa, 2),
        bbb,
        worker(bbb, 1, deleting=True),
        worker(bbb, 2),
        ccc,
        ddd,
    ]
    return reconcile(lws, snap(*objs)).stage, ccc, ddd, bbb


def test_post_termination_admits_oldest_g_minus_t():
    st, ccc, ddd, bbb = _stage2(V2)
    assert "ungate" in verbs(st, "web-ccc")
    assert "ungate" not in verbs(st, "web-ddd")
    assert action(st, "web-ddd", "annotate").params["annotations"][L.POD_DELETION_COST] == "-100"
    assert st.blocker is not None and st.blocker.code == "group-replacement-deferred"
    assert st.blocker.message == f"waiting for 1 terminating group to be removed before admitting G-{key_of(ddd)[:8]}"
    assert view(st, ddd).phase == "gated" and not view(st, ddd).workers
    assert view(st, ccc).workers and view(st, ccc).revision == R2
    assert view(st, bbb).phase == "terminating" and not view(st, bbb).workers


def test_immediate_admits_without_waiting():
    st, _ccc, _ddd, _ = _stage2(make_lws(image="v2", policy="Immediate"))
    assert "ungate" in verbs(st, "web-ccc") and "ungate" in verbs(st, "web-ddd")
    assert st.blocker is None


def test_t_drops_when_old_pods_are_gone():
    aaa = leader("web-aaa", R1, gated=False, ready=True, group_ready="True")
    ccc = leader("web-ccc", R2, created=10, gated=False)
    ddd = leader("web-ddd", R2, created=11)
    st = plan(V2, cr(V1, 1), cr(V2, 2), aaa, worker_sts(aaa), ccc, ddd)
    assert "ungate" in verbs(st, "web-ddd")


def test_per_revision_cap_defers_surplus_surge_leader_without_blocker():
    a = leader("web-a", R2, created=1, gated=False)
    b = leader("web-b", R2, created=2, gated=False)
    c = leader("web-c", R2, created=3)
    st = plan(V2, cr(V2), a, b, c)
    assert "ungate" not in verbs(st, "web-c") and st.blocker is None
    assert view(st, c).phase == "gated"


def test_exhausted_group_holds_back_one_replacement_even_when_immediate():
    lws = make_lws(image="v2", policy="Immediate")
    ex = leader("web-x", R2, created=0, gated=False, exhausted=True)
    n = leader("web-n", R2, created=5)
    st = reconcile(lws, snap(cr(V2), ex, n)).stage
    assert "ungate" not in verbs(st, "web-n")
    assert st.blocker and "1 terminating group" in st.blocker.message
    assert view(st, ex).phase == "exhausted" and not view(st, ex).workers


def test_outdated_gated_leader_is_never_admitted():
    o = leader("web-o", R1, created=0)
    st = plan(V2, cr(V1, 1), cr(V2, 2), o)
    assert "ungate" not in verbs(st, "web-o") and not view(st, o).workers


# ---- group-ready transitions ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "current,sts_ready,expected",
    [
        (None, False, ("False", "WorkerStatefulSetNotReady")),
        ("False", False, None),
        ("False", True, ("True", "WorkerStatefulSetReady")),
        ("True", True, None),
        ("True", False, ("False", "WorkerStatefulSetNotReady")),
    ],
)
def test_group_ready_condition_transitions(current, sts_ready, expected):
    a = leader("web-a", R1, gated=False, group_ready=current)
    st = plan(V1, cr(V1), a, worker_sts(a, ready=sts_ready))
    act = action(st, "web-a", "set-condition")
    if expected is None:
        assert act is None
    else:
        assert (act.params["status"], act.params["reason"]) == expected and act.uid == "uid-web-a"


def test_gated_and_deleting_leaders_get_no_condition():
    st, _, _, _ = _stage2(V2)
    assert action(st, "web-ddd", "set-condition") is None and action(st, "web-bbb", "set-condition") is None


def test_size_one_has_no_condition_and_no_workers():
    lws = make_lws(size=1)
    a = leader("web-a", rev(lws), gated=False, ready=True)
    st = reconcile(lws, snap(cr(lws), a)).stage
    assert action(st, "web-a", "set-condition") is None and not view(st, a).workers and view(st, a).ready


# ---- worker revision and startup policy -----------------------------------------------------------


def test_old_admitted_leader_keeps_workers_on_its_own_revision():
    old = leader("web-o", R1, gated=False, ready=True, group_ready="True")
    st = plan(V2, cr(V1, 1), cr(V2, 2), old, worker_sts(old))
    g = view(st, old)
    assert g.workers and g.revision == R1 and not g.updated and st.group_revisions[g.id] == R1


def test_leader_ready_waits_for_containers_ready_not_ready():
    lws = make_lws(startup="LeaderReady")
    r = rev(lws)
    not_yet = leader("web-a", r, gated=False, containers_ready=False)
    assert not view(reconcile(lws, snap(cr(lws), not_yet)).stage, not_yet).workers
    containers = leader("web-a", r, gated=False, containers_ready=True, ready=False)
    assert view(reconcile(lws, snap(cr(lws), containers)).stage, containers).workers


def test_leader_ready_keeps_existing_worker_statefulset():
    lws = make_lws(startup="LeaderReady")
    a = leader("web-a", rev(lws), gated=False, containers_ready=False)
    assert view(reconcile(lws, snap(cr(lws), a, worker_sts(a))).stage, a).workers


def test_exclusive_topology_waits_for_leader_node():
    lws = make_lws(annotations={L.EXCLUSIVE_TOPOLOGY: "rack"})
    r = rev(lws)
    assert not view(reconcile(lws, snap(cr(lws), leader("web-a", r, gated=False))).stage, leader("web-a", r)).workers
    placed = leader("web-a", r, gated=False, node="n1")
    assert view(reconcile(lws, snap(cr(lws), placed)).stage, placed).workers


# ---- completion and scale-down inputs ------------------------------------------------------------


def test_complete_only_when_deployment_settled_and_no_old_pods():
    a = leader("web-a", R2, gated=False, ready=True, group_ready="True")
    b = leader("web-b", R2, gated=False, ready=True, group_ready="True")
    base = [cr(V2, 2), a, b, worker_sts(a), worker_sts(b)]
    assert plan(V2, *base, deployment(R2, replicas=2, ready=2, updated=2)).complete
    assert not plan(V2, *base, deployment(R2, replicas=2, ready=1, updated=2)).complete
    assert not plan(V2, *base, deployment(R1, replicas=2, ready=2, updated=2)).complete
    old = leader("web-o", R1, gated=False, deleting=True)
    assert not plan(V2, cr(V1, 1), *base, old, deployment(R2, replicas=2, ready=2, updated=2)).complete


def test_not_ready_group_leader_is_marked_not_ready_for_the_replicaset():
    good = leader("web-g", R1, gated=False, ready=True, group_ready="True")
    bad = leader("web-b", R1, gated=False, ready=True, group_ready="True")
    st = plan(V1, cr(V1), good, bad, worker_sts(good), worker_sts(bad, ready=False))
    assert action(st, "web-b", "set-condition").params["status"] == "False"
    assert action(st, "web-g", "set-condition") is None
    assert view(st, good).ready and not view(st, bad).ready


def test_leaderless_workers_show_as_terminating_group():
    gone = leader("web-z", R1, gated=False)
    st = plan(V1, cr(V1), worker(gone, 1))
    assert [g.phase for g in st.groups] == ["terminating"] and st.groups[0].id == key_of(gone)[:8]


def test_group_host_names():
    assert group_host("web", "abcdef0123" * 4) == "web-abcdef01"


def test_statefulset_history_revisions_do_not_shadow_lws_revisions():
    old = leader("web-o", R1, gated=False, ready=True, group_ready="True")
    sts_history = {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "revision": 1,
        "metadata": {
            "name": "web-00000000-7d8f7cb964",
            "namespace": NS,
            "labels": {L.NAME: "web", L.TEMPLATE_REVISION_HASH: R1, L.GROUP_KEY: key_of(old)},
        },
        "data": {"spec": {"template": {"spec": {"containers": []}}, "$patch": "replace"}},
    }
    st = plan(V2, sts_history, cr(V1, 1), cr(V2, 2), old, worker_sts(old))
    assert view(st, old).workers
