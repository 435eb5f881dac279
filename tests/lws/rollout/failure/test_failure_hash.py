"""Hash-mode failure handling on literal snapshots (lws/rollout/failure/hash.py): one test per rule."""

from __future__ import annotations

import json

from support.fixtures_hash import NAME, NS, cr, key_of, leader, snap, ts, worker

from pulumi_lws.core.contract.stage import Action, Stage
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.revision import build_catalog
from pulumi_lws.lws.rollout.failure.hash import TERMINAL_LEADER, plan_hash_failure, with_hash_failure_state
from pulumi_lws.lws.rollout.failure.ordinal import BUDGET_EXCEEDED, RECREATE_GROUP, RESTART_PENDING
from pulumi_lws.lws.rollout.failure.retention import RETAIN_FINALIZER
from pulumi_lws.lws.rollout.failure.termination import PREVIOUS_LEADER_UID
from pulumi_lws.lws.rollout.hash.planner import plan_hash


def make_lws(
    *,
    replicas: int = 2,
    max_restarts: int | None = 1,
    termination: str | None = None,
    policy: str = "PostTermination",
    backoff: dict | None = None,
    image: str = "v1",
    restart_policy: str | None = None,
) -> LeaderWorkerSet:
    lwt: dict = {"size": 3, "workerTemplate": {"spec": {"containers": [{"name": "c", "image": image}]}}}
    if restart_policy is not None:
        lwt["restartPolicy"] = restart_policy
    if max_restarts is not None:
        lwt["maxGroupRestarts"] = max_restarts
    if backoff is not None:
        lwt["restartBackoff"] = backoff
    spec: dict = {
        "replicas": replicas,
        "groupIdentity": "Hash",
        "groupReplacementPolicy": policy,
        "rolloutStrategy": {"rollingUpdateConfiguration": {"maxUnavailable": 1, "maxSurge": 1}},
        "leaderWorkerTemplate": lwt,
    }
    if termination:
        spec["podTerminationPolicy"] = termination
    return LeaderWorkerSet.from_manifest(
        {
            "apiVersion": "leaderworkerset.x-k8s.io/v1",
            "kind": "LeaderWorkerSet",
            "metadata": {"name": NAME, "namespace": NS},
            "spec": spec,
        }
    )


LWS = make_lws()
REV = build_catalog(LWS, []).target.key


def deploy(counts: dict | None = None) -> dict:
    ann = {} if counts is None else {L.GROUP_RESTART_COUNTS: json.dumps(counts, separators=(",", ":"))}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": NAME,
            "namespace": NS,
            "uid": "deploy-uid",
            "annotations": ann,
            "labels": {L.NAME: NAME, L.TEMPLATE_REVISION_HASH: REV},
        },
        "spec": {"replicas": 2},
        "status": {},
    }


def group(name: str, *, restarts: int = 0, rev: str = REV, **kw) -> list[dict]:
    """An admitted leader (ungated, running) and its two workers."""
    p = leader(name, rev, gated=kw.pop("gated", False), ready=True, **kw)
    p["status"]["containerStatuses"] = [{"name": "c", "restartCount": restarts}]
    return [p, worker(p, 1), worker(p, 2)]


def stage(*ungated: dict, target: str = REV) -> Stage:
    acts = tuple(Action("ungate", "Pod", p["metadata"]["name"], {"gate": L.GROUP_REPLACEMENT_GATE}) for p in ungated)
    return Stage(
        policy="lws/hash", target_revision=target, replicas=2, partition=None, group_revisions={}, actions=acts
    )


def verbs(plan) -> list[tuple[str, str, str]]:
    return [(a.verb, a.kind, a.name) for a in plan.first_actions + plan.actions]


def counts_of(plan) -> dict:
    return json.loads(plan.restart_counts)


def retained(pods: list[dict]) -> list[dict]:
    for p in pods:
        p["metadata"]["finalizers"] = [RETAIN_FINALIZER]
        p["metadata"]["deletionTimestamp"] = ts(50)
    return pods


def test_worker_restart_recreates_the_group_and_consumes_its_count():
    a, b = group("web-a"), group("web-b")
    a[2]["status"]["containerStatuses"] = [{"name": "c", "restartCount": 1}]
    s = snap(deploy({}), *a, *b)
    p = plan_hash_failure(LWS, s, stage())
    ka = key_of(a[0])
    assert verbs(p) == [
        ("annotate", "Deployment", NAME),
        ("delete", "Pod", "web-a"),
        ("annotate", "Pod", a[1]["metadata"]["name"]),
        ("annotate", "Pod", a[2]["metadata"]["name"]),
    ]
    assert p.first_actions[0].uid == "deploy-uid" and counts_of(p) == {f"{REV}/{ka}": 1}
    assert p.actions[0].params == {"propagation": "Foreground"} and p.actions[0].uid == "uid-web-a"
    assert p.actions[1].params == {"annotations": {PREVIOUS_LEADER_UID: "uid-web-a"}}
    assert p.events[0].code == RECREATE_GROUP and ka[:8] in p.events[0].message
    rendered = with_hash_failure_state(
        [{"kind": "Deployment", "metadata": {"name": NAME, "annotations": {"x": "y"}}}], LWS, p
    )
    assert rendered[0]["metadata"]["annotations"] == {"x": "y", L.GROUP_RESTART_COUNTS: p.restart_counts}


def test_gated_and_deleting_leaders_are_not_failures():
    gated = group("web-g", gated=True, restarts=1)[:1]
    deleting = group("web-d", deleting=True, restarts=1)
    assert plan_hash_failure(LWS, snap(deploy(), *gated, *deleting), stage()).actions == ()


def test_parallel_deletes_workers_of_any_deleting_leader():
    lws = make_lws(termination="Parallel")
    d = group("web-d", deleting=True)
    p = plan_hash_failure(lws, snap(deploy(), *d), stage())
    assert verbs(p) == [("delete", "Pod", d[1]["metadata"]["name"]), ("delete", "Pod", d[2]["metadata"]["name"])]


def test_count_transfers_to_the_admitted_replacement_before_its_ungate():
    old, b = group("web-a", deleting=True), group("web-b")
    new = leader("web-c", REV, created=60)  # gated replacement created by the ReplicaSet
    s = snap(deploy({f"{REV}/{key_of(old[0])}": 1}), *old, *b, new)
    p = plan_hash_failure(LWS, s, stage(new))
    assert counts_of(p) == {f"{REV}/{key_of(new)}": 1}
    assert "transfer" in p.first_actions[0].reason
    applied = p.apply_to(stage(new))
    assert [a.verb for a in applied.actions] == ["annotate", "ungate"]  # count first, then the ungate it pays for
    # after the actions ran: the new key holds the count, nothing more to do (idempotent)
    new["spec"].pop("schedulingGates")
    again = plan_hash_failure(LWS, snap(deploy(counts_of(p)), *b, new), stage())
    assert again.first_actions == () and counts_of(again) == counts_of(p)


def test_orphan_count_waits_for_the_replacement_and_is_pruned_on_scale_down():
    gone_key = f"{REV}/{'f' * 40}"
    b, gated = group("web-b"), leader("web-c", REV, created=60)
    waiting = plan_hash_failure(LWS, snap(deploy({gone_key: 2}), *b, gated), stage())  # PostTermination: still gated
    assert counts_of(waiting) == {gone_key: 2} and waiting.first_actions == ()
    c = group("web-c")
    scaled = plan_hash_failure(LWS, snap(deploy({gone_key: 2}), *b, *c), stage())  # replicas groups admitted: no slot
    assert counts_of(scaled) == {} and scaled.first_actions[0].params["annotations"] == {L.GROUP_RESTART_COUNTS: "{}"}
    other = plan_hash_failure(LWS, snap(deploy({f"oldrev/{'f' * 40}": 1}), *b), stage())
    assert counts_of(other) == {}  # a group of another revision is never transferred


def test_exhaustion_retains_the_group_and_holds_back_one_replacement():
    a, b = group("web-a"), group("web-b")
    a[0]["status"]["containerStatuses"][0]["restartCount"] = 2
    ka = f"{REV}/{key_of(a[0])}"
    p = plan_hash_failure(LWS, snap(deploy({ka: 1}), *a, *b), stage())
    names = [x["metadata"]["name"] for x in a]
    assert verbs(p) == [("annotate", "Pod", "web-a")] + [("finalize", "Pod", n) for n in names] + [
        ("delete", "Pod", n) for n in names
    ]
    assert p.events[0].code == BUDGET_EXCEEDED and p.degraded_groups == () and counts_of(p) == {ka: 1}
    a[0]["metadata"]["annotations"][L.RESTART_BUDGET_EXHAUSTED] = "true"
    replacement = leader("web-c", REV, created=60)
    for policy in ("PostTermination", "Immediate"):
        lws = make_lws(policy=policy)
        s = snap(deploy({ka: 1}), *retained(a), *b, replacement, cr(lws))
        st = plan_hash(lws, s, build_catalog(lws, [cr(lws)]))
        assert not [x for x in st.actions if x.verb == "ungate"], policy  # held back
        assert [g.phase for g in st.groups if g.leader == "web-a"] == ["exhausted"]
        kept = plan_hash_failure(lws, s, st)
        assert kept.actions == () and kept.degraded_groups == (key_of(a[0])[:8],) and counts_of(kept) == {ka: 1}
        assert not kept.apply_to(st).complete


def test_recover_clears_the_count_and_releases_the_retained_pods():
    a, b = retained(group("web-a", annotations={L.RESTART_BUDGET_EXHAUSTED: "true", L.RECOVER: "true"})), group("web-b")
    ka = f"{REV}/{key_of(a[0])}"
    p = plan_hash_failure(LWS, snap(deploy({ka: 1}), *a, *b, leader("web-c", REV, created=60)), stage())
    assert verbs(p) == [("annotate", "Deployment", NAME)] + [("finalize", "Pod", x["metadata"]["name"]) for x in a]
    assert all(x.params == {"remove": [RETAIN_FINALIZER]} for x in p.actions) and counts_of(p) == {}


def test_rollout_releases_a_retained_group_of_the_old_revision():
    a = retained(group("web-a", rev="oldrev", annotations={L.RESTART_BUDGET_EXHAUSTED: "true"}))
    old_counts = {f"oldrev/{key_of(a[0])}": 1}
    p = plan_hash_failure(LWS, snap(deploy(old_counts), *a, *group("web-b")), stage())
    assert [x.verb for x in p.actions] == ["finalize"] * 3 and p.degraded_groups == () and not p.events
    assert counts_of(p) == old_counts  # cleanup, not recovery: the count goes with its key ...
    assert counts_of(plan_hash_failure(LWS, snap(deploy(old_counts), *group("web-b")), stage())) == {}  # ... once gone


def test_backoff_defers_with_a_marker():
    lws = make_lws(backoff={"baseSeconds": 10, "capSeconds": 300})
    a = group("web-a", restarts=1)
    a[0]["metadata"]["creationTimestamp"] = "1970-01-01T00:01:35Z"  # 5 s old at snap()'s now=100: wait 10 s
    p = plan_hash_failure(lws, snap(deploy(), *a), stage())
    assert verbs(p) == [("annotate", "Pod", "web-a")] and RESTART_PENDING in p.actions[0].params["annotations"]
    assert p.deferred and not p.apply_to(stage()).complete


def test_scale_down_and_lws_deletion_release_retained_groups():
    a = retained(group("web-a", annotations={L.RESTART_BUDGET_EXHAUSTED: "true"}))
    b, c = group("web-b"), group("web-c")
    down = plan_hash_failure(LWS, snap(deploy(), *a, *b, *c), stage())  # 2 groups admitted = replicas: no slot left
    assert [x.name for x in down.actions] == [x["metadata"]["name"] for x in a] and down.degraded_groups == ()
    kept = plan_hash_failure(LWS, snap(deploy(), *a, *b), stage())  # one slot: the group stays retained
    assert kept.actions == () and kept.degraded_groups == (key_of(a[0])[:8],)
    gone = deploy()
    gone["metadata"]["deletionTimestamp"] = ts(90)
    assert [x.verb for x in plan_hash_failure(LWS, snap(gone, *a, *b), stage()).actions] == ["finalize"] * 3


# ---- terminal (Failed/Succeeded) leaders: torn down per restart policy --------------------------


def failed_group(name: str, phase: str = "Failed", **kw) -> list[dict]:
    """An admitted leader that reached a terminal phase (the ReplicaSet has replaced it) + workers."""
    return group(name, phase=phase, **kw)


def test_failed_leader_is_deleted_with_its_workers_and_consumes_a_count():
    for phase in ("Failed", "Succeeded"):
        f, b = failed_group("web-f", phase), group("web-b")
        kf = f"{REV}/{key_of(f[0])}"
        p = plan_hash_failure(LWS, snap(deploy({}), *f, *b), stage())
        assert verbs(p) == [
            ("annotate", "Deployment", NAME),
            ("delete", "Pod", "web-f"),
            ("annotate", "Pod", f[1]["metadata"]["name"]),
            ("annotate", "Pod", f[2]["metadata"]["name"]),
        ]
        assert p.actions[0].params == {"propagation": "Foreground"} and p.actions[0].uid == "uid-web-f"
        assert p.actions[1].params == {"annotations": {PREVIOUS_LEADER_UID: "uid-web-f"}}  # Sequential: follow
        assert counts_of(p) == {kf: 1} and p.events[0].code == RECREATE_GROUP and phase in p.events[0].message


def test_failed_leader_parallel_deletes_workers_now():
    f = failed_group("web-f")
    p = plan_hash_failure(make_lws(termination="Parallel"), snap(deploy({}), *f), stage())
    assert [(a.verb, a.name) for a in p.actions] == [("delete", "web-f")] + [
        ("delete", w["metadata"]["name"]) for w in f[1:]
    ]


def test_failed_leader_with_restart_policy_none_is_deleted_without_a_count():
    lws = make_lws(restart_policy="None", max_restarts=None)
    f = failed_group("web-f")
    f[0]["status"]["containerStatuses"][0]["restartCount"] = 3  # a None group is never recreated for restarts ...
    p = plan_hash_failure(lws, snap(deploy({}), *f), stage())
    assert ("delete", "Pod", "web-f") in verbs(p) and p.first_actions == ()  # ... but a dead leader still goes
    assert counts_of(p) == {} and p.events[0].code == TERMINAL_LEADER
    running = group("web-r", restarts=3)
    assert plan_hash_failure(lws, snap(deploy({}), *running), stage()).actions == ()


def test_failed_leader_at_the_budget_limit_is_exhausted_and_retained():
    f = failed_group("web-f")
    kf = f"{REV}/{key_of(f[0])}"
    p = plan_hash_failure(LWS, snap(deploy({kf: 1}), *f), stage())
    names = [x["metadata"]["name"] for x in f]
    assert verbs(p) == [("annotate", "Pod", "web-f")] + [("finalize", "Pod", n) for n in names] + [
        ("delete", "Pod", n) for n in names
    ]
    assert p.events[0].code == BUDGET_EXCEEDED and counts_of(p) == {kf: 1}


def test_failed_leader_is_not_held_by_after_start_or_backoff():
    lws = make_lws(backoff={"baseSeconds": 10, "capSeconds": 300})
    f = failed_group("web-f")[:2]  # incomplete group
    f[0]["metadata"]["creationTimestamp"] = "1970-01-01T00:01:35Z"  # 5 s old: a restart would wait
    lws.metadata.annotations[L.EXPERIMENTAL_RECREATE_AFTER_START] = "true"
    p = plan_hash_failure(lws, snap(deploy({}), *f), stage())
    assert ("delete", "Pod", "web-f") in verbs(p) and not p.deferred


def test_gated_failed_leader_is_deleted_and_a_deleting_one_is_left_alone():
    gated = leader("web-g", REV, phase="Failed")
    assert [(a.verb, a.name) for a in plan_hash_failure(LWS, snap(deploy({}), gated), stage()).actions] == [
        ("delete", "web-g")
    ]
    f = failed_group("web-f", deleting=True)  # the delete already ran: re-planning adds nothing (idempotent)
    assert plan_hash_failure(LWS, snap(deploy({}), *f), stage()).actions == ()


def test_failed_leader_count_moves_to_the_replacement_admitted_in_the_same_reconcile():
    lws = make_lws(policy="Immediate")
    f, b = failed_group("web-f"), group("web-b")
    new = leader("web-n", REV, created=60)
    p = plan_hash_failure(lws, snap(deploy({}), *f, *b, new), stage(new))
    assert counts_of(p) == {f"{REV}/{key_of(new)}": 1} and "transfer" in p.first_actions[0].reason
    assert ("delete", "Pod", "web-f") in verbs(p)
