"""A self-made SVG timeline of a trace: one lane per group, coloured by state, plus availability.

No plotting library: plain SVG text, deterministic for a given trace. From top to bottom:

* the title, then (when the run ended blocked) the blocker's code and message in red;
* group lanes (``R-<ordinal>`` / ``G-<key>``), one rectangle per state interval, surge dashed;
  or, for multi-role rows (rows with ``lanes``: DisaggregatedSet), one **role panel** per lane
  instead: the role's old and new *ready* groups as stacked areas (old below, new on top, so the
  top edge is the role's ready total), its old and new *live* groups as a dashed line (the gap
  above the areas = groups not ready), and its own floor (target - maxUnavailable) and ceiling
  (target + maxSurge) from ``lane_budgets`` (:func:`lane_budgets`: ``Workload.budgets(spec)``
  per role, divided per slice for ``<slice>/<role>`` lanes), each panel on its own scale;
* a chart of live and available groups, with the availability **floor** (replicas -
  maxUnavailable) and **ceiling** (replicas + maxSurge) as dashed lines labelled on the right;
* time ticks along the axis and a legend.

Overlays: a vertical **stage marker** at every traced reconcile that changed something (from a
:class:`~pulumi_lws.sim.timeline.Timeline`), labelled ``S<n>`` with the stage-table number in
effect then; a translucent red **blocked band** over every interval whose rows carry a blocker,
labelled with its code. Elements carry ``class`` names (``stage-marker``, ``floor``,
``ceiling``, ``blocked``, ``time-tick``, ``grid``; per role ``role-lane`` groups holding
``old-ready``/``new-ready`` areas, a ``lane-live`` line, ``lane-floor``/``lane-ceiling`` lines and
``lane-grid`` lines) and ``data-*`` values so tests can find them.
Invariant: every y on the chart is ``base - value / ymax * height`` with ``ymax`` at least the
largest of live, available, replicas and ceiling, so no line leaves the chart.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from pulumi_lws.core.stage import lane_title
from pulumi_lws.core.trace import Lane, TraceRow
from pulumi_lws.core.workload import Budgets
from pulumi_lws.sim.timeline import Budget, Timeline, stage_numbers

COLOURS = {"U": "#2e9e44", "o": "#8fb3d9", "u": "#f0b429", "x": "#d9534f", "-": "#eeeeee"}
LEGEND = {"U": "updated, ready", "o": "old, ready", "u": "updated, not ready", "x": "old, not ready", "-": "absent"}
FLOOR, CEILING, BLOCKED, MARKER = "#c0392b", "#7d3c98", "#d9534f", "#333333"
LEFT, WIDTH, LANE_H, CHART_H, RIGHT = 90, 720, 18, 100, 320
WRAP = 120  # characters per line of the blocker text
PANEL_H, PANEL_GAP = 64, 22  # one role panel (multi-role rows) and the space above it (its title)
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


def _lanes(rows: Sequence[TraceRow]) -> list[str]:
    seen: dict[str, None] = {}
    for r in rows:
        for g in r.groups:
            seen.setdefault(g.id, None)
    return sorted(seen, key=lambda g: (0, int(g), "") if g.isdigit() else (1, 0, g))


def _wrap(text: str, width: int = WRAP) -> list[str]:
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
    """``(start, end, label)`` of each run of rows carrying the same blocker."""
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


def lane_names(rows: Sequence[TraceRow]) -> list[str]:
    """The role lanes of multi-role rows, in first-seen order (empty for single-role traces)."""
    return list(dict.fromkeys(lane.name for r in rows for lane in r.lanes))


def lane_budgets(workload: Any, spec: Any) -> dict[str, Budgets]:
    """Per lane name the budgets its panel draws: ``workload.budgets(spec)[role]`` for a ``<role>``
    lane (every slice together, as the trace view sums them); with several slices (one lane each,
    titled by :func:`~pulumi_lws.core.stage.lane_title`) the role's budgets per slice."""
    budgets = dict(workload.budgets(spec))
    slices = max(1, int(getattr(spec, "slices", 1) or 1))
    out: dict[str, Budgets] = {}
    for role, b in budgets.items():
        if not role:
            continue
        if slices == 1:
            out[role] = b
        else:
            for s in range(slices):
                out[lane_title(s, role)] = Budgets(b.replicas // slices, b.max_surge // slices, b.max_unavailable // slices)
    return out


def svg_timeline(rows: Sequence[TraceRow], end_time: float | None = None, title: str = "pulumi-lws simulate", *,
                 timeline: Timeline | None = None, stages: Sequence[TraceRow] = (),
                 lane_budgets: Mapping[str, Budgets] | None = None) -> str:
    """SVG text (module doc). ``rows``: every recorded row; ``stages``: the stage table (for the
    markers' numbers); ``timeline``: reconcile changes and budgets (no markers/budget lines without);
    ``lane_budgets``: per role lane its budgets (:func:`lane_budgets`; no lane floor/ceiling without)."""
    if not rows:
        return '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="40"><text x="10" y="25">empty trace</text></svg>\n'
    timeline = timeline or Timeline()
    t1 = max(end_time or rows[-1].time, rows[-1].time + 1)
    blocks = blocked_intervals(rows, t1)
    final = blocks[-1][2] if blocks and rows[-1].blocker else None
    head = ([title] if not final else [title] + _wrap(f"blocked: {final}"))
    roles = lane_names(rows)
    lanes = [] if roles else _lanes(rows)
    lanes_top = 30 + 14 * len(head) + 16  # room for the stage labels
    lanes_bottom = lanes_top + (len(roles) * (PANEL_H + PANEL_GAP) if roles else LANE_H * len(lanes))
    ymax = max([max(r.available, r.live, r.replicas) for r in rows] + [b.ceiling for b in timeline.budgets] + [1])
    f = Frame(rows[0].time, t1, lanes_top, lanes_bottom, lanes_bottom + 30 + CHART_H, ymax)
    parts = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{LEFT + WIDTH + RIGHT}" height="{f.base + (98 if roles else 80)}" '
              'font-family="monospace" font-size="11">'), '<rect width="100%" height="100%" fill="#fff"/>']
    parts += _header(head, final is not None)
    parts += _role_panels(rows, roles, f, lane_budgets or {}) if roles else _lane_rects(rows, lanes, f)
    parts += _chart(rows, timeline.budgets, f)
    parts += [_band(start, end, label, f) for start, end, label in blocks]
    parts += _markers(timeline.changes, stages, f)
    parts += _time_axis(f)
    parts += _legend(f.base + 44, roles=bool(roles))
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _header(lines: list[str], blocked: bool) -> list[str]:
    out = [f'<text x="{LEFT}" y="20" font-size="14">{escape(lines[0])}</text>']
    for i, line in enumerate(lines[1:]):
        out.append(f'<text class="blocked-text" x="{LEFT}" y="{36 + 14 * i}" fill="{BLOCKED}" font-weight="bold">'
                   f'{escape(line)}</text>')
    return out


def _lane_rects(rows: Sequence[TraceRow], lanes: list[str], f: Frame) -> list[str]:
    parts = []
    for li, gid in enumerate(lanes):
        y = f.lanes_top + li * LANE_H
        parts.append(f'<text x="5" y="{y + 13}">{"R-" + gid if gid.isdigit() else "G-" + escape(gid[:6])}</text>')
        for ri, row in enumerate(rows):
            nxt = rows[ri + 1].time if ri + 1 < len(rows) else f.t1
            cell = next((g for g in row.groups if g.id == gid), None)
            state = cell.state if cell else "-"
            stroke = ' stroke="#000" stroke-dasharray="2,2"' if cell is not None and cell.surge else ""
            parts.append(f'<rect x="{f.x(row.time):.1f}" y="{y}" width="{max(f.x(nxt) - f.x(row.time), 0.5):.1f}" '
                         f'height="{LANE_H - 3}" fill="{COLOURS.get(state, "#999")}"{stroke}><title>t={row.time:g} '
                         f'{escape(gid)}: {state} {escape(cell.detail if cell else "")}</title></rect>')
    return parts


def _steps(rows: Sequence[TraceRow], t1: float, values: Sequence[int], x, y) -> list[tuple[float, float]]:
    """The step function ``values[i]`` (one per row) as points: flat from each row's time to the next row's."""
    pts: list[tuple[float, float]] = []
    for ri, (row, value) in enumerate(zip(rows, values)):
        nxt = rows[ri + 1].time if ri + 1 < len(rows) else t1
        pts += [(x(row.time), y(value)), (x(nxt), y(value))]
    return pts


def _points(pts: Sequence[tuple[float, float]]) -> str:
    return " ".join(f"{px:.1f},{py:.1f}" for px, py in pts)


def _role_panels(rows: Sequence[TraceRow], roles: list[str], f: Frame, budgets: Mapping[str, Budgets]) -> list[str]:
    """One panel per role lane (module doc): stacked old/new ready areas, the live line, floor and
    ceiling, on the panel's own scale (``ymax`` = the largest of live, ready and ceiling)."""
    parts: list[str] = []
    empty = Lane("", 0, 0)

    def lane_of(row: TraceRow, name: str) -> Lane:
        return next((lane for lane in row.lanes if lane.name == name), empty)

    for li, name in enumerate(roles):
        top = f.lanes_top + li * (PANEL_H + PANEL_GAP) + PANEL_GAP
        base = top + PANEL_H
        b = budgets.get(name)
        floor = None if b is None else max(0, b.replicas - b.max_unavailable)
        ceiling = None if b is None else b.replicas + b.max_surge
        series = [lane_of(r, name) for r in rows]
        live_n = [lane.old + lane.new for lane in series]
        ready_n = [lane.old_ready + lane.new_ready for lane in series]
        ymax = max(live_n + ready_n + [ceiling or 0, 1])

        def y(v: float, base: float = base, ymax: int = ymax) -> float:
            return base - v / ymax * PANEL_H

        last = series[-1]
        parts.append(f'<g class="role-lane" data-role="{escape(name)}" data-ymax="{ymax}">')
        parts.append(f'<text class="lane-title" x="{LEFT}" y="{top - 6}" font-weight="bold">{escape(name)}</text>'
                     f'<text x="{LEFT + 8 + 7 * len(name)}" y="{top - 6}" fill="#555">old|new at the end {last.old}|{last.new}'
                     f'{"" if b is None else f" (target {b.replicas}, maxSurge {b.max_surge}, maxUnavailable {b.max_unavailable})"}'
                     '</text>')
        parts.append(f'<rect x="{LEFT}" y="{top}" width="{WIDTH}" height="{PANEL_H}" fill="#fafafa" stroke="#ccc"/>')
        for value in sorted({0, ymax}):
            parts.append(f'<text x="{LEFT - 8}" y="{y(value) + 4:.1f}" text-anchor="end">{value}</text>'
                         f'<line class="lane-grid" data-value="{value}" x1="{LEFT}" y1="{y(value):.1f}" '
                         f'x2="{LEFT + WIDTH}" y2="{y(value):.1f}" stroke="#ddd"/>')
        old = _steps(rows, f.t1, [lane.old_ready for lane in series], f.x, y)
        top_edge = _steps(rows, f.t1, ready_n, f.x, y)
        zero = [(px, y(0)) for px, _ in old]
        parts.append(f'<polygon class="old-ready" fill="{OLD_FILL}" stroke="none" '
                     f'points="{_points(old + zero[::-1])}"><title>{escape(name)}: old revisions, ready</title></polygon>')
        parts.append(f'<polygon class="new-ready" fill="{NEW_FILL}" stroke="none" '
                     f'points="{_points(top_edge + old[::-1])}"><title>{escape(name)}: target revision, ready</title></polygon>')
        live = _steps(rows, f.t1, live_n, f.x, y)
        parts.append(f'<polyline class="lane-live" fill="none" stroke="{LANE_LIVE}" stroke-width="1.5" '
                     f'stroke-dasharray="4,3" points="{_points(live)}"/>')
        for cls, value, colour, text in (("lane-floor", floor, FLOOR, f"floor {floor}"),
                                          ("lane-ceiling", ceiling, CEILING, f"ceiling {ceiling}")):
            if value is None:
                continue
            parts.append(f'<line class="{cls}" data-value="{value}" x1="{LEFT}" y1="{y(value):.1f}" x2="{LEFT + WIDTH}" '
                         f'y2="{y(value):.1f}" stroke="{colour}" stroke-width="1.5" stroke-dasharray="6,4"/>')
            dy = 11 if cls == "lane-floor" and floor != ceiling else (-3 if cls == "lane-ceiling" else 11)
            parts.append(f'<text class="{cls}-label" x="{LEFT + WIDTH + 6}" y="{y(value) + dy:.1f}" fill="{colour}">'
                         f'{escape(text)}</text>')
        for ri, (row, lane) in enumerate(zip(rows, series)):  # hover: the counts of each interval
            nxt = rows[ri + 1].time if ri + 1 < len(rows) else f.t1
            parts.append(f'<rect x="{f.x(row.time):.1f}" y="{top}" width="{max(f.x(nxt) - f.x(row.time), 0.5):.1f}" '
                         f'height="{PANEL_H}" fill="none" pointer-events="all"><title>t={row.time:g} {escape(name)}: '
                         f'old|new {escape(lane.text)}</title></rect>')
        parts.append("</g>")
    return parts


def _chart(rows: Sequence[TraceRow], budgets: Sequence[Budget], f: Frame) -> list[str]:
    parts = [f'<text x="5" y="{f.y(f.ymax) + 4:.1f}">groups</text>']
    for value in sorted({0, f.ymax} | (set(range(f.ymax)) if f.ymax <= 8 else set())):
        parts.append(f'<text x="{LEFT - 8}" y="{f.y(value) + 4:.1f}" text-anchor="end">{value}</text>')
        parts.append(f'<line class="grid" data-value="{value}" x1="{LEFT}" y1="{f.y(value):.1f}" x2="{LEFT + WIDTH}" '
                     f'y2="{f.y(value):.1f}" stroke="#ddd"/>')
    for attr, colour, dash in (("live", "#555", ' stroke-dasharray="4,3"'), ("available", "#2e9e44", "")):
        pts = []
        for ri, row in enumerate(rows):
            nxt = rows[ri + 1].time if ri + 1 < len(rows) else f.t1
            y = f.y(getattr(row, attr))
            pts += [f"{f.x(row.time):.1f},{y:.1f}", f"{f.x(nxt):.1f},{y:.1f}"]
        parts.append(f'<polyline class="{attr}" fill="none" stroke="{colour}" stroke-width="2"{dash} points="{" ".join(pts)}"/>')
    for i, b in enumerate(budgets):
        end = budgets[i + 1].start if i + 1 < len(budgets) else f.t1
        last = i + 1 == len(budgets)
        for cls, value, colour, text in (
                ("floor", b.floor, FLOOR, f"floor {b.floor} = replicas {b.replicas} - maxUnavailable {b.max_unavailable}"),
                ("ceiling", b.ceiling, CEILING, f"ceiling {b.ceiling} = replicas {b.replicas} + maxSurge {b.max_surge}")):
            y = f.y(value)
            parts.append(f'<line class="{cls}" data-value="{value}" x1="{f.x(b.start):.1f}" y1="{y:.1f}" '
                         f'x2="{f.x(end):.1f}" y2="{y:.1f}" stroke="{colour}" stroke-width="1.5" stroke-dasharray="6,4"/>')
            if last:  # labels right of the chart: the ceiling's above its line, the floor's below
                parts.append(f'<text class="{cls}-label" x="{LEFT + WIDTH + 6}" y="{y + (11 if cls == "floor" else -3):.1f}" '
                             f'fill="{colour}">{escape(text)}</text>')
    return parts


def _band(start: float, end: float, label: str, f: Frame) -> str:
    x0, x1 = f.x(start), f.x(end)
    code = label.split(":", 1)[0]
    return (f'<g class="blocked" data-blocker="{escape(label)}"><rect x="{x0:.1f}" y="{f.lanes_top - 2}" '
            f'width="{max(x1 - x0, 1):.1f}" height="{f.base - f.lanes_top + 2:.1f}" fill="{BLOCKED}" fill-opacity="0.10" '
            f'stroke="{BLOCKED}" stroke-width="1"><title>blocked: {escape(label)}</title></rect>'
            f'<text x="{x0 + 4:.1f}" y="{f.lanes_bottom + 16}" fill="{BLOCKED}" font-weight="bold">blocked: '
            f'{escape(code)}</text></g>')


def _markers(changes: Sequence[float], stages: Sequence[TraceRow], f: Frame) -> list[str]:
    parts, last_x, lift = [], -100.0, 0
    numbers = stage_numbers(changes, stages) if stages else list(range(1, len(changes) + 1))
    for t, n in zip(changes, numbers):
        x = f.x(t)
        lift = lift + 1 if x - last_x < 22 else 0  # stagger labels of markers close together
        last_x = x
        parts.append(f'<g class="stage-marker" data-time="{t:g}" data-stage="{n}"><line x1="{x:.1f}" y1="{f.lanes_top - 12}" '
                     f'x2="{x:.1f}" y2="{f.base}" stroke="{MARKER}" stroke-width="1" stroke-dasharray="1,2"/>'
                     f'<text x="{x + 2:.1f}" y="{f.lanes_top - 4 - 10 * (lift % 2)}" fill="{MARKER}">S{n}</text>'
                     f'<title>t={t:g}s: reconcile changed objects (stage {n})</title></g>')
    return parts


def _time_axis(f: Frame) -> list[str]:
    step = nice_step(f.t1 - f.t0)
    parts = [f'<line x1="{LEFT}" y1="{f.base}" x2="{LEFT + WIDTH}" y2="{f.base}" stroke="#000"/>']
    k = math.ceil(f.t0 / step)
    while k * step <= f.t1 + 1e-9:
        t = k * step
        x = f.x(t)
        parts.append(f'<g class="time-tick" data-time="{t:g}"><line x1="{x:.1f}" y1="{f.base}" x2="{x:.1f}" '
                     f'y2="{f.base + 4}" stroke="#000"/><text x="{x:.1f}" y="{f.base + 15}" text-anchor="middle">'
                     f'{t:g}s</text></g>')
        k += 1
    parts.append(f'<text x="{LEFT + WIDTH + 6}" y="{f.base + 15}">time</text>')
    return parts


def _legend(y: float, *, roles: bool = False) -> list[str]:
    parts, lx = [], LEFT
    items = ({"old": ("old revisions, ready", OLD_FILL), "new": ("target revision, ready", NEW_FILL)}.items() if roles
             else ((state, (label, COLOURS[state])) for state, label in LEGEND.items()))
    for state, (label, fill) in items:
        text = label if roles else f"{state} {label}"
        parts.append(f'<rect x="{lx}" y="{y}" width="12" height="12" fill="{fill}"/>'
                     f'<text x="{lx + 16}" y="{y + 10}">{text}</text>')
        lx += 16 + 7 * len(text) + 14
    if roles:
        parts.append(f'<line x1="{lx}" y1="{y + 6}" x2="{lx + 14}" y2="{y + 6}" stroke="{LANE_LIVE}" stroke-width="2" '
                     f'stroke-dasharray="4,3"/><text x="{lx + 18}" y="{y + 10}">role live (old + new)</text>')
    lx, y = LEFT, y + 18
    for text, colour, dash in (("available", "#2e9e44", ""), ("live", "#555", "4,3"), ("floor", FLOOR, "6,4"),
                               ("ceiling", CEILING, "6,4"), ("stage marker", MARKER, "1,2")):
        dashed = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(f'<line x1="{lx}" y1="{y + 6}" x2="{lx + 14}" y2="{y + 6}" stroke="{colour}" stroke-width="2"{dashed}/>'
                     f'<text x="{lx + 18}" y="{y + 10}">{text}</text>')
        lx += 18 + 7 * len(text) + 14
    parts.append(f'<rect x="{lx}" y="{y}" width="12" height="12" fill="{BLOCKED}" fill-opacity="0.25"/>'
                 f'<text x="{lx + 16}" y="{y + 10}">blocked</text>')
    return parts
