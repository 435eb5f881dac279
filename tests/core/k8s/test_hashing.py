"""canonical_json: the text of ``ints_back`` of the value, whether or not the copy is skipped."""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pulumi_lws.core.k8s.hashing import canonical_json
from pulumi_lws.core.k8s.model import ints_back

_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([1.0, -0.0, 2.0**60, 0.5])
    | st.text(max_size=4)
)
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(st.text(max_size=3), inner, max_size=4)
        | st.dictionaries(st.text(max_size=3), inner, max_size=3).map(MappingProxyType)
    ),
    max_leaves=20,
)


def _reference(value: Any) -> str:
    return json.dumps(ints_back(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@settings(max_examples=400, deadline=None)
@given(_VALUES)
def test_canonical_json_is_the_text_of_ints_back(value: Any) -> None:
    assert canonical_json(value) == _reference(value)


def test_integral_floats_anywhere_are_written_as_ints() -> None:
    assert canonical_json({"b": [1.0, {"c": (2.0, "x")}], "a": 1}) == '{"a":1,"b":[1,{"c":[2,"x"]}]}'
    assert canonical_json({"a": MappingProxyType({"n": 3.0})}) == '{"a":{"n":3}}'
    assert canonical_json({"a": [True, None, 0.5]}) == '{"a":[true,null,0.5]}'
