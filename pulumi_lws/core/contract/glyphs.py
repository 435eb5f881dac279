"""The one set of marks every stage table and timeline uses (``plan``, ``simulate``, the
component's preview log, markdown, the SVG legend), with its ASCII fallback and legend line.

A group's mark is a fact of its state only: the same state draws the same mark in every API and
every output. States are drawn against the row's own target revision (``TraceRow.revision``):
before a rollout every ready group is "updated, ready", as in the upstream tables' stage 1.

Invariants: every state has a distinct mark in both sets (:data:`UNICODE`, :data:`ASCII`); no
mark reads as a failure for a healthy state (old-and-ready is a plain circle, not a cross); the
legend names exactly the marks drawn, in :data:`ORDER`.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TextIO

#: The drawn states: the four readiness states of ``core.stage`` plus the two details a table
#: shows instead of them (a gated group has not started; a terminating one is going away).
UPDATED_READY = "updated-ready"
UPDATED_NOT_READY = "updated-not-ready"
OLD_READY = "old-ready"
OLD_NOT_READY = "old-not-ready"
GATED = "gated"
TERMINATING = "terminating"

ORDER = (UPDATED_READY, UPDATED_NOT_READY, OLD_READY, OLD_NOT_READY, GATED, TERMINATING)

#: The words of each state, shared by the table legend and the SVG legend.
WORDS: Mapping[str, str] = {
    UPDATED_READY: "updated, ready",
    UPDATED_NOT_READY: "updated, not ready",
    OLD_READY: "old revision, ready",
    OLD_NOT_READY: "old revision, not ready",
    GATED: "gated (waits to start)",
    TERMINATING: "terminating",
}

#: ``GroupCell.state`` (the trace schema's one-letter code) -> drawn state.
BY_CODE: Mapping[str, str] = {"U": UPDATED_READY, "u": UPDATED_NOT_READY, "o": OLD_READY, "x": OLD_NOT_READY}


@dataclass(frozen=True)
class GlyphSet:
    """One mark per drawn state. ``wide``: the marks take two terminal columns (emoji)."""

    name: str
    marks: Mapping[str, str]
    wide: bool

    def mark(self, state: str) -> str:
        return self.marks[state]

    def legend(self, states: Iterable[str]) -> str:
        """``legend: ✅ updated, ready; ⏳ updated, not ready; ...`` for ``states`` (in :data:`ORDER`)."""
        drawn = set(states)
        return "legend: " + "; ".join(f"{self.marks[s]} {WORDS[s]}" for s in ORDER if s in drawn)


UNICODE = GlyphSet(
    "unicode",
    {
        UPDATED_READY: "✅",
        UPDATED_NOT_READY: "⏳",
        OLD_READY: "🔵",
        OLD_NOT_READY: "⚪",
        GATED: "🔒",
        TERMINATING: "🗑️",
    },
    wide=True,
)

#: The trace schema's letters where there is one (``U u o x``), so an ASCII table reads like the JSON.
ASCII = GlyphSet(
    "ascii",
    {
        UPDATED_READY: "U",
        UPDATED_NOT_READY: "u",
        OLD_READY: "o",
        OLD_NOT_READY: "x",
        GATED: "g",
        TERMINATING: "t",
    },
    wide=False,
)


def drawn_state(state: str, detail: str = "") -> str | None:
    """The drawn state of a group cell (``GroupCell.state`` / ``.detail``); None when absent."""
    if detail == GATED:
        return GATED
    if detail == TERMINATING:
        return TERMINATING
    return BY_CODE.get(state)


def can_encode(stream: TextIO | None = None) -> bool:
    """Whether ``stream`` (default stdout) can print every Unicode mark: False for an ASCII or
    Latin-1 terminal, where the CLI falls back to :data:`ASCII`."""
    stream = sys.stdout if stream is None else stream
    encoding = getattr(stream, "encoding", None) or "ascii"
    try:
        "".join(UNICODE.marks.values()).encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


_preferred: GlyphSet = UNICODE


def preferred() -> GlyphSet:
    """The set a component draws its logged stage table with: :data:`UNICODE` unless a CLI that
    runs the program in-process asked otherwise (:func:`prefer`: ``pulumi-lws preview --ascii``,
    or a terminal that cannot print the emoji)."""
    return _preferred


@contextlib.contextmanager
def prefer(glyphs: GlyphSet) -> Iterator[None]:
    """Draw with ``glyphs`` inside the block (restored after, also on error)."""
    global _preferred
    before, _preferred = _preferred, glyphs
    try:
        yield
    finally:
        _preferred = before
