"""A self-made SVG timeline of a trace: one lane per group, coloured by state, plus availability.

No plotting library: plain SVG text, deterministic for a given trace.
"""
from __future__ import annotations

from html import escape
from typing import Sequence

from pulumi_lws.core.trace import TraceRow

COLOURS = {"U": "#2e9e44", "o": "#8fb3d9", "u": "#f0b429", "x": "#d9534f", "-": "#eeeeee"}
LEGEND = {"U": "updated, ready", "o": "old, ready", "u": "updated, not ready", "x": "old, not ready", "-": "absent"}


def _lanes(rows: Sequence[TraceRow]) -> list[str]:
    seen: dict[str, None] = {}
    for r in rows:
        for g in r.groups:
            seen.setdefault(g.id, None)
    return sorted(seen, key=lambda g: (0, int(g), "") if g.isdigit() else (1, 0, g))


def svg_timeline(rows: Sequence[TraceRow], end_time: float | None = None, title: str = "pulumi-lws simulate") -> str:
    """SVG text: lanes of group states over time and a step line of available groups."""
    if not rows:
        return '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="40"><text x="10" y="25">empty trace</text></svg>'
    lanes = _lanes(rows)
    t0, t1 = rows[0].time, max(end_time or rows[-1].time, rows[-1].time + 1)
    left, width, lane_h, top = 90, 720, 18, 40
    x = lambda t: left + (t - t0) / (t1 - t0) * width  # noqa: E731
    chart_h = lane_h * len(lanes)
    avail_top = top + chart_h + 30
    avail_h = 80
    ymax = max([max(r.available, r.live, r.replicas) for r in rows] + [1])
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 120}" height="{avail_top + avail_h + 60}" font-family="monospace" font-size="11">',
             f'<text x="{left}" y="20" font-size="14">{escape(title)}</text>']
    for li, gid in enumerate(lanes):
        y = top + li * lane_h
        parts.append(f'<text x="5" y="{y + 13}">{"R-" + gid if gid.isdigit() else "G-" + escape(gid[:6])}</text>')
        for ri, row in enumerate(rows):
            nxt = rows[ri + 1].time if ri + 1 < len(rows) else t1
            cell = next((g for g in row.groups if g.id == gid), None)
            state = cell.state if cell else "-"
            stroke = ' stroke="#000" stroke-dasharray="2,2"' if cell is not None and cell.surge else ""
            parts.append(f'<rect x="{x(row.time):.1f}" y="{y}" width="{max(x(nxt) - x(row.time), 0.5):.1f}" height="{lane_h - 3}" fill="{COLOURS.get(state, "#999")}"{stroke}><title>t={row.time:g} {escape(gid)}: {state} {escape(cell.detail if cell else "")}</title></rect>')
    base = avail_top + avail_h
    parts.append(f'<text x="5" y="{avail_top + 10}">groups</text>')
    for value in sorted({0, ymax}):
        ty = base - value / ymax * avail_h
        parts.append(f'<text x="{left - 8}" y="{ty + 4:.1f}" text-anchor="end">{value}</text>')
        parts.append(f'<line x1="{left}" y1="{ty:.1f}" x2="{left + width}" y2="{ty:.1f}" stroke="#ddd"/>')
    for attr, colour, dash in (("live", "#555", ' stroke-dasharray="4,3"'), ("available", "#2e9e44", "")):
        pts = []
        for ri, row in enumerate(rows):
            nxt = rows[ri + 1].time if ri + 1 < len(rows) else t1
            y = base - getattr(row, attr) / ymax * avail_h
            pts += [f"{x(row.time):.1f},{y:.1f}", f"{x(nxt):.1f},{y:.1f}"]
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2"{dash} points="{" ".join(pts)}"/>')
    parts.append(f'<text x="{left}" y="{base + 14}">t={t0:g}s</text><text x="{left + width}" y="{base + 14}" text-anchor="end">t={t1:g}s</text>')
    lx = left
    legend = [(COLOURS[state], f"{state} {label}") for state, label in LEGEND.items()]
    for colour, text in legend:
        parts.append(f'<rect x="{lx}" y="{base + 26}" width="12" height="12" fill="{colour}"/><text x="{lx + 16}" y="{base + 36}">{text}</text>')
        lx += 16 + 7 * len(text) + 14
    parts.append(f'<line x1="{lx}" y1="{base + 32}" x2="{lx + 14}" y2="{base + 32}" stroke="#2e9e44" stroke-width="2"/><text x="{lx + 18}" y="{base + 36}">available</text>')
    lx += 18 + 7 * len("available") + 14
    parts.append(f'<line x1="{lx}" y1="{base + 32}" x2="{lx + 14}" y2="{base + 32}" stroke="#555" stroke-width="2" stroke-dasharray="4,3"/><text x="{lx + 18}" y="{base + 36}">live</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
