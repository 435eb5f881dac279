"""Hash-mode LWS status (lws/status/hash.py): upstream ``updateStatusHash`` from observed groups,
plus the observedGeneration fix, and its wiring into ``lws.status.summary.lws_status``."""

from __future__ import annotations

import pytest
from support.fixtures_hash import cr, deployment, leader, make_lws, rev, snap, worker_sts

from pulumi_lws.core.contract.stage import GroupView
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.reconcile import reconcile
from pulumi_lws.lws.status.hash import deployment_caught_up, hash_condition_state, hash_status
from pulumi_lws.lws.status.summary import lws_status

V1, V2 = make_lws(image="v1"), make_lws(image="v2")
R1, R2 = rev(V1), rev(V2)


def true_types(status):
    return [c["type"] for c in status["conditions"] if c["status"] == "True"]


def g(i, *, ready=True, updated=True, phase="", leader="p"):
    return GroupView(id=f"k{i}", revision="r", ready=ready, updated=updated, phase=phase, key=f"k{i}", leader=leader)


DEPLOY_OK = deployment(R2, replicas=2, ready=2, updated=2)


# upstream TestUpdateStatusHash cases, counted from groups
@pytest.mark.parametrize(
    "groups, want_counts, want",
    [
        ([g(1), g(2)], (2, 2, 2), ["Available"]),
        ([g(1), g(2), g(3, updated=False)], (3, 3, 2), ["Progressing", "UpdateInProgress"]),
        ([g(1)], (1, 1, 1), ["Progressing"]),
        ([g(1, ready=False), g(2, ready=False)], (2, 0, 2), ["Progressing"]),
    ],
)
def test_upstream_cases(groups, want_counts, want):
    st = hash_status("web", groups, 2, DEPLOY_OK)
    assert (st["replicas"], st["readyReplicas"], st["updatedReplicas"]) == want_counts
    assert true_types(st) == want
    assert st["hpaPodSelector"] == f"{L.NAME}=web,{L.WORKER_INDEX}=0"
    assert [c["type"] for c in st["conditions"]] == ["Available", "Progressing", "UpdateInProgress"]
    assert st["updateDone"] == (want == ["Available"])


def test_terminating_and_leaderless_groups_do_not_count():
    groups = [
        g(1),
        g(2),
        g(3, ready=False, updated=False, phase="terminating"),
        GroupView(id="k4", revision="r", ready=False, updated=False, phase="terminating", key="k4"),
    ]
    st = hash_status("web", groups, 2, DEPLOY_OK)
    assert (st["replicas"], st["readyReplicas"], st["updatedReplicas"]) == (2, 2, 2)
    assert true_types(st) == ["Available"]


def test_not_available_until_the_deployment_observed_its_generation():
    stale = deployment(R2, replicas=2, ready=2, updated=2)
    stale["metadata"]["generation"] = 3
    assert not deployment_caught_up(stale) and not deployment_caught_up(None)
    assert deployment_caught_up(DEPLOY_OK)
    st = hash_status("web", [g(1), g(2)], 2, stale)
    assert true_types(st) == ["Progressing"]
    assert true_types(hash_status("web", [g(1), g(2)], 2, None)) == ["Progressing"]
    no_generation = {"metadata": {"name": "web"}, "status": {}}
    assert deployment_caught_up(no_generation)


def test_exclusive_states():
    assert hash_condition_state(2, 2, 2, 2, True) == "Available"
    assert hash_condition_state(2, 2, 2, 3, True) == "Progressing"
    assert hash_condition_state(3, 2, 1, 2, True) == "UpdateInProgress"
    assert hash_condition_state(2, 2, 2, 2, False) == "Progressing"


def _settled_objects():
    a = leader("web-a", R1, created=0, gated=False, ready=True, group_ready="True")
    b = leader("web-b", R1, created=1, gated=False, ready=True, group_ready="True")
    return a, b, [cr(V1), a, b, worker_sts(a), worker_sts(b), deployment(R1, replicas=2, ready=2, updated=2)]


def test_lws_status_hash_settled_and_mid_rollout():
    _a, _b, objs = _settled_objects()
    s = snap(*objs)
    st = lws_status(V1, s, reconcile(V1, s).stage)
    assert (st["replicas"], st["readyReplicas"], st["updatedReplicas"]) == (2, 2, 2)
    assert true_types(st) == ["Available"]
    n = leader("web-n", R2, created=5)
    s2 = snap(*objs, cr(V2, 2), n)
    st2 = lws_status(V2, s2, reconcile(V2, s2).stage)
    assert (st2["replicas"], st2["readyReplicas"], st2["updatedReplicas"]) == (3, 2, 1)
    assert true_types(st2) == ["Progressing", "UpdateInProgress"]


def test_group_not_ready_while_workers_are_not():
    a, b, objs = _settled_objects()
    objs = [o for o in objs if o.get("kind") != "StatefulSet"] + [worker_sts(a), worker_sts(b, ready=False)]
    s = snap(*objs)
    st = lws_status(V1, s, reconcile(V1, s).stage)
    assert st["readyReplicas"] == 1 and true_types(st) == ["Progressing"]


def test_lws_status_hash_merges_failure_conditions():
    a = leader("web-a", R1, created=0, gated=False, ready=False, exhausted=True)
    s = snap(cr(V1), a, deployment(R1, replicas=1, ready=0, updated=1))
    st = lws_status(V1, s, reconcile(V1, s).stage)
    degraded = [c for c in st["conditions"] if c["type"] == "Degraded"]
    assert degraded and degraded[0]["status"] == "True"
