"""``Snapshot.list`` answers from indexes built once per snapshot, exactly as a scan would."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pulumi_lws.core.contract.snapshot import Snapshot, labels_of

KINDS = ("Pod", "StatefulSet")
KEYS = ("a", "b/c")
VALUES = ("x", "y")


def _scan(snap: Snapshot, kind: str, **labels):
    """The definition: every object of ``kind`` whose labels contain every pair, sorted by name."""
    out = [
        o
        for (k, _), o in snap.objects.items()
        if k == kind and all(labels_of(o).get(key) == v for key, v in labels.items())
    ]
    return sorted(out, key=lambda o: o["metadata"]["name"])


objects = st.lists(
    st.tuples(
        st.sampled_from(KINDS),
        st.text("pqr", min_size=1, max_size=3),
        st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=2),
    ),
    max_size=25,
)
queries = st.tuples(
    st.sampled_from(KINDS), st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES + (None,)), max_size=2)
)


@given(objects, st.lists(queries, min_size=1, max_size=6))
@settings(max_examples=200, deadline=None)
def test_indexed_list_equals_a_scan(objs, asked) -> None:
    snap = Snapshot.of([{"kind": k, "metadata": {"name": n, **({"labels": lbl} if lbl else {})}} for k, n, lbl in objs])
    for kind, labels in asked:  # repeated queries hit the indexes built by earlier ones
        assert snap.list(kind, **labels) == _scan(snap, kind, **labels)


def test_by_label_buckets_in_name_order_and_lists_are_the_callers() -> None:
    snap = Snapshot.of(
        [
            {"kind": "Pod", "metadata": {"name": n, "labels": {"g": g}}}
            for n, g in (("p3", "1"), ("p1", "0"), ("p2", "1"))
        ]
        + [{"kind": "Pod", "metadata": {"name": "p0"}}]
    )
    buckets = snap.by_label("Pod", "g")
    assert {k: [o["metadata"]["name"] for o in v] for k, v in buckets.items()} == {
        "0": ["p1"],
        "1": ["p2", "p3"],
        None: ["p0"],
    }
    mine = snap.list("Pod", g="1")
    mine.clear()
    assert [o["metadata"]["name"] for o in snap.list("Pod", g="1")] == ["p2", "p3"]


def test_an_unhashable_label_value_falls_back_to_a_scan() -> None:
    odd = {"kind": "Pod", "metadata": {"name": "odd", "labels": {"g": ["not", "a", "string"]}}}
    snap = Snapshot.of([odd, {"kind": "Pod", "metadata": {"name": "ok", "labels": {"g": "1"}}}])
    assert [o["metadata"]["name"] for o in snap.list("Pod", g="1")] == ["ok"]
    assert snap.list("Pod", g=["not", "a", "string"]) == [odd]
    assert [o["metadata"]["name"] for o in snap.by_label("Pod", "g")["1"]] == ["ok"]
