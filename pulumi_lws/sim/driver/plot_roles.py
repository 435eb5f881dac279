"""The role panels of a multi-role timeline (DisaggregatedSet lanes, :mod:`pulumi_lws.sim.driver.plot`):
per role its old and new ready groups as stacked areas, its live line, and its own floor and
ceiling from the budgets in force at each moment (:mod:`.lane_bounds`), on the panel's own scale.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from pulumi_lws.core.contract.trace import Lane, TraceRow
from pulumi_lws.core.contract.workload import Budgets
from pulumi_lws.sim.driver import lane_bounds as bounds
from pulumi_lws.sim.driver.plot_layout import (
    CEILING,
    FLOOR,
    LANE_LIVE,
    LEFT,
    NEW_FILL,
    OLD_FILL,
    PANEL_GAP,
    PANEL_H,
    WIDTH,
    Frame,
    text_width,
)
from pulumi_lws.sim.driver.timeline import Timeline


def steps(rows: Sequence[TraceRow], t1: float, values: Sequence[int], x, y) -> list[tuple[float, float]]:
    """The step function ``values[i]`` (one per row) as points: flat from each row's time to the next row's."""
    pts: list[tuple[float, float]] = []
    for ri, (row, value) in enumerate(zip(rows, values)):
        nxt = rows[ri + 1].time if ri + 1 < len(rows) else t1
        pts += [(x(row.time), y(value)), (x(nxt), y(value))]
    return pts


def points(pts: Sequence[tuple[float, float]]) -> str:
    return " ".join(f"{px:.1f},{py:.1f}" for px, py in pts)


def lane_pieces(
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


def role_panels(
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
        old = steps(rows, f.t1, [lane.old_ready for lane in series], f.x, y)
        top_edge = steps(rows, f.t1, ready_n, f.x, y)
        zero = [(px, y(0)) for px, _ in old]
        parts.append(
            f'<polygon class="old-ready" fill="{OLD_FILL}" stroke="none" '
            f'points="{points(old + zero[::-1])}"><title>{escape(name)}: old revisions, ready</title></polygon>'
        )
        parts.append(
            f'<polygon class="new-ready" fill="{NEW_FILL}" stroke="none" '
            f'points="{points(top_edge + old[::-1])}"><title>{escape(name)}: target revision, ready</title></polygon>'
        )
        live = steps(rows, f.t1, live_n, f.x, y)
        parts.append(
            f'<polyline class="lane-live" fill="none" stroke="{LANE_LIVE}" stroke-width="1.5" '
            f'stroke-dasharray="4,3" points="{points(live)}"/>'
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
