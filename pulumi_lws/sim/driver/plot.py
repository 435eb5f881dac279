"""A self-made SVG timeline of a trace: one lane per group, coloured by state, plus availability.

No plotting library: plain SVG text, deterministic for a given trace. From top to bottom:

* the title, then (when the run ended blocked) the blocker's code and message in red;
* stage labels ``S<n>``: one per stage-table row, at the time the row starts (staggered onto more
  levels where they would touch), over a dotted line;
* group lanes (``R-<ordinal>`` / ``G-<key>``) in the stage table's column order
  (:func:`pulumi_lws.core.contract.trace.group_columns`), one rectangle per state interval coloured by the
  drawn state of :mod:`pulumi_lws.core.contract.glyphs` (gated and terminating included), surge dashed;
  or, for multi-role rows (rows with ``lanes``: DisaggregatedSet), one **role panel** per lane
  instead: the role's old and new *ready* groups as stacked areas (old below, new on top, so the
  top edge is the role's ready total), its old and new *live* groups as a dashed line (the gap
  above the areas = groups not ready), and its own floor (target - maxUnavailable) and ceiling
  (target + maxSurge) from ``lane_budgets`` (:func:`lane_budgets`: ``Workload.budgets(spec)``
  per role, divided per slice for ``<slice>/<role>`` lanes), each panel on its own scale;
* a chart of live and available groups, with the availability **floor** (replicas -
  maxUnavailable) and **ceiling** (replicas + maxSurge) of the budget in force at each moment as
  dashed lines labelled on the right; the floor is red only where the simulator checks it (armed:
  the set was fully available at the current replica count), a grey dotted line elsewhere;
* time ticks along the axis and a legend naming every state, line and band drawn, in the words
  of the tables' legend.

Overlays: a short tick on the time axis at every traced reconcile that changed something (from a
:class:`~pulumi_lws.sim.driver.timeline.Timeline`); a translucent **band** over every interval whose rows
carry a blocker: red and labelled ``blocked: <code>`` only for a real blocker (a failure code, or
any code once the progress deadline passed), neutral grey ``waiting: <code>`` for a healthy
rollout's pacing (:data:`pulumi_lws.core.contract.stage.WAITING_CODES`); a band label is drawn only where
it fits (the band's tooltip always has it). Elements carry ``class`` names (``stage-marker``,
``reconcile-tick``, ``floor``, ``floor-unarmed``, ``ceiling``, ``blocked``, ``waiting``,
``time-tick``, ``grid``; per role ``role-lane`` groups holding
``old-ready``/``new-ready`` areas, a ``lane-live`` line, ``lane-floor``/``lane-ceiling`` lines and
``lane-grid`` lines) and ``data-*`` values so tests can find them.
Invariants: every y on the chart is ``base - value / ymax * height`` with ``ymax`` at least the
largest of live, available, replicas and ceiling, so no line leaves the chart; no two text labels
overlap (boxes from :func:`text_width` in monospace), which ``tests/sim/driver/test_plot_render.py``
checks on the rasterized SVG's text elements.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from html import escape

from pulumi_lws.core.contract import glyphs as G
from pulumi_lws.core.contract.stage import is_waiting
from pulumi_lws.core.contract.trace import Lane, TraceRow, group_columns
from pulumi_lws.core.contract.workload import Budgets
from pulumi_lws.sim.driver import lane_bounds as bounds
from pulumi_lws.sim.driver.timeline import Timeline

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


def _lanes(rows: Sequence[TraceRow]) -> list[str]:
    """The group lanes in the stage table's column order (ordinals ascending, then Hash keys in
    first-seen order)."""
    return [gid for gid, _ in group_columns(rows)]


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


def lane_names(rows: Sequence[TraceRow]) -> list[str]:
    """The role lanes of multi-role rows, in first-seen order (empty for single-role traces)."""
    return list(dict.fromkeys(lane.name for r in rows for lane in r.lanes))


#: per lane name the budgets its panel draws (moved to :mod:`.lane_bounds`; importable here as before)
lane_budgets = bounds.lane_budgets


def svg_timeline(
    rows: Sequence[TraceRow],
    end_time: float | None = None,
    title: str = "pulumi-lws simulate",
    *,
    timeline: Timeline | None = None,
    stages: Sequence[TraceRow] = (),
    lane_budgets: Mapping[str, Budgets] | None = None,
) -> str:
    """SVG text (module doc). ``rows``: every recorded row; ``stages``: the stage table (its rows
    give the ``S<n>`` labels; without, none); ``timeline``: reconcile changes, budgets and when the
    floor is armed (no reconcile ticks or budget lines without); ``lane_budgets``: per role lane
    its budgets (:func:`lane_budgets`; no lane floor/ceiling without)."""
    if not rows:
        return '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="40"><text x="10" y="25">empty trace</text></svg>\n'
    timeline = timeline or Timeline()
    t1 = max(end_time or rows[-1].time, rows[-1].time + 1)
    runs = bands(rows, t1, timeline.deadline_passed)
    final = runs[-1] if runs and rows[-1].blocker and runs[-1].real else None
    head = [title] if final is None else [title] + _wrap(f"blocked: {final.code}: {rows[-1].blocker}")
    roles = lane_names(rows)
    lanes = [] if roles else _lanes(rows)
    t0 = rows[0].time
    scale = WIDTH / (t1 - t0)
    stage_times = [r.time for r in stages]
    stage_texts = [f"S{n}" for n in range(1, len(stages) + 1)]
    levels = label_levels([LEFT + (t - t0) * scale + 2 for t in stage_times], [text_width(t) for t in stage_texts])
    n_levels = max(levels, default=-1) + 1
    lanes_top = 30 + 14 * len(head) + LEVEL_H * n_levels + 6
    lanes_bottom = lanes_top + (len(roles) * (PANEL_H + PANEL_GAP) if roles else LANE_H * len(lanes))
    ymax = max([max(r.available, r.live, r.replicas) for r in rows] + [b.ceiling for b in timeline.budgets] + [1])
    f = Frame(t0, t1, lanes_top, lanes_bottom, lanes_bottom + 30 + CHART_H, ymax)
    drawn = {d for r in rows for g in r.groups if (d := g.drawn) is not None} if not roles else set()
    absent = any(len({g.id for g in r.groups if g.drawn is not None}) < len(lanes) for r in rows)
    legend = _legend(
        f.base + 40,
        roles=bool(roles),
        states=drawn,
        runs=runs,
        checked=bool(timeline.armed_intervals(t1)),
        unarmed=_has_unarmed(timeline, f),
        absent=absent and bool(lanes),
    )
    height = f.base + 40 + 18 * len(legend) + 8
    parts = [
        (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{LEFT + WIDTH + RIGHT}" height="{height:.0f}" '
            f'font-family="monospace" font-size="{FONT}">'
        ),
        '<rect width="100%" height="100%" fill="#fff"/>',
    ]
    parts += _header(head, final is not None)
    parts += (
        _role_panels(rows, roles, f, _lane_pieces(roles, timeline, lane_budgets, t0))
        if roles
        else _lane_rects(rows, lanes, f)
    )
    parts += _chart(rows, timeline, f)
    parts += _bands(runs, f)
    parts += _markers(stage_times, stage_texts, levels, f, top=30 + 14 * len(head))
    parts += _reconcile_ticks(timeline.changes, f)
    parts += _time_axis(f)
    parts += [p for line in legend for p in line]
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _header(lines: list[str], blocked: bool) -> list[str]:
    out = [f'<text x="{LEFT}" y="20" font-size="14">{escape(lines[0])}</text>']
    for i, line in enumerate(lines[1:]):
        out.append(
            f'<text class="blocked-text" x="{LEFT}" y="{36 + 14 * i}" fill="{BLOCKED}" font-weight="bold">'
            f"{escape(line)}</text>"
        )
    return out


def _lane_rects(rows: Sequence[TraceRow], lanes: list[str], f: Frame) -> list[str]:
    parts = []
    for li, gid in enumerate(lanes):
        y = f.lanes_top + li * LANE_H
        parts.append(
            f'<text class="lane-label" x="5" y="{y + 12}">{"R-" + gid if gid.isdigit() else "G-" + escape(gid[:6])}</text>'
        )
        for ri, row in enumerate(rows):
            nxt = rows[ri + 1].time if ri + 1 < len(rows) else f.t1
            cell = next((g for g in row.groups if g.id == gid), None)
            drawn = cell.drawn if cell else None
            fill = COLOURS[drawn] if drawn else ABSENT
            words = G.WORDS[drawn] if drawn else "absent"
            stroke = ' stroke="#000" stroke-dasharray="2,2"' if cell is not None and cell.surge else ""
            parts.append(
                f'<rect class="cell" data-state="{drawn or "absent"}" x="{f.x(row.time):.1f}" y="{y}" '
                f'width="{max(f.x(nxt) - f.x(row.time), 0.5):.1f}" height="{LANE_H - 3}" fill="{fill}"{stroke}>'
                f"<title>t={row.time:g} {escape(gid)}: {escape(words)}"
                f"{escape(' (' + cell.detail + ')') if cell and cell.detail and cell.detail not in (G.GATED, G.TERMINATING) else ''}"
                "</title></rect>"
            )
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


def _lane_pieces(
    roles: list[str], timeline: Timeline, static: Mapping[str, Budgets] | None, t0: float
) -> dict[str, list[tuple[float, Budgets]]]:
    """Per lane the ``(start, budgets)`` in force over the run: the timeline's record when it has
    one, else ``static`` (the caller's, from one spec) from the start; none without either."""
    if static is None:
        return {}
    out: dict[str, list[tuple[float, Budgets]]] = {}
    for name in roles:
        pieces = [(t, b[name]) for t, b in timeline.lane_budgets if name in b]
        if not pieces and name in static:
            pieces = [(t0, static[name])]
        if pieces:
            out[name] = pieces
    return out


def _role_panels(
    rows: Sequence[TraceRow], roles: list[str], f: Frame, pieces: Mapping[str, Sequence[tuple[float, Budgets]]]
) -> list[str]:
    """One panel per role lane (module doc): stacked old/new ready areas, the live line, floor and
    ceiling — the budgets in force at each moment (:mod:`.lane_bounds`) —, on the panel's own
    scale (``ymax`` = the largest of live, ready and ceiling)."""
    parts: list[str] = []
    empty = Lane("", 0, 0)

    def lane_of(row: TraceRow, name: str) -> Lane:
        return next((lane for lane in row.lanes if lane.name == name), empty)

    for li, name in enumerate(roles):
        top = f.lanes_top + li * (PANEL_H + PANEL_GAP) + PANEL_GAP
        base = top + PANEL_H
        lane_pieces = list(pieces.get(name, ()))
        b = lane_pieces[-1][1] if lane_pieces else None
        series = [lane_of(r, name) for r in rows]
        live_n = [lane.old + lane.new for lane in series]
        ready_n = [lane.old_ready + lane.new_ready for lane in series]
        floor_runs, ceiling_runs = bounds.lane_bounds([r.time for r in rows], live_n, lane_pieces, f.t1)
        floor = floor_runs[-1].value if floor_runs else None
        ceiling = ceiling_runs[-1].value if ceiling_runs else None
        ymax = max(live_n + ready_n + [r.value for r in ceiling_runs] + [1])

        def y(v: float, base: float = base, ymax: int = ymax) -> float:
            return base - v / ymax * PANEL_H

        last = series[-1]
        parts.append(f'<g class="role-lane" data-role="{escape(name)}" data-ymax="{ymax}">')
        parts.append(
            f'<text class="lane-title" x="{LEFT}" y="{top - 9}" font-weight="bold">{escape(name)}</text>'
            f'<text x="{LEFT + 8 + text_width(name):.1f}" y="{top - 9}" fill="#555">old|new at the end {last.old}|{last.new}'
            f"{'' if b is None else f' (target {b.replicas}, maxSurge {b.max_surge}, maxUnavailable {b.max_unavailable})'}"
            "</text>"
        )
        parts.append(f'<rect x="{LEFT}" y="{top}" width="{WIDTH}" height="{PANEL_H}" fill="#fafafa" stroke="#ccc"/>')
        for value in sorted({0, ymax}):
            parts.append(
                f'<text x="{LEFT - 8}" y="{y(value) + 4:.1f}" text-anchor="end">{value}</text>'
                f'<line class="lane-grid" data-value="{value}" x1="{LEFT}" y1="{y(value):.1f}" '
                f'x2="{LEFT + WIDTH}" y2="{y(value):.1f}" stroke="#ddd"/>'
            )
        old = _steps(rows, f.t1, [lane.old_ready for lane in series], f.x, y)
        top_edge = _steps(rows, f.t1, ready_n, f.x, y)
        zero = [(px, y(0)) for px, _ in old]
        parts.append(
            f'<polygon class="old-ready" fill="{OLD_FILL}" stroke="none" '
            f'points="{_points(old + zero[::-1])}"><title>{escape(name)}: old revisions, ready</title></polygon>'
        )
        parts.append(
            f'<polygon class="new-ready" fill="{NEW_FILL}" stroke="none" '
            f'points="{_points(top_edge + old[::-1])}"><title>{escape(name)}: target revision, ready</title></polygon>'
        )
        live = _steps(rows, f.t1, live_n, f.x, y)
        parts.append(
            f'<polyline class="lane-live" fill="none" stroke="{LANE_LIVE}" stroke-width="1.5" '
            f'stroke-dasharray="4,3" points="{_points(live)}"/>'
        )
        budget_lines: list[tuple[str, int | None, str, str, list]] = [
            ("lane-floor", floor, FLOOR, f"floor {floor}", floor_runs),
            ("lane-ceiling", ceiling, CEILING, f"ceiling {ceiling}", ceiling_runs),
        ]
        for cls, bound, colour, text, runs in budget_lines:
            if bound is None:
                continue
            for run in runs:  # one line per value in force, the budget of each moment
                parts.append(
                    f'<line class="{cls}" data-value="{run.value}" x1="{f.x(run.start):.1f}" y1="{y(run.value):.1f}" '
                    f'x2="{f.x(run.end):.1f}" y2="{y(run.value):.1f}" stroke="{colour}" stroke-width="1.5" '
                    'stroke-dasharray="6,4"/>'
                )
            dy = 11 if cls == "lane-floor" and floor != ceiling else (-3 if cls == "lane-ceiling" else 11)
            parts.append(
                f'<text class="{cls}-label" x="{LEFT + WIDTH + 6}" y="{y(bound) + dy:.1f}" fill="{colour}">'
                f"{escape(text)}</text>"
            )
        for ri, (row, lane) in enumerate(zip(rows, series)):  # hover: the counts of each interval
            nxt = rows[ri + 1].time if ri + 1 < len(rows) else f.t1
            parts.append(
                f'<rect x="{f.x(row.time):.1f}" y="{top}" width="{max(f.x(nxt) - f.x(row.time), 0.5):.1f}" '
                f'height="{PANEL_H}" fill="none" pointer-events="all"><title>t={row.time:g} {escape(name)}: '
                f"old|new {escape(lane.text)}</title></rect>"
            )
        parts.append("</g>")
    return parts


def _chart(rows: Sequence[TraceRow], timeline: Timeline, f: Frame) -> list[str]:
    parts = [f'<text class="axis-label" x="5" y="{f.y(f.ymax) + 4:.1f}">groups</text>']
    for value in sorted({0, f.ymax} | (set(range(f.ymax)) if f.ymax <= 8 else set())):
        parts.append(f'<text class="y-tick" x="{LEFT - 8}" y="{f.y(value) + 4:.1f}" text-anchor="end">{value}</text>')
        parts.append(
            f'<line class="grid" data-value="{value}" x1="{LEFT}" y1="{f.y(value):.1f}" x2="{LEFT + WIDTH}" '
            f'y2="{f.y(value):.1f}" stroke="#ddd"/>'
        )
    for attr, colour, dash in (("live", "#555", ' stroke-dasharray="4,3"'), ("available", "#2e9e44", "")):
        pts = []
        for ri, row in enumerate(rows):
            nxt = rows[ri + 1].time if ri + 1 < len(rows) else f.t1
            y = f.y(getattr(row, attr))
            pts += [f"{f.x(row.time):.1f},{y:.1f}", f"{f.x(nxt):.1f},{y:.1f}"]
        parts.append(
            f'<polyline class="{attr}" fill="none" stroke="{colour}" stroke-width="2"{dash} points="{" ".join(pts)}"/>'
        )
    budgets, armed = timeline.budgets, timeline.armed_intervals(f.t1)
    labels: list[tuple[float, str, str, str]] = []  # (y, class, colour, text) of the last budget's lines
    for i, b in enumerate(budgets):
        end = budgets[i + 1].start if i + 1 < len(budgets) else f.t1
        y = f.y(b.ceiling)
        parts.append(
            f'<line class="ceiling" data-value="{b.ceiling}" x1="{f.x(b.start):.1f}" y1="{y:.1f}" '
            f'x2="{f.x(end):.1f}" y2="{y:.1f}" stroke="{CEILING}" stroke-width="1.5" stroke-dasharray="6,4"/>'
        )
        y = f.y(b.floor)
        checked = [(max(b.start, s), min(end, e)) for s, e in armed if min(end, e) > max(b.start, s)]
        for s, e in _gaps(b.start, end, checked):
            parts.append(
                f'<line class="floor-unarmed" data-value="{b.floor}" x1="{f.x(s):.1f}" y1="{y:.1f}" '
                f'x2="{f.x(e):.1f}" y2="{y:.1f}" stroke="{UNARMED}" stroke-width="1" stroke-dasharray="1,3"/>'
            )
        for s, e in checked:
            parts.append(
                f'<line class="floor" data-value="{b.floor}" x1="{f.x(s):.1f}" y1="{y:.1f}" '
                f'x2="{f.x(e):.1f}" y2="{y:.1f}" stroke="{FLOOR}" stroke-width="1.5" stroke-dasharray="6,4"/>'
            )
        if i + 1 == len(budgets):
            floor_armed = bool(checked) and checked[-1][1] >= end
            labels = [
                (
                    f.y(b.ceiling),
                    "ceiling",
                    CEILING,
                    f"ceiling {b.ceiling} = replicas {b.replicas} + maxSurge {b.max_surge}"
                    if b.ceiling == b.replicas + b.max_surge
                    else f"ceiling {b.ceiling} = live groups as the scale-down to {b.replicas} drains",
                ),
                (
                    f.y(b.floor),
                    "floor",
                    FLOOR if floor_armed else UNARMED,
                    f"floor {b.floor} = replicas {b.replicas} - maxUnavailable {b.max_unavailable}",
                ),
            ]
    # labels right of the chart: the ceiling's above its line, the floor's below, never touching
    if labels:
        (cy, *c_rest), (fy, *f_rest) = labels
        cy, fy = cy - 3, fy + 11
        if fy - cy < FONT + 2:  # equal or adjacent lines: keep both readable
            fy = cy + FONT + 2
        for y, (cls, colour, text) in ((cy, c_rest), (fy, f_rest)):
            parts.append(
                f'<text class="{cls}-label" x="{LEFT + WIDTH + 6}" y="{y:.1f}" fill="{colour}">{escape(text)}</text>'
            )
    return parts


def _gaps(start: float, end: float, covered: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The parts of ``[start, end)`` outside the sorted, disjoint ``covered`` intervals."""
    out, t = [], start
    for s, e in covered:
        if s > t:
            out.append((t, s))
        t = max(t, e)
    return out + ([(t, end)] if t < end else [])


def _has_unarmed(timeline: Timeline, f: Frame) -> bool:
    budgets, armed = timeline.budgets, timeline.armed_intervals(f.t1)
    for i, b in enumerate(budgets):
        end = budgets[i + 1].start if i + 1 < len(budgets) else f.t1
        checked = [(max(b.start, s), min(end, e)) for s, e in armed if min(end, e) > max(b.start, s)]
        if _gaps(b.start, end, checked):
            return True
    return False


def _bands(runs: Sequence[Band], f: Frame) -> list[str]:
    """One translucent band per run; its label only where it fits before the next label and
    inside the chart (the tooltip always names the code and messages)."""
    parts, next_free = [], 0.0
    for band in runs:
        x0, x1 = f.x(band.start), f.x(band.end)
        colour, cls = (BLOCKED, "blocked") if band.real else (WAITING, "waiting")
        text = band.label
        fits = x0 + 4 >= next_free and x0 + 4 + text_width(text) <= LEFT + WIDTH
        label = ""
        weight = ' font-weight="bold"' if band.real else ""
        if fits:
            label = f'<text x="{x0 + 4:.1f}" y="{f.lanes_bottom + 16}" fill="{colour}"{weight}>{escape(text)}</text>'
            next_free = x0 + 4 + text_width(text) + 8
        tip = escape(f"{text}: " + " / ".join(band.messages[:3]) + (" ..." if len(band.messages) > 3 else ""))
        parts.append(
            f'<g class="{cls}" data-blocker="{escape(band.code)}" data-start="{band.start:g}" data-end="{band.end:g}">'
            f'<rect x="{x0:.1f}" y="{f.lanes_top - 2}" width="{max(x1 - x0, 1):.1f}" '
            f'height="{f.base - f.lanes_top + 2:.1f}" fill="{colour}" fill-opacity="{0.10 if band.real else 0.08}" '
            f'stroke="{colour}" stroke-width="{1 if band.real else 0.5}"><title>{tip}</title></rect>{label}</g>'
        )
    return parts


def _markers(times: Sequence[float], texts: Sequence[str], levels: Sequence[int], f: Frame, top: float) -> list[str]:
    """One ``S<n>`` label per stage-table row at the time the row starts, on its level
    (:func:`label_levels`), over a dotted line down to the axis."""
    parts = []
    for n, (t, text, level) in enumerate(zip(times, texts, levels), 1):
        x = f.x(t)
        y = top + LEVEL_H * level + 10
        parts.append(
            f'<g class="stage-marker" data-time="{t:g}" data-stage="{n}"><line x1="{x:.1f}" y1="{y - 9:.1f}" '
            f'x2="{x:.1f}" y2="{f.base}" stroke="{MARKER}" stroke-width="0.6" stroke-dasharray="1,2"/>'
            f'<text x="{x + 2:.1f}" y="{y:.1f}" fill="{MARKER}">{text}</text>'
            f"<title>t={t:g}s: stage {n} of the table starts</title></g>"
        )
    return parts


def _reconcile_ticks(changes: Sequence[float], f: Frame) -> list[str]:
    """A short tick under the time axis at every reconcile that changed objects or acted."""
    return [
        f'<line class="reconcile-tick" data-time="{t:g}" x1="{f.x(t):.1f}" y1="{f.base - 5}" x2="{f.x(t):.1f}" '
        f'y2="{f.base}" stroke="{MARKER}" stroke-width="1.5"><title>t={t:g}s: reconcile changed objects</title></line>'
        for t in changes
    ]


def _time_axis(f: Frame) -> list[str]:
    step = nice_step(f.t1 - f.t0)
    parts = [f'<line x1="{LEFT}" y1="{f.base}" x2="{LEFT + WIDTH}" y2="{f.base}" stroke="#000"/>']
    k = math.ceil(f.t0 / step)
    ticks = []
    while k * step <= f.t1 + 1e-9:
        ticks.append(k * step)
        k += 1
    # every tick gets its line; labels thinned so neighbours never touch
    last_end = -1e9
    for t in ticks:
        x = f.x(t)
        text = f"{t:g}s"
        w = text_width(text)
        label = ""
        if x - w / 2 >= last_end + 6:
            label = f'<text x="{x:.1f}" y="{f.base + 15}" text-anchor="middle">{text}</text>'
            last_end = x + w / 2
        parts.append(
            f'<g class="time-tick" data-time="{t:g}"><line x1="{x:.1f}" y1="{f.base}" x2="{x:.1f}" '
            f'y2="{f.base + 4}" stroke="#000"/>{label}</g>'
        )
    parts.append(
        f'<text class="axis-label" x="{LEFT + WIDTH / 2:.1f}" y="{f.base + 29}" text-anchor="middle">time (s)</text>'
    )
    return parts


def _swatch_rect(fill: str, opacity: str = "") -> Swatch:
    return lambda x, y: f'<rect x="{x:.1f}" y="{y:.1f}" width="12" height="12" fill="{fill}"{opacity}/>'


def _swatch_line(colour: str, dash: str = "", width: float = 2) -> Swatch:
    dashed = f' stroke-dasharray="{dash}"' if dash else ""
    return lambda x, y: (
        f'<line x1="{x:.1f}" y1="{y + 6:.1f}" x2="{x + 14:.1f}" y2="{y + 6:.1f}" stroke="{colour}" '
        f'stroke-width="{width}"{dashed}/>'
    )


Swatch = Callable[[float, float], str]


def _legend(
    y: float, *, roles: bool, states: set[str], runs: Sequence[Band], checked: bool, unarmed: bool, absent: bool
) -> list[list[str]]:
    """Legend lines (each a list of SVG parts): every state, line and band the plot draws, in the
    tables' words (:data:`pulumi_lws.core.contract.glyphs.WORDS`), laid out so entries never touch."""
    boxes: list[tuple[Swatch, str]] = []
    if roles:
        boxes += [
            (_swatch_rect(OLD_FILL), "old revisions, ready"),
            (_swatch_rect(NEW_FILL), "target revision, ready"),
            (_swatch_line(LANE_LIVE, "4,3"), "role live (old + new)"),
        ]
    else:
        boxes += [(_swatch_rect(COLOURS[s]), G.WORDS[s]) for s in G.ORDER if s in states]
        if absent:
            boxes.append((_swatch_rect(ABSENT), "absent"))
    lines: list[tuple[Swatch, str]] = [(_swatch_line("#2e9e44"), "available"), (_swatch_line("#555", "4,3"), "live")]
    if checked:
        lines.append((_swatch_line(FLOOR, "6,4"), "floor (checked)"))
    if unarmed:
        lines.append((_swatch_line(UNARMED, "1,3", 1), "floor (not checked until fully available)"))
    lines += [(_swatch_line(CEILING, "6,4"), "ceiling"), (_swatch_line(MARKER, "1,2", 1), "stage start")]
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
        lines.append((_swatch_rect(BLOCKED, ' fill-opacity="0.25"'), "blocked"))
    if any(not b.real for b in runs):
        lines.append((_swatch_rect(WAITING, ' fill-opacity="0.2"'), "waiting (healthy pacing)"))
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
