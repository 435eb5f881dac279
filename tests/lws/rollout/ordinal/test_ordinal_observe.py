"""``observe_group`` reads each group once, and equals the legend composed from the named readers.

The reference below is the module legend written with the named readers (``group_size``,
``pod_running_and_ready``, ``statefulset_ready``, ``group_revision_observed``, ``group_phase``),
as observe_group was before it read the leader pod's metadata, status and conditions once.
"""

from __future__ import annotations

import dataclasses
import inspect

from hypothesis import example, given, settings
from hypothesis import strategies as st

from pulumi_lws.core.contract.snapshot import Snapshot, pod_running_and_ready, statefulset_ready
from pulumi_lws.core.contract.stage import GroupView
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api import LeaderWorkerSet
from pulumi_lws.lws.observe import revision_of
from pulumi_lws.lws.rollout.ordinal.groups import (
    group_phase,
    group_revision_observed,
    group_size,
    observe_group,
    observe_ordinal,
    observed_worker_revisions,
)

TARGET, OLD = "new", "old"


def reference(lws: LeaderWorkerSet, i: int, leader, worker_sts, pods) -> GroupView:
    size = group_size(lws, leader)
    multi = size > 1
    exists = leader is not None
    complete = exists and (not multi or worker_sts is not None)
    ready = complete and pod_running_and_ready(leader) and (not multi or statefulset_ready(worker_sts))
    updated = complete and revision_of(leader) == TARGET and (not multi or revision_of(worker_sts) == TARGET)
    return GroupView(
        id=str(i),
        revision=group_revision_observed(leader, worker_sts),
        ready=bool(ready),
        updated=bool(updated),
        exists=exists,
        surge=i >= lws.replicas,
        index=i,
        phase=group_phase(leader, worker_sts, pods, bool(ready)),
    )


revisions = st.sampled_from([TARGET, OLD, None, ""])
conditions = st.lists(
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["Ready", "PodScheduled", "ContainersReady"]),
            "status": st.sampled_from(["True", "False"]),
        },
        optional={"reason": st.sampled_from(["Unschedulable", "SchedulingGated"])},
    ),
    max_size=4,
)


def _meta(rev, deleting, annotations=None):
    meta = {"name": "x", **({"labels": {L.TEMPLATE_REVISION_HASH: rev}} if rev is not None else {})}
    if annotations:
        meta["annotations"] = annotations
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return meta


pods = st.builds(
    lambda rev, deleting, size, phase, conds: {
        "kind": "Pod",
        "metadata": _meta(rev, deleting, {L.SIZE: size} if size is not None else None),
        "status": {**({"phase": phase} if phase else {}), **({"conditions": conds} if conds is not None else {})},
    },
    revisions,
    st.booleans(),
    st.sampled_from([None, "1", "3", "x"]),
    st.sampled_from([None, "Running", "Pending", "Failed"]),
    st.none() | conditions,
)
worker_sets = st.builds(
    lambda rev, deleting, available, cur, upd: {
        "kind": "StatefulSet",
        "metadata": _meta(rev, deleting),
        "spec": {"replicas": 2},
        "status": {"availableReplicas": available, "currentRevision": cur, "updateRevision": upd},
    },
    revisions,
    st.booleans(),
    st.sampled_from([0, 2, None]),
    st.sampled_from(["a", "b"]),
    st.sampled_from(["a", "b"]),
)
worker_pods = st.lists(
    st.builds(lambda conds: {"kind": "Pod", "metadata": {"name": "w"}, "status": {"conditions": conds}}, conditions),
    max_size=2,
)


def _lws(size: int, replicas: int) -> LeaderWorkerSet:
    return LeaderWorkerSet.parse(
        {
            "metadata": {"name": "g", "namespace": "ns"},
            "spec": {
                "replicas": replicas,
                "leaderWorkerTemplate": {
                    "size": size,
                    "workerTemplate": {"spec": {"containers": [{"name": "c", "image": "i"}]}},
                },
            },
        }
    )


@given(st.none() | pods, st.none() | worker_sets, worker_pods, st.sampled_from([1, 3]), st.integers(0, 3))
@example(
    leader={
        "metadata": {"name": "x"},
        "status": {
            "phase": "Running",
            "conditions": [  # the first one counts
                {"type": "Ready", "status": "True"},
                {"type": "Ready", "status": "False"},
            ],
        },
    },
    worker_sts=None,
    group_pods=[],
    size=1,
    i=0,
)
@example(
    leader={
        "metadata": {"name": "x"},
        "status": {
            "phase": "Pending",
            "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"},
                {"type": "PodScheduled", "status": "True"},
            ],
        },
    },
    worker_sts=None,
    group_pods=[],
    size=1,
    i=0,
)
@settings(max_examples=400, deadline=None)
def test_observe_group_equals_the_legend_from_the_named_readers(leader, worker_sts, group_pods, size, i) -> None:
    lws = _lws(size, 2)
    assert observe_group(i, leader, worker_sts, group_pods, lws.size, lws.replicas, TARGET) == reference(
        lws, i, leader, worker_sts, group_pods
    )


def test_observe_ordinal_reads_worker_revisions_with_the_groups() -> None:
    lws = _lws(3, 3)
    objs = [{"kind": "StatefulSet", "metadata": {"name": "g", "labels": {L.NAME: "g"}}, "spec": {"replicas": 3}}]
    objs += [
        {
            "kind": "StatefulSet",
            "metadata": _meta(rev, False) | {"name": f"g-{i}"},
            "spec": {"replicas": 2},
            "status": {},
        }
        for i, rev in ((0, OLD), (2, TARGET))
    ]
    snap = Snapshot.of(objs)
    groups, workers = observe_ordinal(lws, snap, TARGET)
    assert [g.revision for g in groups] == [OLD, None, TARGET]
    assert workers == {0: OLD, 1: None, 2: TARGET}
    # past the observed ordinals (a scale-up) the rest are looked up; known ones are not re-read
    assert observed_worker_revisions(lws, Snapshot(), 4, workers) == {0: OLD, 1: None, 2: TARGET, 3: None}
    assert observed_worker_revisions(lws, snap, 3) == workers


def test_group_view_init_matches_its_fields() -> None:
    """GroupView's hand-written __init__ (speed) keeps the dataclass's fields, order and defaults."""
    params = list(inspect.signature(GroupView.__init__).parameters.values())[1:]
    fields = dataclasses.fields(GroupView)
    assert [p.name for p in params] == [f.name for f in fields]
    assert [p.default for p in params] == [
        f.default if f.default is not dataclasses.MISSING else inspect.Parameter.empty for f in fields
    ]
    g = GroupView("1", "r", True, False, index=1)
    assert dataclasses.replace(g, ready=False) == GroupView("1", "r", False, False, index=1)
    assert hash(g) == hash(GroupView("1", "r", True, False, index=1))
