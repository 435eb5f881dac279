"""The SVG timeline's geometry and palette (:mod:`pulumi_lws.sim.driver.plot`): colours, sizes, the
time/value frame, monospace text widths, label levels, tick steps and the blocker bands.

Pure functions of their arguments; nothing here writes SVG.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from pulumi_lws.core.contract import glyphs as G
from pulumi_lws.core.contract.stage import is_waiting
from pulumi_lws.core.contract.trace import TraceRow

#: one colour per drawn state (:mod:`pulumi_lws.core.contract.glyphs`); none of them red: red is a blocker's
COLOURS = {
    G.UPDATED_READY: "#2e9e44",
    G.UPDATED_NOT_READY: "#f0b429",
    G.OLD_READY: "#8fb3d9",
    G.OLD_NOT_READY: "#b9a7d9",
    G.GATED: "#c8c8c8",
    G.TERMINATING: "#707070",
}
ABSENT = "#eeeeee"
FLOOR, CEILING, BLOCKED, MARKER = "#c0392b", "#7d3c98", "#d9534f", "#333333"
WAITING, UNARMED = "#8a8a8a", "#9e9e9e"
FONT = 11  # px; monospace: every character advances CHAR_W * size
CHAR_W = 0.6
LEVEL_H = 14  # px between stacked labels (the font's ascent + descent is about 1.17 x its size)
LEFT, WIDTH, LANE_H, CHART_H, RIGHT = 90, 720, 18, 100, 320
WRAP = 120  # characters per line of the blocker text
PANEL_H, PANEL_GAP = 64, 26  # one role panel (multi-role rows) and the space above it (its title)
OLD_FILL, NEW_FILL, LANE_LIVE = "#8fb3d9", "#7cc48a", "#333333"


@dataclass(frozen=True)
class Frame:
    """The chart's geometry: time range -> x, group count -> y (module doc invariant)."""

    t0: float
    t1: float
    lanes_top: float
    lanes_bottom: float
    base: float
    ymax: int

    def x(self, t: float) -> float:
        return LEFT + (t - self.t0) / (self.t1 - self.t0) * WIDTH

    def y(self, value: float) -> float:
        return self.base - value / self.ymax * CHART_H


def text_width(text: str, size: float = FONT) -> float:
    """The advance of ``text`` in a monospace font of ``size`` px (layout and the overlap test)."""
    return len(text) * CHAR_W * size


def label_levels(xs: Sequence[float], widths: Sequence[float], gap: float = 4) -> list[int]:
    """A level (0, 1, ...) per label at ``xs`` so that labels on one level never touch: each goes
    to the lowest level whose last label ends ``gap`` before it starts."""
    ends: list[float] = []
    levels = []
    for x, w in zip(xs, widths):
        level = next((i for i, end in enumerate(ends) if end + gap <= x), len(ends))
        if level == len(ends):
            ends.append(x + w)
        else:
            ends[level] = x + w
        levels.append(level)
    return levels


def wrap(text: str, width: int = WRAP) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return lines + ([line] if line else [])


def nice_step(span: float, target: int = 10) -> float:
    """A 1/2/5 x 10^k step giving about ``target`` ticks over ``span``."""
    raw = span / max(target, 1)
    mag = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    return next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)


def blocked_intervals(rows: Sequence[TraceRow], t1: float) -> list[tuple[float, float, str]]:
    """``(start, end, label)`` of each run of rows carrying the same blocker (``code: message``)."""
    out: list[tuple[float, float, str]] = []
    for i, row in enumerate(rows):
        end = rows[i + 1].time if i + 1 < len(rows) else t1
        label = f"{row.blocker_code}: {row.blocker}" if row.blocker_code else (row.blocker or "")
        if not row.blocker:
            continue
        if out and out[-1][2] == label and out[-1][1] >= row.time:
            out[-1] = (out[-1][0], end, label)
        else:
            out.append((row.time, end, label))
    return out


@dataclass(frozen=True)
class Band:
    """A run of rows with a blocker of one code: ``real`` (red) or ordinary waiting (grey)."""

    start: float
    end: float
    code: str
    messages: tuple[str, ...]
    real: bool

    @property
    def label(self) -> str:
        return f"{'blocked' if self.real else 'waiting'}: {self.code}"


def bands(rows: Sequence[TraceRow], t1: float, deadline_passed: float | None = None) -> list[Band]:
    """The blocker bands of a run: contiguous rows with the same code (and the same verdict) merged.
    A band is real for a failure code, or for any code from the time the progress deadline passed
    (``deadline_passed``); waiting codes (:data:`~pulumi_lws.core.contract.stage.WAITING_CODES`) otherwise."""
    out: list[Band] = []
    for i, row in enumerate(rows):
        if not row.blocker:
            continue
        end = rows[i + 1].time if i + 1 < len(rows) else t1
        code = row.blocker_code or row.blocker
        real = not is_waiting(row.blocker_code) or (deadline_passed is not None and row.time >= deadline_passed)
        last = out[-1] if out else None
        if last is not None and (last.code, last.real) == (code, real) and last.end >= row.time:
            messages = last.messages + ((row.blocker,) if row.blocker not in last.messages else ())
            out[-1] = Band(last.start, end, code, messages, real)
        else:
            out.append(Band(row.time, end, code, (row.blocker,), real))
    return out


def gaps(start: float, end: float, covered: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The parts of ``[start, end)`` outside the sorted, disjoint ``covered`` intervals."""
    out, t = [], start
    for s, e in covered:
        if s > t:
            out.append((t, s))
        t = max(t, e)
    return out + ([(t, end)] if t < end else [])
