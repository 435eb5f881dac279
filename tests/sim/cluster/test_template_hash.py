"""The StatefulSet controller's template hash: FNV-32a (C) of the canonical JSON, exactly the
algorithm written out (``fnv32a_reference``), for every input."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pulumi_lws.core.k8s.hashing import canonical_json, fnv32a, fnv32a_reference, safe_encode
from pulumi_lws.sim.cluster.template_hash import template_hash

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-2, 2, allow_nan=False) | st.text("a,é", max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text("ab,", max_size=2), inner, max_size=3),
    max_leaves=15,
)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=600))
def test_fnv32a_is_the_algorithm_written_out(data: bytes) -> None:
    assert fnv32a(data) == fnv32a_reference(data)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text("ab", max_size=2), _JSON, max_size=4))
def test_template_hash_is_the_safe_encoded_fnv32a_of_the_canonical_json(template: dict) -> None:
    expected = safe_encode(str(fnv32a_reference(canonical_json(template).encode())))
    assert template_hash(template) == expected


def test_known_vectors() -> None:
    assert fnv32a(b"") == fnv32a_reference(b"") == 0x811C9DC5
    assert fnv32a(b"a") == fnv32a_reference(b"a") == 0xE40C292C  # FNV-1a 32 test vector
    assert fnv32a(b"foobar") == 0xBF9CF968  # FNV-1a 32 test vector
