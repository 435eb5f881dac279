"""The legend of the SVG timeline (:mod:`pulumi_lws.sim.driver.plot`): every state, line and band the
plot draws, in the tables' words, laid out so entries never touch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape

from pulumi_lws.core.contract import glyphs as G
from pulumi_lws.sim.driver.plot_layout import (
    ABSENT,
    BLOCKED,
    CEILING,
    COLOURS,
    FLOOR,
    LANE_LIVE,
    LEFT,
    MARKER,
    NEW_FILL,
    OLD_FILL,
    RIGHT,
    UNARMED,
    WAITING,
    WIDTH,
    Band,
    text_width,
)


def swatch_rect(fill: str, opacity: str = "") -> Swatch:
    return lambda x, y: f'<rect x="{x:.1f}" y="{y:.1f}" width="12" height="12" fill="{fill}"{opacity}/>'


def swatch_line(colour: str, dash: str = "", width: float = 2) -> Swatch:
    dashed = f' stroke-dasharray="{dash}"' if dash else ""
    return lambda x, y: (
        f'<line x1="{x:.1f}" y1="{y + 6:.1f}" x2="{x + 14:.1f}" y2="{y + 6:.1f}" stroke="{colour}" '
        f'stroke-width="{width}"{dashed}/>'
    )


Swatch = Callable[[float, float], str]


def legend(
    y: float, *, roles: bool, states: set[str], runs: Sequence[Band], checked: bool, unarmed: bool, absent: bool
) -> list[list[str]]:
    """Legend lines (each a list of SVG parts): every state, line and band the plot draws, in the
    tables' words (:data:`pulumi_lws.core.contract.glyphs.WORDS`), laid out so entries never touch."""
    boxes: list[tuple[Swatch, str]] = []
    if roles:
        boxes += [
            (swatch_rect(OLD_FILL), "old revisions, ready"),
            (swatch_rect(NEW_FILL), "target revision, ready"),
            (swatch_line(LANE_LIVE, "4,3"), "role live (old + new)"),
        ]
    else:
        boxes += [(swatch_rect(COLOURS[s]), G.WORDS[s]) for s in G.ORDER if s in states]
        if absent:
            boxes.append((swatch_rect(ABSENT), "absent"))
    lines: list[tuple[Swatch, str]] = [(swatch_line("#2e9e44"), "available"), (swatch_line("#555", "4,3"), "live")]
    if checked:
        lines.append((swatch_line(FLOOR, "6,4"), "floor (checked)"))
    if unarmed:
        lines.append((swatch_line(UNARMED, "1,3", 1), "floor (not checked until fully available)"))
    lines += [(swatch_line(CEILING, "6,4"), "ceiling"), (swatch_line(MARKER, "1,2", 1), "stage start")]
    lines.append(
        (
            lambda x, y: (
                f'<line x1="{x + 6:.1f}" y1="{y + 7:.1f}" x2="{x + 6:.1f}" y2="{y + 12:.1f}" '
                f'stroke="{MARKER}" stroke-width="1.5"/>'
            ),
            "reconcile changed objects",
        )
    )
    if any(b.real for b in runs):
        lines.append((swatch_rect(BLOCKED, ' fill-opacity="0.25"'), "blocked"))
    if any(not b.real for b in runs):
        lines.append((swatch_rect(WAITING, ' fill-opacity="0.2"'), "waiting (healthy pacing)"))
    out: list[list[str]] = []
    for entries in (boxes, lines):
        line: list[str] = []
        lx: float = LEFT
        for swatch, text in entries:
            w = 18 + text_width(text)
            if line and lx + w > LEFT + WIDTH + RIGHT - 10:
                out.append(line)
                line, lx, y = [], LEFT, y + 18
            line.append(
                f'<g class="legend-entry">{swatch(lx, y)}<text x="{lx + 18:.1f}" y="{y + 10:.1f}">'
                f"{escape(text)}</text></g>"
            )
            lx += w + 16
        if line:
            out.append(line)
            y += 18
    return out
