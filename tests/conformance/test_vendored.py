"""The vendored test data stays identical to the steering repository's copies.

``tests/conformance/*.json`` (except ``lws-docs-examples.json``) are byte-identical copies of
``../shared/conformance``; ``lws-docs-examples.json`` is what ``seed_docs.extract_lws_examples``
extracts from the seeds' LWS docs page. A clone of this repository alone has no ``../shared``:
these checks skip there (every other test reads only the vendored copies), and run wherever
``../shared`` sits beside the checkout (CI), so an update there is noticed.
"""

from __future__ import annotations

import json

import pytest
from conftest import CONFORMANCE_DIR, SHARED_DIR
from support.seed_docs import DOCS_EXAMPLES, SEED_PAGE_GLOB, extract_lws_examples

SHARED_CONFORMANCE = SHARED_DIR / "conformance"
VENDORED = sorted(p.name for p in CONFORMANCE_DIR.glob("*.json") if p != DOCS_EXAMPLES)
needs_shared = pytest.mark.skipif(not SHARED_CONFORMANCE.is_dir(), reason="no ../shared beside this checkout")


def test_every_conformance_file_is_vendored() -> None:
    assert VENDORED == ["disaggregatedset-planner.json", "kthena-modelserving.json", "lws-ordinal-rollout.json"]
    for name in VENDORED:
        json.loads((CONFORMANCE_DIR / name).read_text())  # valid JSON, readable without ../shared


@needs_shared
def test_vendored_vectors_are_byte_identical_to_shared() -> None:
    shared = sorted(p.name for p in SHARED_CONFORMANCE.glob("*.json"))
    assert shared == VENDORED, "a conformance file was added or removed in ../shared: vendor it"
    for name in VENDORED:
        assert (CONFORMANCE_DIR / name).read_bytes() == (SHARED_CONFORMANCE / name).read_bytes(), (
            f"{name} differs from ../shared/conformance/{name}: copy it again (cp ../shared/conformance/{name} tests/conformance/)"
        )


@needs_shared
def test_vendored_docs_examples_match_the_seed_page() -> None:
    pages = sorted((SHARED_DIR / "reference" / "seeds").glob(SEED_PAGE_GLOB))
    assert pages, "the seeds' LWS docs page is missing from ../shared/reference/seeds"
    vendored = json.loads(DOCS_EXAMPLES.read_text())
    assert vendored["source"].endswith(pages[0].name)
    assert extract_lws_examples(pages[0].read_text()) == vendored["examples"]
