"""lws/trace_view.py: the group legend read from an observation. ``count_groups`` (the totals the
DisaggregatedSet observation needs, no cell built) agrees with ``read_groups``' view on every
observation; the Ordinal leader match (``<lws>-<decimal digits>``) is the old regex's."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.trace_view import _ordinal_leaders, count_groups, read_groups

NAME = "web"
REVS = ("aaa", "bbb", None)


def pod(
    name: str,
    *,
    rev: str | None,
    ready: bool,
    deleting: bool,
    size: str | None = None,
    labels: dict[str, str] | None = None,
    owners: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    lbl = {L.NAME: NAME, **(labels or {})}
    if rev is not None:
        lbl[L.TEMPLATE_REVISION_HASH] = rev
    meta: dict[str, Any] = {"name": name, "labels": lbl, "creationTimestamp": f"2026-01-01T00:00:{len(name):02d}Z"}
    if size is not None:
        meta["annotations"] = {L.SIZE: size}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:01:00Z"
    if owners:
        meta["ownerReferences"] = owners
    status = {
        "phase": "Running" if ready else "Pending",
        "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
    }
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {}, "status": status}


def sts(name: str, replicas: int, *, rev: str | None, ready: bool, deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {L.NAME: NAME, **({L.TEMPLATE_REVISION_HASH: rev} if rev else {})}}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:01:00Z"
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": meta,
        "spec": {"replicas": replicas},
        "status": {"availableReplicas": replicas if ready else 0, "currentRevision": "r", "updateRevision": "r"},
    }


flags = st.booleans()
revs = st.sampled_from(REVS)


@st.composite
def ordinal_observations(draw) -> Snapshot:
    objs = []
    for i in draw(st.lists(st.integers(0, 12), unique=True, max_size=8)):
        objs.append(
            pod(
                f"{NAME}-{i}",
                rev=draw(revs),
                ready=draw(flags),
                deleting=draw(flags),
                size=draw(st.sampled_from((None, "1", "2", "3"))),
            )
        )
        if draw(flags):
            objs.append(sts(f"{NAME}-{i}", 1, rev=draw(revs), ready=draw(flags), deleting=draw(flags)))
            objs.append(pod(f"{NAME}-{i}-1", rev=draw(revs), ready=draw(flags), deleting=False))
    # names the leader pattern must reject or read exactly as the regex did
    for stray in draw(
        st.lists(
            st.sampled_from([f"{NAME}-07x", f"{NAME}-", f"{NAME}x-3", f"{NAME}-\u0663", f"{NAME}-012", "other-1"]),
            unique=True,
            max_size=3,
        )
    ):
        objs.append(pod(stray, rev=draw(revs), ready=draw(flags), deleting=False))
    if draw(flags):
        objs.append(sts(NAME, draw(st.integers(0, 14)), rev="aaa", ready=True, deleting=draw(flags)))
    return Snapshot.of(objs)


@st.composite
def hash_observations(draw) -> Snapshot:
    objs = []
    for i, key in enumerate(
        draw(st.lists(st.sampled_from(["k1aaaaaaaa", "k2bbbbbbbb", "k3cccccccc", ""]), max_size=6))
    ):
        labels = {L.WORKER_INDEX: "0", **({L.GROUP_KEY: key} if key else {})}
        objs.append(pod(f"{NAME}-lead-{i}", rev=draw(revs), ready=draw(flags), deleting=draw(flags), labels=labels))
        if key and draw(flags):
            objs.append(sts(f"{NAME}-{key[:8]}", 1, rev=draw(revs), ready=draw(flags)))
    for j, key in enumerate(draw(st.lists(st.sampled_from(["k2bbbbbbbb", "k9zzzzzzzz", ""]), max_size=3))):
        owners = [{"kind": "StatefulSet", "name": f"{NAME}-{key[:8]}"}]
        labels = {L.GROUP_KEY: key} if key else {L.GROUP_INDEX: str(j)}
        objs.append(
            pod(f"{NAME}-w-{j}", rev=draw(revs), ready=draw(flags), deleting=draw(flags), labels=labels, owners=owners)
        )
    if draw(flags):
        objs.append(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": NAME},
                "spec": {"replicas": draw(st.integers(0, 5))},
            }
        )
    return Snapshot.of(objs)


def totals(snap: Snapshot, size: int, target: str, hash_mode: bool) -> tuple[int, int, int, int]:
    view = read_groups(snap, NAME, 3, size, target, hash_mode)
    return view.replicas, view.live, view.available, sum(1 for c in view.cells if c.state in "Uu")


@settings(max_examples=200)
@given(ordinal_observations(), st.sampled_from((1, 2)), st.sampled_from(("aaa", "bbb")))
def test_ordinal_counts_are_the_views_totals(snap: Snapshot, size: int, target: str) -> None:
    assert tuple(count_groups(snap, NAME, size, target)) == totals(snap, size, target, False)


@settings(max_examples=200)
@given(hash_observations(), st.sampled_from((1, 2)), st.sampled_from(("aaa", "bbb")))
def test_hash_counts_are_the_views_totals(snap: Snapshot, size: int, target: str) -> None:
    assert tuple(count_groups(snap, NAME, size, target, hash_mode=True)) == totals(snap, size, target, True)


@given(st.lists(st.text(alphabet="web-0123456789x\u0663\u00b2", max_size=9), max_size=8))
def test_ordinal_leaders_match_the_regex(names: list[str]) -> None:
    pattern = re.compile(re.escape(NAME) + r"-(\d+)")
    snap = Snapshot.of([pod(n, rev=None, ready=True, deleting=False) for n in dict.fromkeys(names)])
    expected = {}
    for p in snap.list("Pod", **{L.NAME: NAME}):
        m = pattern.fullmatch(p["metadata"]["name"])
        if m:
            expected[int(m.group(1))] = p
    assert _ordinal_leaders(snap, NAME) == expected


def test_counts_of_a_known_fleet() -> None:
    """Group 0 updated and ready, 1 updated but its workers unready, 2 old and ready, 3 leaderless
    (wanted by the StatefulSet), 4 terminating: the legend's totals."""
    objs = [sts(NAME, 4, rev="bbb", ready=True)]
    groups = {
        0: ("bbb", True, True, False),
        1: ("bbb", True, False, False),
        2: ("aaa", True, True, False),
        4: ("aaa", False, False, True),
    }
    for i, (rev, ready, workers_ready, deleting) in groups.items():
        objs.append(pod(f"{NAME}-{i}", rev=rev, ready=ready, deleting=deleting))
        objs.append(sts(f"{NAME}-{i}", 1, rev=rev, ready=workers_ready))
    counts = count_groups(Snapshot.of(objs), NAME, 2, "bbb")
    assert (counts.replicas, counts.live, counts.available, counts.updated) == (4, 3, 2, 2)


# ---- the per-group readers against the straightforward composition they replaced -------------


def reference_state(snap: Snapshot, leader: Any, worker_name: str, size: int, target: str) -> str:
    from pulumi_lws.core.contract.snapshot import annotations_of, pod_running_and_ready, statefulset_ready
    from pulumi_lws.lws.observe import revision_of

    size = int(annotations_of(leader).get(L.SIZE, size))
    workers = snap.get("StatefulSet", worker_name) if size > 1 else None
    ready = pod_running_and_ready(leader) and (size == 1 or statefulset_ready(workers))
    updated = revision_of(leader) == target and (size == 1 or revision_of(workers) == target)
    return ("U" if ready else "u") if updated else ("o" if ready else "x")


class ReferenceWorkers:
    """The index of every name prefix ending before a '-'."""

    def __init__(self, snap: Snapshot) -> None:
        self.snap = snap

    def of(self, lws_name: str, worker_sts: str) -> list[Any]:
        return [
            p for p in self.snap.list("Pod", **{L.NAME: lws_name}) if p["metadata"]["name"].startswith(worker_sts + "-")
        ]


def reference_detail(leader: Any, worker_name: str, pods: Any) -> str:
    from pulumi_lws.core.contract.snapshot import is_deleting, labels_of, pod_unschedulable

    if is_deleting(leader):
        return "terminating"
    if (leader.get("spec") or {}).get("schedulingGates"):
        return "gated"
    group_workers = pods.of(labels_of(leader).get(L.NAME, ""), worker_name)
    if pod_unschedulable(leader) or any(pod_unschedulable(p) for p in group_workers):
        return "unschedulable"
    return ""


@st.composite
def detailed(draw, base) -> Snapshot:
    """``base`` observations, some pods gated or unschedulable (a scheduler's condition before or
    after Ready), plus pods named like a group's workers with more dashes, or a '.' or '/' where
    the workers' '-' is (the bounds of the name-order run of one group's workers)."""
    objs = [dict(o) for o in draw(base).objects.values()]
    for i in draw(st.lists(st.integers(0, 12), unique=True, max_size=4)):
        suffix = draw(st.sampled_from(["-2", "-x-1", "-1-1", ".1", "/1", "-", "0-1"]))
        objs.append(pod(f"{NAME}-{i}{suffix}", rev=draw(revs), ready=False, deleting=False))
    for o in objs:
        if o["kind"] != "Pod":
            continue
        if draw(flags):
            o["spec"] = {"schedulingGates": [{"name": "g"}]} if draw(flags) else {}
        if draw(flags):
            sched = {
                "type": "PodScheduled",
                "status": "False",
                "reason": draw(st.sampled_from([None, "Unschedulable", "SchedulingGated"])),
            }
            conds = list(o["status"]["conditions"])
            conds.insert(draw(st.integers(0, len(conds))), sched)
            o["status"] = {**o["status"], "conditions": conds}
    return Snapshot.of(objs)


def reference_view(snap: Snapshot, size: int, target: str, hash_mode: bool, monkeypatch: Any) -> Any:
    import pulumi_lws.lws.trace_view as tv

    with monkeypatch.context() as m:
        m.setattr(tv, "_state", reference_state)
        m.setattr(tv, "_detail", reference_detail)
        m.setattr(tv, "_Workers", ReferenceWorkers)
        return read_groups(snap, NAME, 3, size, target, hash_mode), count_groups(snap, NAME, size, target, hash_mode)


@settings(max_examples=300)
@given(detailed(ordinal_observations()), st.sampled_from((1, 2)), st.sampled_from(("aaa", "bbb")), flags)
def test_cells_and_counts_equal_the_straightforward_readers(snap: Snapshot, size: int, target: str, mode: bool) -> None:
    import pytest

    with pytest.MonkeyPatch.context() as monkeypatch:
        expected = reference_view(snap, size, target, mode, monkeypatch)
    assert (read_groups(snap, NAME, 3, size, target, mode), count_groups(snap, NAME, size, target, mode)) == expected


@settings(max_examples=200)
@given(detailed(hash_observations()), st.sampled_from((1, 2)), st.sampled_from(("aaa", "bbb")))
def test_hash_cells_equal_the_straightforward_readers(snap: Snapshot, size: int, target: str) -> None:
    import pytest

    with pytest.MonkeyPatch.context() as monkeypatch:
        expected = reference_view(snap, size, target, True, monkeypatch)
    assert (read_groups(snap, NAME, 3, size, target, True), count_groups(snap, NAME, size, target, True)) == expected


@settings(max_examples=500)
@given(
    st.lists(st.text(alphabet="w-1./", max_size=6), max_size=12),
    st.lists(st.text(alphabet="w-1./", max_size=4), min_size=1, max_size=4),
)
def test_a_groups_workers_are_the_pods_named_after_it(pod_names: list[str], queries: list[str]) -> None:
    """``_Workers.of(lws, p)``: the pods of the LWS whose name starts with ``p + "-"``, in name
    order (the two bisections' bounds), also when the names are not in order (the prefix index)."""
    from pulumi_lws.lws.trace_view import _Workers

    snap = Snapshot.of([pod(n, rev=None, ready=True, deleting=False) for n in dict.fromkeys(pod_names)])
    unsorted = Snapshot(
        {("Pod", f"k{i}"): pod(n, rev=None, ready=True, deleting=False) for i, n in enumerate(reversed(pod_names))}
    )
    for s in (snap, unsorted):
        workers, reference = _Workers(s), ReferenceWorkers(s)
        for q in queries:
            assert workers.of(NAME, q) == reference.of(NAME, q)
