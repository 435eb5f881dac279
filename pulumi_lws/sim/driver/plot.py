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
from collections.abc import Mapping, Sequence
from html import escape

from pulumi_lws.core.contract import glyphs as G
from pulumi_lws.core.contract.trace import TraceRow, group_columns
from pulumi_lws.core.contract.workload import Budgets
from pulumi_lws.sim.driver import lane_bounds as bounds
from pulumi_lws.sim.driver.plot_layout import (  # noqa: F401  (importable here as before)
    ABSENT,
    BLOCKED,
    CEILING,
    CHAR_W,
    CHART_H,
    COLOURS,
    FLOOR,
    FONT,
    LANE_H,
    LEFT,
    LEVEL_H,
    MARKER,
    PANEL_GAP,
    PANEL_H,
    RIGHT,
    UNARMED,
    WAITING,
    WIDTH,
    Band,
    Frame,
    bands,
    blocked_intervals,
    gaps,
    label_levels,
    nice_step,
    text_width,
    wrap,
)
from pulumi_lws.sim.driver.plot_legend import legend as legend_lines
from pulumi_lws.sim.driver.plot_roles import lane_pieces, role_panels
from pulumi_lws.sim.driver.timeline import Timeline


def _lanes(rows: Sequence[TraceRow]) -> list[str]:
    """The group lanes in the stage table's column order (ordinals ascending, then Hash keys in
    first-seen order)."""
    return [gid for gid, _ in group_columns(rows)]


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
    head = [title] if final is None else [title] + wrap(f"blocked: {final.code}: {rows[-1].blocker}")
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
    legend = legend_lines(
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
        role_panels(rows, roles, f, lane_pieces(roles, timeline, lane_budgets, t0))
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
        for s, e in gaps(b.start, end, checked):
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


def _has_unarmed(timeline: Timeline, f: Frame) -> bool:
    budgets, armed = timeline.budgets, timeline.armed_intervals(f.t1)
    for i, b in enumerate(budgets):
        end = budgets[i + 1].start if i + 1 < len(budgets) else f.t1
        checked = [(max(b.start, s), min(end, e)) for s, e in armed if min(end, e) > max(b.start, s)]
        if gaps(b.start, end, checked):
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
