"""The floor and ceiling of one role lane of the SVG timeline over time (``simulate --plot``).

A role panel draws the budgets in force at each moment, as the main chart does (its segments
are :class:`~pulumi_lws.sim.driver.timeline.Budget`): ``pieces`` are the role's budgets as the
traced reconciles used them (``Timeline.lane_budgets``; one piece when the spec never changed).

Invariants (pure):

* the floor at time t is ``replicas - maxUnavailable`` (at least 0) of the piece in force at t;
* the ceiling is ``replicas + maxSurge`` of that piece, except while the role's scale-down
  drains: from a piece whose replicas are below the previous piece's, while the lane's live groups
  exceed that, the ceiling is the live count (the groups still going), as the runner holds the
  whole workload's ceiling during a scale-down (``runner._Budget``) — a scale-down never adds a
  group, so the ceiling never drops under a live line still above it;
* consecutive equal values form one :class:`Run`, so an unchanged budget is one line.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pulumi_lws.core.contract.stage import lane_title
from pulumi_lws.core.contract.workload import Budgets


@dataclass(frozen=True)
class Run:
    start: float
    end: float
    value: int


def _runs(points: Sequence[tuple[float, int]], end: float) -> list[Run]:
    out: list[Run] = []
    for i, (t, value) in enumerate(points):
        stop = points[i + 1][0] if i + 1 < len(points) else end
        if stop <= t and i + 1 < len(points):
            continue
        if out and out[-1].value == value and out[-1].end == t:
            out[-1] = Run(out[-1].start, stop, value)
        else:
            out.append(Run(t, stop, value))
    return out


def lane_bounds(
    times: Sequence[float], live: Sequence[int], pieces: Sequence[tuple[float, Budgets]], end: float
) -> tuple[list[Run], list[Run]]:
    """``(floor runs, ceiling runs)`` of one lane: ``times``/``live`` are the rows' times and the
    lane's live groups at each; ``pieces`` the ``(start, budgets)`` in force from each start (the
    first also before its start)."""
    if not pieces or not times:
        return [], []
    starts = [p[0] for p in pieces]
    breaks = sorted({*times, *(s for s in starts if times[0] <= s <= end)})
    floors: list[tuple[float, int]] = []
    ceilings: list[tuple[float, int]] = []
    previous: Budgets | None = None
    draining = False
    for t in breaks:
        b = pieces[max(0, bisect_right(starts, t) - 1)][1]
        now_live = live[max(0, bisect_right(times, t) - 1)]
        rollout = b.replicas + b.max_surge
        if previous is not None and b != previous:  # a new piece: a scale-down starts (or goes on)
            draining = b.replicas < previous.replicas or (draining and b.replicas <= previous.replicas)
        previous = b
        draining = draining and now_live > rollout
        floors.append((t, max(0, b.replicas - b.max_unavailable)))
        ceilings.append((t, max(rollout, now_live) if draining else rollout))
    return _runs(floors, end), _runs(ceilings, end)


def lane_budgets(workload: Any, spec: Any) -> dict[str, Budgets]:
    """Per lane name the budgets its panel draws: ``workload.budgets(spec)[role]`` for a ``<role>``
    lane (every slice together, as the trace view sums them); with several slices (one lane each,
    titled by :func:`~pulumi_lws.core.contract.stage.lane_title`) the role's budgets per slice."""
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
                out[lane_title(s, role)] = Budgets(
                    b.replicas // slices, b.max_surge // slices, b.max_unavailable // slices
                )
    return out
