"""Webhook-equivalent pod labels (lws/rollout/ordinal/pod_labels.py): literal snapshots, the reconcile wiring,
the trace rows, and one simulator run checking every pod against upstream's webhook values."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.core.contract.stage import Action, Stage, is_webhook_labels
from pulumi_lws.core.contract.trace import GroupCell, TraceRow, format_table, rows_changed
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.reconcile import reconcile
from pulumi_lws.lws.revision import revision_key
from pulumi_lws.lws.rollout.ordinal.pod_labels import REASON, label_actions, parent_and_ordinal, pod_ordinal

NS, NAME = "default", "lws"


def sha1(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def make_lws(
    *, size: int = 3, replicas: int = 2, subgroup: dict | None = None, identity: str | None = None, image: str = "v1"
) -> LeaderWorkerSet:
    lwt: dict[str, Any] = {"size": size, "workerTemplate": {"spec": {"containers": [{"name": "c", "image": image}]}}}
    if subgroup is not None:
        lwt["subGroupPolicy"] = subgroup
    spec: dict[str, Any] = {"replicas": replicas, "leaderWorkerTemplate": lwt}
    if identity:
        spec["groupIdentity"] = identity
    return LeaderWorkerSet.from_manifest(
        {
            "apiVersion": "leaderworkerset.x-k8s.io/v1",
            "kind": "LeaderWorkerSet",
            "metadata": {"name": NAME, "namespace": NS},
            "spec": spec,
        }
    )


def _pod(
    name: str, labels: dict, annotations: dict, owner: str | None, *, uid: str | None = None, deleting: bool = False
) -> dict:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": NS,
        "uid": uid or f"uid-{name}",
        "labels": labels,
        "annotations": annotations,
    }
    if owner is not None:
        kind, owner_name = owner.split("/")
        meta["ownerReferences"] = [{"kind": kind, "name": owner_name, "controller": True, "uid": f"uid-{owner_name}"}]
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "status": {"phase": "Running"}}


def sg_annotations(lws: LeaderWorkerSet) -> dict:
    sgp = lws.spec.leader_worker_template.sub_group_policy
    if sgp is None:
        return {}
    return {L.SUBGROUP_POLICY_TYPE: sgp.sub_group_policy_type, L.SUBGROUP_SIZE: str(sgp.sub_group_size)}


def leader(lws: LeaderWorkerSet, i: int, key: str, **kw: Any) -> dict:
    """A leader pod as the leader StatefulSet creates it from pulumi-lws's template (no webhook)."""
    labels = {L.NAME: lws.name, L.WORKER_INDEX: "0", L.TEMPLATE_REVISION_HASH: key, L.POD_INDEX: str(i)}
    sgp = lws.spec.leader_worker_template.sub_group_policy
    if sgp is not None and sgp.sub_group_policy_type == "LeaderWorker":
        labels[L.SUBGROUP_INDEX] = "0"
    return _pod(
        f"{lws.name}-{i}",
        labels,
        {L.SIZE: str(lws.size), **sg_annotations(lws)},
        kw.pop("owner", f"StatefulSet/{lws.name}"),
        **kw,
    )


def worker(lws: LeaderWorkerSet, i: int, j: int, key: str, **kw: Any) -> dict:
    """A worker pod as its worker StatefulSet creates it (group labels static, no worker-index)."""
    labels = {
        L.NAME: lws.name,
        L.GROUP_INDEX: str(i),
        L.GROUP_KEY: sha1(f"{NS}/{lws.name}-{i}"),
        L.TEMPLATE_REVISION_HASH: key,
        L.POD_INDEX: str(j),
    }
    ann = {L.SIZE: str(lws.size), L.LEADER_NAME: f"{lws.name}-{i}", **sg_annotations(lws)}
    return _pod(f"{lws.name}-{i}-{j}", labels, ann, kw.pop("owner", f"StatefulSet/{lws.name}-{i}"), **kw)


def world(lws: LeaderWorkerSet, key: str | None = None) -> list[dict]:
    key = key or revision_key(lws)
    out = []
    for i in range(lws.replicas):
        out.append(leader(lws, i, key))
        out += [worker(lws, i, j, key) for j in range(1, lws.size)]
    return out


def stage_of(lws: LeaderWorkerSet, key: str | None = None, actions: tuple = ()) -> Stage:
    key = key or revision_key(lws)
    return Stage(
        policy="lws/ordinal",
        target_revision=key,
        replicas=lws.replicas,
        partition=0,
        group_revisions={str(i): key for i in range(lws.replicas)},
        actions=actions,
    )


def by_name(actions) -> dict[str, dict]:
    return {a.name: dict(a.params["labels"]) for a in actions}


def execute(pods: list[dict], actions) -> list[dict]:
    """What the actuator does: merge each action's labels into the pod it names (uid-guarded)."""
    index = {p["metadata"]["name"]: p for p in pods}
    for a in actions:
        assert a.verb == "label" and a.uid == index[a.name]["metadata"]["uid"]
        index[a.name]["metadata"]["labels"].update(a.params["labels"])
    return pods


# ---- literal snapshots ----------------------------------------------------------------------------


def test_leaders_get_group_index_and_key_workers_get_worker_index():
    lws = make_lws()
    acts = label_actions(lws, Snapshot.of(world(lws)), stage_of(lws))
    assert [a.name for a in acts] == ["lws-0", "lws-0-1", "lws-0-2", "lws-1", "lws-1-1", "lws-1-2"]
    assert all(a.verb == "label" and a.kind == "Pod" and a.reason == REASON and is_webhook_labels(a) for a in acts)
    assert [a.uid for a in acts] == [f"uid-{a.name}" for a in acts]
    got = by_name(acts)
    assert got["lws-1"] == {L.GROUP_INDEX: "1", L.GROUP_KEY: sha1("default/lws-1")}
    assert got["lws-0-2"] == {L.WORKER_INDEX: "2"} and got["lws-1-1"] == {L.WORKER_INDEX: "1"}


def test_rerun_after_execution_emits_nothing():
    lws = make_lws(size=5, subgroup={"subGroupSize": 2})
    pods = world(lws)
    acts = label_actions(lws, Snapshot.of(pods), stage_of(lws))
    assert len(acts) == len(pods)
    assert label_actions(lws, Snapshot.of(execute(pods, acts)), stage_of(lws)) == ()


def test_only_missing_keys_are_added_and_present_values_are_never_changed():
    lws = make_lws()
    pods = world(lws)
    pods[0]["metadata"]["labels"][L.GROUP_INDEX] = "7"  # someone else's value: left alone
    pods[1]["metadata"]["labels"][L.WORKER_INDEX] = "1"
    got = by_name(label_actions(lws, Snapshot.of(pods), stage_of(lws)))
    assert got["lws-0"] == {L.GROUP_KEY: sha1("default/lws-0")}
    assert "lws-0-1" not in got


def test_ordinal_comes_from_pod_index_or_the_name():
    lws = make_lws(replicas=1)
    pods = world(lws)
    for p in pods:
        del p["metadata"]["labels"][L.POD_INDEX]
    got = by_name(label_actions(lws, Snapshot.of(pods), stage_of(lws)))
    assert got["lws-0"][L.GROUP_INDEX] == "0" and got["lws-0-2"] == {L.WORKER_INDEX: "2"}
    assert parent_and_ordinal("lws-10-3") == ("lws-10", 3) and parent_and_ordinal("lws") is None
    odd = worker(lws, 0, 1, "k")
    odd["metadata"]["labels"][L.POD_INDEX] = "2"  # disagrees with the name: not understood, not labelled
    assert pod_ordinal(odd) is None


@pytest.mark.parametrize(
    "size,sgs,policy,leader_sg,workers_sg",
    [
        (5, 2, "LeaderWorker", "0", [0, 0, 1, 1]),  # leader is the extra pod: (w-1)//sgs
        (4, 2, "LeaderWorker", "0", [0, 1, 1]),  # even division: w//sgs
        (9, 4, "LeaderWorker", "0", [0, 0, 0, 0, 1, 1, 1, 1]),
        (5, 2, "LeaderExcluded", None, [0, 0, 1, 1]),  # the leader has no subgroup
    ],
)
def test_subgroup_labels_are_upstreams(size, sgs, policy, leader_sg, workers_sg):
    lws = make_lws(size=size, replicas=1, subgroup={"subGroupSize": sgs, "subGroupPolicyType": policy})
    got = by_name(label_actions(lws, Snapshot.of(world(lws)), stage_of(lws)))
    lead = got["lws-0"]
    if leader_sg is None:
        assert L.SUBGROUP_INDEX not in lead and L.SUBGROUP_KEY not in lead
    else:  # the template already carries subgroup-index "0": only the key is missing
        assert lead[L.SUBGROUP_KEY] == sha1("lws-0/0") and L.SUBGROUP_INDEX not in lead
    for j, sg in enumerate(workers_sg, 1):
        assert got[f"lws-0-{j}"] == {
            L.WORKER_INDEX: str(j),
            L.SUBGROUP_INDEX: str(sg),
            L.SUBGROUP_KEY: sha1(f"lws-0/{sg}"),
        }


def test_never_labels_deleting_foreign_unknown_revision_or_foreign_owned_pods():
    lws = make_lws(replicas=1)
    key = revision_key(lws)
    pods = [
        leader(lws, 0, key, deleting=True),
        worker(lws, 0, 1, "some-other-revision"),
        worker(lws, 0, 2, key, owner="ReplicaSet/rs"),
    ]
    other = make_lws()
    foreign = leader(other, 0, key)
    foreign["metadata"]["labels"][L.NAME] = "other"
    foreign["metadata"]["name"] = "other-0"
    assert label_actions(lws, Snapshot.of(pods + [foreign]), stage_of(lws)) == ()


def test_a_pod_deleted_by_another_action_is_skipped_and_keys_set_elsewhere_are_left_to_it():
    lws = make_lws(replicas=1)
    pods = world(lws)
    delete = Action("delete", "Pod", "lws-0", {"propagation": "Foreground"}, uid="uid-lws-0", reason="failure")
    other = Action("label", "Pod", "lws-0-1", {"labels": {L.WORKER_INDEX: "1"}}, uid="uid-lws-0-1", reason="x")
    acts = label_actions(lws, Snapshot.of(pods), stage_of(lws, actions=(delete, other)))
    assert [a.name for a in acts] == ["lws-0-2"]


def test_hash_lws_gets_nothing_here():
    lws = make_lws(identity="Hash")
    assert label_actions(lws, Snapshot.of(world(lws)), stage_of(lws)) == ()


# ---- reconcile wiring -----------------------------------------------------------------------------


def test_reconcile_appends_labels_after_failure_actions_and_skips_the_deleted_leader():
    from support.fixtures_failure import World
    from support.fixtures_failure import make_lws as failure_lws

    w = World(failure_lws())
    w.restart("lws-1-2")  # RecreateGroupOnPodRestart: the leader lws-1 is deleted
    stage = reconcile(w.lws, w.snapshot()).stage
    verbs = [(a.verb, a.name) for a in stage.actions]
    first_label = next(n for n, a in enumerate(stage.actions) if is_webhook_labels(a))
    assert ("delete", "lws-1") in verbs and all(is_webhook_labels(a) for a in stage.actions[first_label:])
    labelled = [a.name for a in stage.actions if is_webhook_labels(a)]
    assert labelled == ["lws-0", "lws-2"]  # workers already carry worker-index; lws-1 is being deleted
    assert stage.complete is False  # the failure makes it incomplete, not the labels


def test_labels_do_not_change_completeness_or_blocker():
    lws = make_lws(replicas=2)
    key = revision_key(lws)
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {
            "name": NAME,
            "namespace": NS,
            "uid": "sts",
            "annotations": {L.REPLICAS: "2"},
            "labels": {L.NAME: NAME, L.TEMPLATE_REVISION_HASH: key},
        },
        "spec": {"replicas": 2, "updateStrategy": {"rollingUpdate": {"partition": 0}}},
        "status": {},
    }
    objs = [sts] + world(lws)
    for i in range(2):
        objs.append(
            {
                "apiVersion": "apps/v1",
                "kind": "StatefulSet",
                "metadata": {
                    "name": f"{NAME}-{i}",
                    "namespace": NS,
                    "uid": f"s{i}",
                    "labels": {L.NAME: NAME, L.TEMPLATE_REVISION_HASH: key},
                },
                "spec": {"replicas": 2},
                "status": {"availableReplicas": 2, "currentRevision": "r", "updateRevision": "r"},
            }
        )
    for p in objs:
        if p["kind"] == "Pod":
            p["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    before = reconcile(lws, Snapshot.of(objs)).stage
    assert before.complete and before.blocker is None and len(before.actions) == 6
    after = reconcile(
        lws,
        Snapshot.of(
            execute([o for o in objs if o["kind"] == "Pod"], before.actions) + [o for o in objs if o["kind"] != "Pod"]
        ),
    ).stage
    assert after.complete and after.actions == ()


# ---- trace rows -----------------------------------------------------------------------------------


def _row(t: float, labelled: tuple = (), actions: tuple = ()) -> TraceRow:
    return TraceRow(
        time=t,
        replicas=1,
        partition=0,
        groups=(GroupCell("0", "U"),),
        live=1,
        available=1,
        labelled=labelled,
        actions=actions,
    )


def test_label_only_rows_merge_into_the_previous_row_and_the_table_summarises_them():
    rows = rows_changed([_row(0), _row(5, ("lws-0", "lws-0-1")), _row(10, ("lws-0-1", "lws-0-2"))])
    assert len(rows) == 1 and rows[0].labelled == ("lws-0", "lws-0-1", "lws-0-2")
    assert rows[0].to_json()["labelled"] == ["lws-0", "lws-0-1", "lws-0-2"]
    table = format_table(rows)
    assert "labelled 3 pods" in table and "lws-0-1" not in table
    assert len(rows_changed([_row(0), _row(5, actions=("delete Pod/lws-0: deleted",))])) == 2


# ---- simulator end to end -------------------------------------------------------------------------


def _manifest(image: str) -> dict:
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": NAME, "namespace": NS},
        "spec": {
            "replicas": 3,
            "rolloutStrategy": {"rollingUpdateConfiguration": {"maxUnavailable": 1}},
            "leaderWorkerTemplate": {
                "size": 5,
                "subGroupPolicy": {"subGroupSize": 2},
                "workerTemplate": {"spec": {"containers": [{"name": "c", "image": image}]}},
            },
        },
    }


def expected_labels(name: str) -> dict[str, str]:
    """Upstream's webhook values for pod ``name`` of the LWS above (size 5, subGroupSize 2)."""
    parts = name.split("-")
    if len(parts) == 2:
        return {
            L.GROUP_INDEX: parts[1],
            L.GROUP_KEY: sha1(f"{NS}/{name}"),
            L.WORKER_INDEX: "0",
            L.SUBGROUP_INDEX: "0",
            L.SUBGROUP_KEY: sha1(f"{name}/0"),
        }
    leader_name, w = f"{parts[0]}-{parts[1]}", int(parts[2])
    sg = (w - 1) // 2  # (size-1) % 2 == 0 and size % 2 != 0: the leader is the extra pod
    return {
        L.GROUP_INDEX: parts[1],
        L.GROUP_KEY: sha1(f"{NS}/{leader_name}"),
        L.WORKER_INDEX: str(w),
        L.SUBGROUP_INDEX: str(sg),
        L.SUBGROUP_KEY: sha1(f"{leader_name}/{sg}"),
    }


def test_simulated_rollout_labels_every_pod_like_upstream_and_then_goes_quiet():
    import pulumi_lws.sim.cluster.simcluster as sim_cluster
    import pulumi_lws.sim.driver.engines as sim_engines
    from pulumi_lws.sim.cluster.kubelet import KubeletConfig, Timing

    cluster = sim_cluster.SimCluster(kubelet=KubeletConfig(default=Timing(1.0, 2.0), termination_grace=1.0))
    engine = sim_engines.PureEngine(NS)

    def run(manifest: dict, until: float):
        stage = None
        while cluster.clock.now < until:
            stage = engine.step(cluster, manifest).stage
            if stage.complete and cluster.clock.now > until - 60:
                break
            cluster.step(cluster.clock.now + 1.0)
        return stage

    stage = run(_manifest("v1"), 60)
    stage = run(_manifest("v2"), cluster.clock.now + 120)  # a rollout recreates every pod
    assert stage is not None and stage.complete
    step = engine.step(cluster, _manifest("v2"))  # labels arrive the reconcile after the pod exists
    live = [p for p in cluster.list("Pod") if not p["metadata"].get("deletionTimestamp")]
    assert len(live) == 15
    for p in live:
        labels = p["metadata"]["labels"]
        want = expected_labels(p["metadata"]["name"])
        assert {k: labels.get(k) for k in want} == want, p["metadata"]["name"]
        assert p["spec"]["containers"][0]["image"] == "v2"
    step = engine.step(cluster, _manifest("v2"))
    assert not any(is_webhook_labels(a) for a in step.stage.actions) and step.stage.actions == ()


def test_component_preview_table_summarises_label_actions():
    from pulumi_lws.components.outputs import stage_table

    lws = make_lws()
    stage = stage_of(lws, actions=label_actions(lws, Snapshot.of(world(lws)), stage_of(lws)))
    table = stage_table(stage)
    assert "labelled 6 pods" in table and "webhook-equivalent" not in table
