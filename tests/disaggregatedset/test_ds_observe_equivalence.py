"""The one-pass ``split_by_child`` and the count-only ``observe_child`` read exactly what the
implementations they replaced read (kept below as references): same parts, same ChildState, on
random observations of a few children (stray and revision-only children, other sets' objects,
Nodes, deletions, missing leader workloads, odd timestamps)."""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pulumi_lws.core.contract.snapshot import Snapshot, annotations_of, is_deleting, labels_of
from pulumi_lws.core.k8s.timestamps import parse_timestamp
from pulumi_lws.disaggregatedset import labels as DL
from pulumi_lws.disaggregatedset.observe import (
    CONTROLLER_REVISION,
    NODE,
    ChildState,
    _identity,
    _leader_workload,
    _spec_replicas,
    _template_size,
    child_name_of,
    observe_child,
    parse_initial_replicas,
    split_by_child,
)
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.trace_view import read_groups

DS = "ds"


def reference_split(snapshot: Snapshot) -> dict[str, Snapshot]:
    nodes = {key: obj for key, obj in snapshot.objects.items() if key[0] == NODE}
    parts: dict[str, dict[tuple[str, str], Any]] = {}
    selected = {
        labels_of(o).get(DL.NAME)
        for (kind, _), o in snapshot.objects.items()
        if kind not in (NODE, CONTROLLER_REVISION)
    } - {None}
    labelled: set[str] = set()
    for key, obj in snapshot.objects.items():
        if key[0] == NODE:
            continue
        child = child_name_of(obj)
        if child is not None:
            parts.setdefault(child, {})[key] = obj
            ds_name = labels_of(obj).get(DL.NAME)
            if key[0] != CONTROLLER_REVISION or (ds_name is not None and (ds_name in selected or not selected)):
                labelled.add(child)
    return {
        child: Snapshot({**objs, **nodes}, snapshot.now) for child, objs in sorted(parts.items()) if child in labelled
    }


def reference_observe_child(ds_name: str, name: str, part: Snapshot) -> ChildState | None:
    objs = sorted(
        (o for (kind, _), o in part.objects.items() if kind != NODE), key=lambda o: (o["kind"], o["metadata"]["name"])
    )
    workload, hash_mode = _leader_workload(part, name)
    identity = _identity(ds_name, ([workload] if workload is not None else []) + objs)
    if identity is None:
        return None
    role, slice_index, revision = identity
    replicas = _spec_replicas(workload, hash_mode)
    target = labels_of(workload).get(L.TEMPLATE_REVISION_HASH, "") if workload is not None else ""
    view = read_groups(part, name, replicas, _template_size(workload), target, hash_mode)
    updated = sum(1 for c in view.cells if c.state in "Uu")
    initial = (
        parse_initial_replicas(annotations_of(workload).get(DL.INITIAL_REPLICAS)) if workload is not None else None
    )
    stamps = [
        t for t in (parse_timestamp((o.get("metadata") or {}).get("creationTimestamp")) for o in objs) if t is not None
    ]
    deleting = is_deleting(workload) if workload is not None else all(is_deleting(o) for o in objs)
    live = 0 if deleting else max(view.live, view.replicas)
    return ChildState(
        name=name,
        role=role,
        slice=slice_index,
        revision=revision,
        replicas=replicas,
        ready=view.available,
        initial_replicas=initial,
        created=min(stamps) if stamps else None,
        being_deleted=deleting,
        updated=updated,
        hash_mode=hash_mode,
        workload=workload is not None,
        live=live,
    )


CHILDREN = ("ds-0-aaaaaaaa-prefill", "ds-0-bbbbbbbb-prefill", "ds-1-aaaaaaaa-decode", "other-lws")
STAMPS = (None, "2026-01-01T00:00:05Z", "2026-01-01T00:00:01Z", "not a time", "")


@st.composite
def objects(draw, child: str) -> list[dict[str, Any]]:
    rev = draw(st.sampled_from(("aaaaaaaa", "bbbbbbbb")))

    def labels() -> dict[str, str]:
        out = {L.NAME: child}
        ds = draw(st.sampled_from((DS, DS, "other-ds", None)))
        if ds is not None:
            out[DL.NAME] = ds
            if draw(st.booleans()):
                out.update(
                    {DL.ROLE: "prefill", DL.REVISION: rev, DL.SLICE: draw(st.sampled_from(("0", "1", "", "-1", "x")))}
                )
        if draw(st.booleans()):
            out[L.TEMPLATE_REVISION_HASH] = draw(st.sampled_from(("h1", "h2")))
        return out

    def meta(name: str) -> dict[str, Any]:
        m: dict[str, Any] = {"name": name, "labels": labels()}
        stamp = draw(st.sampled_from(STAMPS))
        if stamp is not None:
            m["creationTimestamp"] = stamp
        if draw(st.integers(0, 4)) == 0:
            m["deletionTimestamp"] = "2026-01-01T00:02:00Z"
        if draw(st.booleans()):
            m["annotations"] = {
                DL.INITIAL_REPLICAS: draw(st.sampled_from(("3", "x", "+2"))),
                L.REPLICAS: draw(st.sampled_from(("2", "3"))),
            }
        return m

    out: list[dict[str, Any]] = []
    leader_kind = draw(st.sampled_from(("StatefulSet", "Deployment", None)))
    if leader_kind is not None:
        out.append({"kind": leader_kind, "metadata": meta(child), "spec": {"replicas": draw(st.integers(0, 3))}})
    for i in range(draw(st.integers(0, 3))):
        ready = draw(st.booleans())
        out.append(
            {
                "kind": "Pod",
                "metadata": meta(f"{child}-{i}"),
                "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": str(ready)}]},
            }
        )
        if draw(st.booleans()):
            out.append(
                {
                    "kind": "StatefulSet",
                    "metadata": meta(f"{child}-{i}"),
                    "spec": {"replicas": 1},
                    "status": {"availableReplicas": int(ready)},
                }
            )
    if draw(st.booleans()):
        out.append({"kind": CONTROLLER_REVISION, "metadata": meta(f"{child}-{rev}"), "revision": 1})
    return out


@st.composite
def observations(draw) -> Snapshot:
    objs: list[dict[str, Any]] = []
    for child in draw(st.lists(st.sampled_from(CHILDREN), unique=True, max_size=4)):
        objs += draw(objects(child))
    if draw(st.booleans()):
        objs.append({"kind": NODE, "metadata": {"name": "node-a"}})
    if draw(st.booleans()):  # a DS Service: the name label, no child label
        objs.append({"kind": "Service", "metadata": {"name": "svc", "labels": {DL.NAME: DS}}})
    return Snapshot({(o["kind"], o["metadata"]["name"]): o for o in objs}, 7.0)


@settings(max_examples=300)
@given(observations())
def test_split_and_child_readings_equal_the_reference(snap: Snapshot) -> None:
    parts, expected = split_by_child(snap), reference_split(snap)
    assert list(parts) == list(expected)
    for name, part in parts.items():
        assert dict(part.objects) == dict(expected[name].objects) and part.now == snap.now
        assert list(part.objects) == list(expected[name].objects)  # same iteration order
        assert observe_child(DS, name, part) == reference_observe_child(DS, name, expected[name])


@settings(max_examples=300)
@given(observations())
def test_the_identity_only_reading_equals_the_counted_one_but_the_counts(snap: Snapshot) -> None:
    """``counts=False`` (the trace view's and the rollback reader's reading) reads every identity
    field as the counted reading does; only ``ready``/``updated`` (0) and ``live`` (None) differ."""
    for name, part in split_by_child(snap).items():
        counted, identity = observe_child(DS, name, part), observe_child(DS, name, part, counts=False)
        if counted is None:
            assert identity is None
            continue
        assert identity == dataclasses.replace(counted, ready=0, updated=0, live=None)
