"""PlainDumper (core/k8s/yamlio.py) writes, byte for byte, what ``BaseDumper`` writes of a plain
deep copy of the documents, on generated documents: shared and repeated sub-objects, tuples and
read-only mappings, strings YAML would read as other types, floats, both key orders and
both flow styles; TextKeysDumper as ``{str(k): v}`` copies print."""

from __future__ import annotations

import types
from collections.abc import Mapping
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from pulumi_lws.core.k8s.yamlio import BaseDumper, PlainDumper, TextKeysDumper, dump_document, dump_documents

#: texts YAML resolves to something else than a string (quoted when written), and plain ones
TRICKY = [
    "yes",
    "No",
    "null",
    "~",
    "",
    "1",
    "-2",
    "0x1F",
    "1e3",
    "1.5",
    ".inf",
    "true",
    "2026-12-02",
    "a: b",
    "- x",
    "#c",
    "multi\nline",
    "  lead",
    "trail ",
    "é",
    "'q'",
    '"d"',
    "*a",
    "&b",
    "!t",
    "%p",
    "@x",
    "name",
    "nginx:1.2",
]


def plain(value: Any, text_keys: bool = False) -> Any:
    """The deep copy the dumper's output is compared against."""
    if isinstance(value, Mapping):
        return {(str(k) if text_keys else k): plain(v, text_keys) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v, text_keys) for v in value]
    return value


scalars = st.one_of(
    st.sampled_from(TRICKY),
    st.text(max_size=8),
    st.integers(-(10**12), 10**12),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False),
)
keys = st.one_of(st.sampled_from(["a", "b", "name", "labels", "1", "yes"]), st.text(max_size=5))


def _containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, max_size=4),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(keys, children, max_size=4),
        st.dictionaries(keys, children, max_size=3).map(types.MappingProxyType),
    )


values = st.recursive(scalars, _containers, max_leaves=25)


@st.composite
def documents(draw: Any) -> list[Any]:
    """Documents that reuse one another's sub-objects (as rendered manifests share parts)."""
    shared = draw(st.lists(values, min_size=1, max_size=3))
    docs = []
    for _ in range(draw(st.integers(1, 4))):
        doc = draw(st.dictionaries(keys, st.one_of(values, st.sampled_from(shared)), max_size=5))
        doc["again"] = draw(st.sampled_from(shared))
        doc["twice"] = [doc["again"], doc["again"]]
        docs.append(doc)
    return docs


@settings(max_examples=300, deadline=None)
@given(documents(), st.booleans(), st.sampled_from([False, None, True]))
def test_the_same_text_as_a_plain_copy(docs: list[Any], sort_keys: bool, flow: bool | None) -> None:
    options = {"sort_keys": sort_keys, "default_flow_style": flow, "explicit_start": True, "allow_unicode": False}
    assert yaml.dump_all(docs, Dumper=PlainDumper, **options) == yaml.dump_all(
        plain(docs), Dumper=BaseDumper, **options
    )


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.one_of(keys, st.integers(0, 20), st.booleans()), values, max_size=6), st.booleans())
def test_text_keys_are_written_as_a_copy_with_str_keys_is(doc: dict[Any, Any], sort_keys: bool) -> None:
    options = {"sort_keys": sort_keys, "default_flow_style": False}
    assert yaml.dump(doc, Dumper=TextKeysDumper, **options) == yaml.dump(plain(doc, True), Dumper=BaseDumper, **options)
    assert dump_document(doc, sort_keys=sort_keys, text_keys=True) == yaml.dump(
        plain(doc, True), Dumper=BaseDumper, allow_unicode=False, **options
    )


def test_a_shared_object_is_written_at_each_place_never_as_an_alias() -> None:
    labels = {"app": "x"}
    text = dump_documents([{"metadata": {"labels": labels}, "selector": {"matchLabels": labels}}])
    assert "&" not in text and "*" not in text
    assert text.count("app: x") == 2


def test_an_object_that_contains_itself_is_refused() -> None:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    with pytest.raises(yaml.representer.RepresenterError, match="contains itself"):
        dump_documents([loop])
