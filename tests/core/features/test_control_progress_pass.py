"""core/features/control.py ``progress_and_start`` (the one pass ``govern`` makes, and what ``last_progress``
and ``rollout_started`` now read) against the two separate scans it replaced, kept here as the
reference, on random snapshots (hypothesis): timestamps shared, missing, unparsable or malformed,
pods Ready or not, the target revision in names or labels."""

from __future__ import annotations

import copy
import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from pulumi_lws.core.contract.reuse import Reuse
from pulumi_lws.core.contract.snapshot import Snapshot, labels_of, pod_condition
from pulumi_lws.core.features.control import (
    last_progress,
    progress_and_start,
    rollout_started,
    timestamp,
)


def reference_progress_times(obj):
    meta = obj.get("metadata") or {}
    for value in (meta.get("creationTimestamp"), meta.get("deletionTimestamp")):
        t = timestamp(value)
        if t is not None:
            yield t
    ready = pod_condition(obj, "Ready") if obj.get("kind") == "Pod" else None
    if ready is not None and ready.get("status") == "True":
        t = timestamp(ready.get("lastTransitionTime"))
        if t is not None:
            yield t


def reference_last_progress(snapshot):
    return max((t for obj in snapshot for t in reference_progress_times(obj)), default=None)


def reference_rollout_started(snapshot, target_revision):
    if not target_revision:
        return None
    times = []
    for obj in snapshot:
        meta = obj.get("metadata") or {}
        if target_revision in str(meta.get("name") or "") or target_revision in labels_of(obj).values():
            t = timestamp(meta.get("creationTimestamp"))
            if t is not None:
                times.append(t)
    return min(times, default=None)


STAMPS = st.sampled_from(
    [
        None,
        "",
        "2026-01-01T00:00:00Z",
        "2026-01-01T00:00:05Z",
        "2026-01-01T00:00:05.5Z",
        "2026-01-01T00:01:00+00:00",
        "2026-01-01T00:01:00",
        "not a time",
        7,
    ]
)


@st.composite
def objects(draw) -> dict:
    kind = draw(st.sampled_from(["Pod", "StatefulSet", "ControllerRevision"]))
    n = draw(st.integers(0, 10_000))
    name = draw(st.sampled_from([f"ms-{n}", f"ms-rev1-{n}", f"ms-rev2-{n}"]))
    meta: dict = {"name": name, "labels": {"revision": draw(st.sampled_from(["rev1", "rev2", "other"]))}}
    for field in ("creationTimestamp", "deletionTimestamp"):
        value = draw(STAMPS)
        if value is not None:
            meta[field] = value
    obj: dict = {"kind": kind, "metadata": meta}
    if kind == "Pod" and draw(st.booleans()):
        obj["status"] = {
            "conditions": [
                {
                    "type": "Ready",
                    "status": draw(st.sampled_from(["True", "False"])),
                    "lastTransitionTime": draw(STAMPS),
                }
            ]
        }
    return obj


@settings(max_examples=300, deadline=None)
@given(st.lists(objects(), max_size=12), st.sampled_from(["", "rev1", "rev2"]))
def test_one_pass_reads_what_the_two_readers_read(objs: list[dict], target: str) -> None:
    snapshot = Snapshot.of(objs)
    expected = (reference_last_progress(snapshot), reference_rollout_started(snapshot, target))
    assert progress_and_start(snapshot, target) == expected
    assert (last_progress(snapshot), rollout_started(snapshot, target)) == expected


def test_shared_timestamps_are_parsed_once_each_and_read_correctly() -> None:
    objs = [
        {
            "kind": "Pod",
            "metadata": {
                "name": f"p{i}",
                "creationTimestamp": "2026-01-01T00:00:00Z",
                "labels": {"revision": "r2" if i % 2 else "r1"},
            },
            "status": {
                "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:30Z"}]
            },
        }
        for i in range(4)
    ]
    last, started = progress_and_start(Snapshot.of(objs), "r2")
    assert last == 1767225630.0 and started == 1767225600.0


@settings(max_examples=200, deadline=None)
@given(
    st.lists(objects(), max_size=12),
    st.lists(objects(), max_size=6),
    st.lists(st.booleans(), max_size=12),
    st.sampled_from(["", "rev1", "rev2"]),
)
def test_under_the_promise_every_snapshot_reads_as_without_it(
    first: list[dict], added: list[dict], kept: list[bool], target: str
) -> None:
    """Snapshots of one observer (some objects the very same, some new copies, some new objects)
    read as the same objects without the promise; the memo holds only what a bound allows."""
    reuse = Reuse()
    snap = dataclasses.replace(Snapshot.of(first), reuse=reuse)
    assert progress_and_start(snap, target) == progress_and_start(dataclasses.replace(snap, reuse=None), target)
    # the next snapshot: an object kept (the same one) or rewritten (a new copy), plus new objects
    later = [o if keep else copy.deepcopy(o) for o, keep in zip(first, kept + [True] * len(first))] + added
    for o in later:
        if o not in first or any(o is f for f in first):
            continue
        o["metadata"]["creationTimestamp"] = "2026-01-01T00:09:00Z"  # a rewritten copy says something new
    snap2 = dataclasses.replace(Snapshot.of(later), reuse=reuse)
    for _ in range(2):  # the second read: every object from the memo
        assert progress_and_start(snap2, target) == (
            reference_last_progress(snap2),
            reference_rollout_started(snap2, target),
        )


def test_the_memo_is_bounded_by_the_snapshots_read() -> None:
    from pulumi_lws.core.features import control

    reuse = Reuse()
    for n in range(5):
        objs = [
            {"kind": "Pod", "metadata": {"name": f"p{n}-{i}", "creationTimestamp": "2026-01-01T00:00:00Z"}}
            for i in range(600)
        ]
        progress_and_start(dataclasses.replace(Snapshot.of(objs), reuse=reuse), "")
        assert len(reuse.memo(control.__name__ + ".progress")) <= 2 * 600 + 1024
