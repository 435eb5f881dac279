"""The per-reconcile replica index (modelserving/replicas.py) against the per-reader scans it
replaced (observe's, legacy's and recovery's): same objects per role replica, in name order, same
replica set and group order, foreign and malformed objects ignored (hypothesis)."""

from __future__ import annotations

from collections import defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st

from pulumi_lws.core.contract.snapshot import Snapshot, labels_of
from pulumi_lws.modelserving import labels as L
from pulumi_lws.modelserving.groups import parse_ordinal
from pulumi_lws.modelserving.replicas import observed_replicas

GROUPS = st.sampled_from(["ms-0", "ms-1", "ms-10", "ms-2", "other-1", "ms-x", "ms--1", "", None, 3, ["ms-1"]])
ROLES = st.sampled_from(["prefill", "decode", "", None, 5])
ROLE_IDS = st.sampled_from(["prefill-0", "prefill-1", "decode-0", "decode-x", "prefill", None, ("p",)])


@st.composite
def objects(draw) -> dict:
    labels = {L.NAME: draw(st.sampled_from(["ms", "ms", "ms", "other"]))}
    for key, values in ((L.GROUP_NAME, GROUPS), (L.ROLE, ROLES), (L.ROLE_ID, ROLE_IDS)):
        value = draw(values)
        if value is not None:
            labels[key] = value
    return {
        "kind": draw(st.sampled_from(["Pod", "StatefulSet", "Service"])),
        "metadata": {"name": f"o{draw(st.integers(0, 10_000))}", "labels": labels},
    }


def reference(ms: str, snapshot: Snapshot, kind: str) -> dict:
    """The scan every reader made (observe._identity), one per reader."""
    out: dict = defaultdict(list)
    for obj in snapshot.list(kind, **{L.NAME: ms}):
        lbl = labels_of(obj)
        try:
            prefix, g = parse_ordinal(str(lbl.get(L.GROUP_NAME, "")))
            role_prefix, r = parse_ordinal(str(lbl.get(L.ROLE_ID, "")))
        except TypeError:
            continue
        role = lbl.get(L.ROLE)
        if prefix != ms or g < 0 or not role or role_prefix != role or r < 0:
            continue
        out[(g, role, r)].append(obj)
    return dict(out)


@settings(max_examples=300, deadline=None)
@given(st.lists(objects(), max_size=30))
def test_the_index_holds_what_each_reader_scanned(objs: list[dict]) -> None:
    snapshot = Snapshot.of(objs)
    index = observed_replicas("ms", snapshot)
    sts, pods = reference("ms", snapshot, "StatefulSet"), reference("ms", snapshot, "Pod")
    assert index.replica_keys() == sorted(set(sts) | set(pods))
    for key in index.replica_keys():
        assert list(index.statefulsets_of(key)) == sts.get(key, [])
        assert list(index.pods_of(key)) == pods.get(key, [])
        assert index.has_statefulsets(key) == (key in sts)
    assert sorted(index.pod_keys()) == sorted(pods)
    groups = [(g, keys) for g, keys in index.by_group()]
    assert [g for g, _ in groups] == sorted({k[0] for k in index.replica_keys()})
    assert [k for _, keys in groups for k in keys] == index.replica_keys()
    for g, _ in groups:
        assert sorted(p["metadata"]["name"] for p in index.group_pods(g)) == sorted(
            p["metadata"]["name"] for k, ps in pods.items() if k[0] == g for p in ps
        )


def test_an_absent_replica_has_no_objects() -> None:
    index = observed_replicas("ms", Snapshot.of([]))
    assert index.replica_keys() == [] and list(index.by_group()) == []
    assert list(index.pods_of((0, "prefill", 0))) == [] and not index.has_statefulsets((0, "prefill", 0))
