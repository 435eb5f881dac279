"""core/features/control.py and core/features/rollback.py on literal objects: settings resolution and its errors,
the held (paused) reconcile, the progress-deadline verdict, and the rollback rebase (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.core.contract.stage import Action, Blocker, GroupView, Stage
from pulumi_lws.core.contract.workload import Reconciled
from pulumi_lws.core.features.adoption import pruned
from pulumi_lws.core.features.control import (
    PAUSED,
    PAUSED_ANNOTATION,
    PROGRESS_DEADLINE_ANNOTATION,
    PROGRESS_DEADLINE_EXCEEDED,
    Control,
    Settings,
    check_arguments,
    govern,
    resolve,
    with_control_conditions,
)
from pulumi_lws.core.features.hold import frozen, hold
from pulumi_lws.core.features.rollback import (
    NoPreviousRevision,
    RecordedRevision,
    previous_revision,
    rebase,
    rollback_manifest,
)
from pulumi_lws.core.k8s import keys as K

OURS = {K.OWNERSHIP: K.OWNERSHIP_VALUE}


def obj(kind, name, spec=None, *, labels=OURS, created="2026-01-01T00:00:00Z", owners=None, **extra):
    meta = {
        "name": name,
        "namespace": "default",
        "labels": dict(labels),
        "uid": f"u-{name}",
        "resourceVersion": "7",
        "creationTimestamp": created,
        "managedFields": [{"manager": "x"}],
    }
    if owners:
        meta["ownerReferences"] = owners
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": meta,
        **({"spec": spec} if spec is not None else {}),
        "status": {"replicas": 1},
        **extra,
    }


def ready_pod(name, created, ready_at=None):
    pod = obj("Pod", name, {"containers": []}, labels={}, created=created)
    pod["status"] = {
        "phase": "Running",
        "conditions": [
            {"type": "Ready", "status": "True" if ready_at else "False", "lastTransitionTime": ready_at or created}
        ],
    }
    return pod


def stage(**kw):
    base = {
        "policy": "t",
        "target_revision": "rev2",
        "replicas": 2,
        "partition": 1,
        "group_revisions": {"0": "rev1", "1": "rev2"},
        "groups": (GroupView("0", "rev1", True, False), GroupView("1", "rev2", False, True)),
    }
    base.update(kw)
    return Stage(**base)


# ---- settings ------------------------------------------------------------------------------------


def test_argument_wins_over_annotation_wins_over_default() -> None:
    assert resolve("K", "n", {}) == Settings(False, 600.0)
    ann = {PAUSED_ANNOTATION: "true", PROGRESS_DEADLINE_ANNOTATION: "30"}
    assert resolve("K", "n", ann) == Settings(True, 30.0)
    assert resolve("K", "n", ann, Control(paused=False, progress_deadline_seconds=0)) == Settings(False, None)
    assert resolve("K", "n", {PROGRESS_DEADLINE_ANNOTATION: "0"}).deadline is None


@pytest.mark.parametrize(
    "key,value",
    [(PAUSED_ANNOTATION, "yes"), (PROGRESS_DEADLINE_ANNOTATION, "10m"), (PROGRESS_DEADLINE_ANNOTATION, "-1")],
)
def test_a_malformed_annotation_names_its_field_path(key, value) -> None:
    with pytest.raises(SpecError) as err:
        resolve("LeaderWorkerSet", "web", {key: value})
    assert f"metadata.annotations[{key}]" in str(err.value)


def test_malformed_arguments_name_the_argument() -> None:
    with pytest.raises(SpecError) as err:
        check_arguments("ModelServing", paused="yes", progress_deadline_seconds=-5)
    assert "paused" in str(err.value) and "progressDeadlineSeconds" in str(err.value)


@pytest.mark.parametrize(
    "module,manifest",
    [
        (
            "LeaderWorkerSet",
            {
                "apiVersion": "leaderworkerset.x-k8s.io/v1",
                "kind": "LeaderWorkerSet",
                "metadata": {"name": "a"},
                "spec": {
                    "replicas": 1,
                    "leaderWorkerTemplate": {
                        "size": 1,
                        "workerTemplate": {"spec": {"containers": [{"name": "c", "image": "i"}]}},
                    },
                },
            },
        ),
    ],
)
def test_component_arguments_become_the_annotations_and_bad_ones_fail_before_registration(module, manifest) -> None:
    from pulumi_lws.components.args import build_spec

    built = build_spec(module, "a", {"manifest": manifest, "paused": True, "progress_deadline_seconds": 90})
    assert built.spec.metadata.annotations[PAUSED_ANNOTATION] == "true"
    assert built.spec.metadata.annotations[PROGRESS_DEADLINE_ANNOTATION] == "90"
    bad = {**manifest, "metadata": {"name": "a", "annotations": {PAUSED_ANNOTATION: "maybe"}}}
    with pytest.raises(SpecError, match=r"metadata\.annotations\[pulumi-lws\.io/paused\]"):
        build_spec(module, "a", {"manifest": bad})


# ---- pause ---------------------------------------------------------------------------------------


def test_hold_registers_what_it_observed_and_keeps_only_failure_handling() -> None:
    sts = obj("StatefulSet", "web", {"replicas": 2, "partition": 2})
    old_cr = obj("ControllerRevision", "web-rev1", data={"x": 1}, revision=1)
    sts_history = obj(
        "ControllerRevision", "web-123", data={"y": 1}, owners=[{"kind": "StatefulSet", "controller": True}]
    )
    pod = obj("Pod", "web-0", {"containers": []})
    snapshot = Snapshot.of([sts, old_cr, sts_history, pod])
    planned = Reconciled(
        stage=stage(
            actions=(
                Action("ungate", "Pod", "web-1"),
                Action("delete", "Pod", "web-0", uid="u-web-0"),
                Action("annotate", "StatefulSet", "web", {"annotations": {"counts": "1"}}),
            )
        ),
        manifests=(
            {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "web-rev2"}},
            {
                "apiVersion": "apps/v1",
                "kind": "StatefulSet",
                "metadata": {"name": "web"},
                "spec": {"replicas": 3, "partition": 0},
            },
            {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web-2"}, "spec": {}},
        ),
        dependencies={("StatefulSet", "web"): (("ControllerRevision", "web-rev2"),)},
    )
    held = hold(planned, snapshot)
    by = {(m["kind"], m["metadata"]["name"]): m for m in held.manifests}
    assert set(by) == {("StatefulSet", "web"), ("ControllerRevision", "web-rev1")}  # no creation, nothing dropped
    assert by[("StatefulSet", "web")]["spec"] == {"replicas": 2, "partition": 2}
    assert "status" not in by[("StatefulSet", "web")] and "uid" not in by[("StatefulSet", "web")]["metadata"]
    assert by[("StatefulSet", "web")]["metadata"]["annotations"] == {"counts": "1"}  # the kept action's write
    assert by[("ControllerRevision", "web-rev1")]["data"] == {"x": 1}
    assert [a.verb for a in held.stage.actions] == ["delete", "annotate"]
    assert held.stage.blocker.code == PAUSED and held.dependencies == {}


def test_a_held_stage_takes_the_apis_observed_view_of_its_groups_and_lanes() -> None:
    """``hold(held_view=...)``: the stage's groups and lanes are the observed ones (the API's
    ``Workload.held_stage``); replicas, partition and the prediction stay the plan kept."""
    from pulumi_lws.core.contract.stage import Lane, PredictedStage
    from pulumi_lws.core.contract.trace import GroupCell, GroupsView
    from pulumi_lws.core.features.hold import observed_groups

    view = GroupsView(
        replicas=2,
        partition=None,
        cells=(GroupCell("0", "o", "rev1"), GroupCell("1", "x", "rev1", detail="terminating"), GroupCell("2", "-")),
        live=2,
        available=1,
        lanes=(Lane("prefill", 2, 0, 1, 0),),
    )
    planned = stage(
        lanes=(Lane("prefill", 1, 1),), remaining=(PredictedStage(2, 0, "UU"),), blocker=Blocker("waiting", "w")
    )
    held = hold(Reconciled(planned, ()), Snapshot.of([]), held_view=lambda st: observed_groups(st, view)).stage
    assert held.group_chars == "ox-" and [g.phase for g in held.groups] == ["", "terminating", ""]
    assert [g.index for g in held.groups] == [0, 1, 2] and held.groups[0].revision == "rev1"
    assert held.lanes == view.lanes and held.blocker.code == PAUSED
    assert (held.replicas, held.partition, held.remaining) == (planned.replicas, planned.partition, planned.remaining)
    # a stage without lanes keeps none; without held_view the planned groups stay (LeaderWorkerSet's are observed)
    assert observed_groups(stage(), view).lanes == ()
    assert hold(Reconciled(planned, ()), Snapshot.of([])).stage.groups == planned.groups


def test_frozen_drops_server_and_controller_metadata() -> None:
    o = obj("Deployment", "d", {"replicas": 1})
    o["metadata"]["annotations"] = {"deployment.kubernetes.io/revision": "3", "mine": "x"}
    out = frozen(o)
    assert out["metadata"] == {"name": "d", "namespace": "default", "labels": OURS, "annotations": {"mine": "x"}}


# ---- progress deadline -----------------------------------------------------------------------------

T0 = 1767225600.0  # 2026-01-01T00:00:00Z


def _result(st=None, manifests=()):
    return Reconciled(stage=st or stage(), manifests=tuple(manifests))


def test_the_deadline_counts_from_the_newest_observed_progress() -> None:
    pods = [ready_pod("a", "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z"), ready_pod("b", "2026-01-01T00:02:00Z")]
    on_time = govern(_result(), Snapshot.of(pods, now=T0 + 120 + 600), Settings(False, 600.0), total=2)
    assert not on_time.stage.control.exceeded and on_time.stage.control.last_progress == T0 + 120
    late = govern(_result(), Snapshot.of(pods, now=T0 + 121 + 600), Settings(False, 600.0), total=2)
    cond = late.stage.control.condition
    assert late.stage.control.exceeded and cond["status"] == "False" and cond["reason"] == PROGRESS_DEADLINE_EXCEEDED
    assert "holding: waiting for groups 0, 1" in cond["message"]
    blocked = govern(
        _result(stage(blocker=Blocker("Stuck", "group 1 unschedulable"))),
        Snapshot.of(pods, now=T0 + 9999),
        Settings(False, 600.0),
        total=2,
    )
    assert "holding: Stuck: group 1 unschedulable" in blocked.stage.control.condition["message"]


def test_no_deadline_while_creating_paused_complete_or_disabled() -> None:
    pods = [ready_pod("a", "2026-01-01T00:00:00Z", "2026-01-01T00:00:10Z")]
    snap, late = Snapshot.of(pods, now=T0 + 10_000), Settings(False, 600.0)
    assert not govern(
        _result(manifests=[{"kind": "Service", "metadata": {"name": "new"}}]), snap, late, total=2
    ).stage.control.exceeded
    assert not govern(_result(), snap, Settings(True, 600.0), total=2).stage.control.exceeded
    assert not govern(_result(stage(complete=True)), snap, late, total=2).stage.control.exceeded
    assert not govern(_result(), snap, Settings(False, None), total=2).stage.control.exceeded
    assert govern(_result(), snap, late, total=2, now=T0 + 20).stage.control.exceeded is False  # explicit now wins


def test_the_condition_replaces_progressing_in_the_status() -> None:
    st = govern(
        _result(), Snapshot.of([ready_pod("a", "2026-01-01T00:00:00Z")], now=T0 + 700), Settings(False, 600.0), total=2
    ).stage
    status = {"conditions": [{"type": "Available", "status": "False"}, {"type": "Progressing", "status": "True"}]}
    out = with_control_conditions(status, st)
    assert [c["type"] for c in out["conditions"]] == ["Available", "Progressing"]
    assert out["conditions"][1]["reason"] == PROGRESS_DEADLINE_EXCEEDED and status["conditions"][1]["status"] == "True"


# ---- rollback ---------------------------------------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.text("ab", max_size=2),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text("abc", max_size=2), inner, max_size=3),
    max_leaves=12,
)


@given(JSON, JSON)
def test_rebasing_the_full_current_value_gives_exactly_the_recorded_one(current, recorded) -> None:
    assert rebase(current, current, recorded) == recorded


@given(st.dictionaries(st.text("xyz", min_size=1, max_size=2), JSON, max_size=3), JSON, JSON)
def test_rollback_never_touches_paths_outside_the_covered_ones(other, current, recorded) -> None:
    manifest = {"spec": {"replicas": 3, "template": current}, "metadata": {"name": "a", "labels": other}}
    out = rollback_manifest(manifest, {("spec", "template"): current}, {("spec", "template"): recorded})
    # equal up to nulls and empty values, which mean nothing (an upstream-serialised revision's
    # ``creationTimestamp: null`` is never written into the user's manifest)
    assert pruned(out["spec"]["template"]) == pruned(recorded)
    assert out["spec"]["replicas"] == 3 and out["metadata"] == manifest["metadata"]


def test_only_differing_leaves_reach_the_users_sparse_manifest() -> None:
    mine = {"containers": [{"name": "c", "image": "i:2"}]}
    current = {
        "containers": [{"name": "c", "image": "i:2", "imagePullPolicy": "IfNotPresent"}],
        "dnsPolicy": "ClusterFirst",
    }
    recorded = {
        "containers": [{"name": "c", "image": "i:1", "imagePullPolicy": "IfNotPresent"}],
        "dnsPolicy": "ClusterFirst",
    }
    assert rebase(mine, current, recorded) == {"containers": [{"name": "c", "image": "i:1"}]}


def test_previous_revision_is_the_newest_other_one() -> None:
    revs = [RecordedRevision("a", 1, "x", {}), RecordedRevision("c", 3, "x", {}), RecordedRevision("b", 2, "x", {})]
    assert previous_revision("c", revs).key == "b"
    with pytest.raises(NoPreviousRevision, match="no revision other than the target c"):
        previous_revision("c", revs[1:2])
