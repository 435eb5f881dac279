"""core/features/control.py ``progress_and_start`` (the one pass ``govern`` makes, and what ``last_progress``
and ``rollout_started`` now read) against the two separate scans it replaced, kept here as the
reference, on random snapshots (hypothesis): timestamps shared, missing, unparsable or malformed,
pods Ready or not, the target revision in names or labels."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

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
