"""core/k8s/yamlio.py on libyaml and on the pure-Python classes: same documents, same guarantees,
byte-identical output, and a clean fallback where PyYAML was built without libyaml."""

from __future__ import annotations

import importlib
import pathlib

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.core.k8s import yamlio

ROOT = pathlib.Path(__file__).resolve().parents[3]
CORPUS = sorted(
    p
    for d in ("examples", "tests/manifests_upstream", "tests/manifests_upstream_kthena", "tests/manifests_upstream_ds")
    for p in (ROOT / d).rglob("*.yaml")
)


class PythonStrictLoader(yamlio.StrictMapping, yaml.SafeLoader):
    """The strict loader's checks on the pure-Python parser (what a PyYAML without libyaml runs)."""


def load_python(text: str, source: str = "<input>") -> list:
    return yamlio._load(PythonStrictLoader, text, source)


def test_the_c_classes_are_used_where_pyyaml_has_them() -> None:
    if not yaml.__with_libyaml__:
        pytest.skip("PyYAML without libyaml here: the fallback is what runs (test below)")
    assert issubclass(yamlio.StrictLoader, yaml.CSafeLoader)
    assert yamlio.BaseDumper is yaml.CSafeDumper


def test_corpus_loads_alike_on_both_parsers() -> None:
    assert len(CORPUS) > 20
    for path in CORPUS:
        text = path.read_text(encoding="utf-8")
        assert yamlio.load_documents(text, str(path)) == load_python(text, str(path)), path


@pytest.mark.parametrize(
    ("text", "phrase", "line"),
    [
        ("a: 1\nb: 2\na: 3\n", "duplicate key 'a' (first at line 1, again at line 3)", 3),
        ("spec:\n  x: 1\n  x: 2\n", "duplicate key 'x'", 3),
        ("a: [1\n", "invalid YAML", 1),
        ("a: *missing\n", "undefined alias", 1),
    ],
)
def test_errors_name_the_file_line_and_cause_on_both_parsers(text: str, phrase: str, line: int) -> None:
    for load in (yamlio.load_documents, load_python):
        with pytest.raises(SpecError) as err:
            load(text, "dir/lws.yaml")
        message = str(err.value)
        assert phrase in message
        assert '"dir/lws.yaml"' in message and f"line {line}" in message
        assert "<unicode string>" not in message


def test_alias_bomb_is_refused_on_both_parsers() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n" for p, c in zip("abcdef", "bcdefg")
    )
    for load in (yamlio.load_documents, load_python):
        with pytest.raises(SpecError, match="aliases expand to more than"):
            load(bomb, "bomb.yaml")


def _manifests(text: st.SearchStrategy[str]) -> st.SearchStrategy[dict]:
    """Mappings at the top, as renderers write (a bare scalar document ends differently in the two
    emitters, with ``...``; none is ever written)."""
    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(-(2**40), 2**40), st.floats(allow_nan=False, allow_infinity=False), text
    )
    docs = st.recursive(
        scalars,
        lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(text.filter(bool), inner, max_size=4)),
        max_leaves=20,
    )
    return st.dictionaries(text.filter(bool), docs, min_size=1, max_size=5)


#: manifest text: printable ASCII (names, images, commands, YAML-significant punctuation)
_printable = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40)
#: anything: non-ASCII, control and astral characters too (both emitters escape them in double
#: quotes, libyaml folds those long escaped strings at other columns: same values, other bytes)
_any_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)


@settings(max_examples=100)
@given(st.lists(_manifests(_printable), min_size=1, max_size=3))
def test_dump_is_byte_identical_to_pyyaml_safe_dump(docs: list) -> None:
    text = yamlio.dump_documents(docs)
    assert text == yaml.safe_dump_all(docs, sort_keys=False, explicit_start=True)
    assert yamlio.dump_document(docs[0]) == yaml.safe_dump(docs[0], sort_keys=False)
    assert yamlio.dump_document(docs[0], sort_keys=True) == yaml.safe_dump(docs[0], sort_keys=True)


@settings(max_examples=100)
@given(st.lists(_manifests(_any_text), min_size=1, max_size=3))
def test_dump_round_trips_through_both_parsers(docs: list) -> None:
    text = yamlio.dump_documents(docs)
    assert load_python(text) == docs
    assert yamlio.load_documents(text) == docs


def test_without_libyaml_the_module_falls_back_to_the_python_classes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(yaml, "CSafeLoader", raising=False)
    monkeypatch.delattr(yaml, "CSafeDumper", raising=False)
    fallback = importlib.reload(yamlio)
    try:
        assert fallback.BaseLoader is yaml.SafeLoader and fallback.BaseDumper is yaml.SafeDumper
        assert fallback.load_documents("a: 1\n---\nb: [2]\n") == [{"a": 1}, {"b": [2]}]
        with pytest.raises(SpecError, match="duplicate key 'a'"):
            fallback.load_documents("a: 1\na: 2\n", "f.yaml")
        assert fallback.dump_documents([{"b": 1, "a": 2}]) == "---\nb: 1\na: 2\n"
    finally:
        monkeypatch.undo()
        importlib.reload(yamlio)
