"""The StatefulSet controller's piecewise FNV-32a is FNV-32a: every input, any memo state."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pulumi_lws.core.k8s.hashing import fnv32a
from pulumi_lws.sim.cluster.template_hash import TemplateHasher, template_hash

#: bytes rich in commas (the piece separator) and in repeats (memo hits), any byte value
_DATA = st.lists(st.sampled_from([b",", b",,", b"a", b"ab,", b"\x00", b"\xff", b'"k":"v"']), max_size=30).map(
    b"".join
) | st.binary(max_size=200)

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-2, 2, allow_nan=False) | st.text("a,é", max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text("ab,", max_size=2), inner, max_size=3),
    max_leaves=15,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_DATA, min_size=1, max_size=8))
def test_piecewise_fnv32a_equals_fnv32a_whatever_was_hashed_before(inputs: list[bytes]) -> None:
    hasher = TemplateHasher()
    for data in inputs + inputs:  # the second round meets every piece again, from the memo
        assert hasher.fnv32a(data) == fnv32a(data)


@settings(max_examples=100, deadline=None)
@given(st.lists(_DATA, min_size=1, max_size=8))
def test_a_full_memo_is_forgotten_and_the_hash_stays_exact(inputs: list[bytes]) -> None:
    hasher = TemplateHasher()
    hasher.LIMIT = 3
    for data in inputs + inputs:
        assert hasher.fnv32a(data) == fnv32a(data)
        assert len(hasher._memo) <= 3 + data.count(b",")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(st.text("ab", max_size=2), _JSON, max_size=4), min_size=1, max_size=5))
def test_template_hash_is_the_canonical_json_fnv32a(templates: list[dict]) -> None:
    hasher = TemplateHasher()
    for t in templates + templates:
        assert hasher.hash(t) == template_hash(t)


def test_known_vectors() -> None:
    hasher = TemplateHasher()
    assert hasher.fnv32a(b"") == 0x811C9DC5
    assert hasher.fnv32a(b"a") == 0xE40C292C  # FNV-1a 32 test vector
    assert hasher.fnv32a(b"a,a,a") == fnv32a(b"a,a,a")
