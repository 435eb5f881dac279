"""``TraceRow.to_json`` is the documented trace schema (docs/trace-schema.md): built field by
field for speed, it must equal what ``dataclasses.asdict`` gives (every field in declaration
order, cells and lanes as dicts), with the sequences as lists."""

from __future__ import annotations

import json
from dataclasses import asdict

from hypothesis import given
from hypothesis import strategies as st

from pulumi_lws.core.contract.trace import GroupCell, Lane, Trace, TraceRow

text = st.text(max_size=6)
cells = st.builds(
    GroupCell, id=text, state=st.sampled_from("Uou x-"), revision=st.none() | text, surge=st.booleans(), detail=text
)
lanes = st.builds(
    Lane,
    name=text,
    old=st.integers(0, 9),
    new=st.integers(0, 9),
    old_ready=st.integers(0, 9),
    new_ready=st.integers(0, 9),
)
rows = st.builds(
    TraceRow,
    time=st.floats(0, 1e6, allow_nan=False) | st.integers(0, 10**6),
    replicas=st.integers(0, 50),
    partition=st.none() | st.integers(0, 50),
    groups=st.lists(cells, max_size=8).map(tuple),
    live=st.integers(0, 50),
    available=st.integers(0, 50),
    revision=text,
    actions=st.lists(text, max_size=3).map(tuple),
    blocker=st.none() | text,
    note=text,
    case=st.none() | text,
    blocker_code=st.none() | text,
    labelled=st.lists(text, max_size=3).map(tuple),
    lanes=st.lists(lanes, max_size=3).map(tuple),
)


def reference(row: TraceRow) -> dict:
    """The former implementation."""
    d = asdict(row)
    d["groups"] = [asdict(g) for g in row.groups]
    d["lanes"] = [asdict(lane) for lane in row.lanes]
    d["actions"] = list(row.actions)
    d["labelled"] = list(row.labelled)
    return d


@given(rows)
def test_row_json_is_asdict_with_lists(row: TraceRow) -> None:
    got = row.to_json()
    assert got == reference(row)
    assert list(got) == list(reference(row))  # key order: the JSON text is the same
    assert [list(c) for c in got["groups"]] == [list(c) for c in reference(row)["groups"]]
    assert json.dumps(got) == json.dumps(reference(row))


@given(st.lists(rows, max_size=4))
def test_trace_json_text_is_unchanged(rows_: list[TraceRow]) -> None:
    trace = Trace(rows=rows_, converged=True)
    assert json.dumps(trace.to_json())  # serialisable
    assert [r for r in trace.to_json()["rows"]] == [reference(r) for r in rows_]
