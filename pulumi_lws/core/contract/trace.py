"""Rollout traces and the stage tables printed by ``pulumi-lws plan`` and ``simulate``.

A :class:`TraceRow` is one observed (or predicted) change: the leader controller shape, every
group's state, live/available counts, actions taken and the blocker. Tables follow the upstream
docs' style with the marks of :mod:`pulumi_lws.core.contract.glyphs` (✅ updated and ready, ⏳ updated and
not ready, 🔵 old and ready, ⚪ old and not ready, 🔒 gated, 🗑️ terminating; or their ASCII
letters) and a legend line under each table. The JSON form is the documented trace schema
(``docs/trace-schema.md``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from pulumi_lws.core.contract import glyphs as G
from pulumi_lws.core.contract.stage import Lane as Lane  # re-exported: trace rows carry lanes


class PlanInputError(ValueError):
    """OLD/NEW are valid workloads but cannot be planned together (``pulumi-lws plan`` exits 2)."""


@dataclass(frozen=True)
class GroupCell:
    id: str
    state: str  # one of U o u x - (see rollout.stage)
    revision: str | None = None
    surge: bool = False
    detail: str = ""  # e.g. "gated", "terminating", "unschedulable"

    @property
    def drawn(self) -> str | None:
        """The state a table draws (:mod:`pulumi_lws.core.contract.glyphs`); None for an absent group."""
        return G.drawn_state(self.state, self.detail)

    def mark(self, glyphs: G.GlyphSet = G.UNICODE) -> str:
        drawn = self.drawn
        return "" if drawn is None else glyphs.mark(drawn)

    @property
    def glyph(self) -> str:
        return self.mark()


@dataclass(frozen=True)
class GroupsView:
    """What a trace row shows of one observation: the controller's replicas/partition, one cell per
    group, and the live / available group counts the invariants check."""

    replicas: int
    partition: int | None
    cells: tuple[GroupCell, ...]
    live: int
    available: int
    #: multi-role workloads: one lane per role; the stage table shows these instead of group cells
    lanes: tuple[Lane, ...] = ()


@dataclass(frozen=True)
class TraceRow:
    time: float
    replicas: int
    partition: int | None
    groups: tuple[GroupCell, ...]
    live: int
    available: int
    revision: str = ""
    actions: tuple[str, ...] = ()
    blocker: str | None = None
    note: str = ""
    case: str | None = None
    blocker_code: str | None = None  # stable code of ``blocker`` (e.g. resource-deadlock-717)
    # Pods given webhook-equivalent labels (``stage.is_webhook_labels`` actions) while in this
    # state: counted, never listed in ``actions``, and no reason for a row of its own.
    labelled: tuple[str, ...] = ()
    lanes: tuple[Lane, ...] = ()  # see GroupsView.lanes

    def to_json(self) -> dict[str, Any]:
        """Every field in declaration order (as ``dataclasses.asdict``), sequences as lists. Built
        field by field: ``asdict`` deep-copies every cell of every row (twice, with the groups
        replaced after), which for a 10,000-group plan costs more than the plan."""
        d = {name: getattr(self, name) for name in _ROW_FIELDS}
        d["groups"] = [{name: getattr(g, name) for name in _CELL_FIELDS} for g in self.groups]
        d["lanes"] = [asdict(lane) for lane in self.lanes]
        d["actions"] = list(self.actions)
        d["labelled"] = list(self.labelled)
        return d

    def with_labelled(self, more: Sequence[str]) -> TraceRow:
        """This row with ``more`` pod names added to ``labelled`` (first occurrence kept)."""
        return replace(self, labelled=tuple(dict.fromkeys((*self.labelled, *more))))


#: field names in declaration order; every field of a cell and every row field but the four
#: sequences ``to_json`` rebuilds is a scalar (a str, int, float, bool or None)
_ROW_FIELDS = tuple(f.name for f in fields(TraceRow))
_CELL_FIELDS = tuple(f.name for f in fields(GroupCell))


@dataclass
class Trace:
    rows: list[TraceRow] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    blocked: str | None = None
    converged: bool = False
    #: the rollout stopped at the spec's partition N, as asked (every group >= N updated and ready)
    held_at_partition: int | None = None
    #: the rollout stopped at the spec's role partitions, as asked (ModelServing RoleRollingUpdate:
    #: in every ServingGroup each role's replicas >= its partition updated and ready, those below on
    #: their revision and ready): role -> partition, the roles with one
    held_at_role_partitions: dict[str, int] | None = None
    #: notes a predicted trace carries for its printers (``plan``: the first stage's notes); not in
    #: the trace JSON (``plan`` prints them as its own ``warnings``)
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rows": [r.to_json() for r in self.rows],
            "violations": list(self.violations),
            "blocked": self.blocked,
            "converged": self.converged,
        }
        if self.held_at_partition is not None:
            out["heldAtPartition"] = self.held_at_partition
        if self.held_at_role_partitions is not None:
            out["heldAtRolePartitions"] = dict(self.held_at_role_partitions)
        return out

    @property
    def held(self) -> bool:
        """Stopped where the spec's partitions (ServingGroup / group or role) hold it, as asked."""
        return self.held_at_partition is not None or self.held_at_role_partitions is not None


def group_label(gid: str) -> str:
    """``R-<ordinal>`` for Ordinal groups, ``G-<first 5 chars of the key>`` for Hash groups."""
    return f"R-{gid}" if gid.isdigit() else f"G-{gid[:5]}"


def group_columns(rows: Sequence[TraceRow]) -> list[tuple[str, bool]]:
    """Group column ids (ordinals ascending, then Hash keys in first-seen order), with whether
    the id ever was a surge group."""
    seen: dict[str, bool] = {}
    for row in rows:
        for g in row.groups:
            seen[g.id] = seen.get(g.id, False) or g.surge
    first = {gid: n for n, gid in enumerate(seen)}

    def order(item: tuple[str, bool]) -> tuple[int, int]:
        gid = item[0]
        return (0, int(gid)) if gid.isdigit() else (1, first[gid])

    return sorted(seen.items(), key=order)


#: The legend of role lanes (``Lanes.ROLES``): what ``old|new`` counts.
LANES_LEGEND = (
    "legend: old|new = a role's groups (ModelServing: role replicas) on an old revision | on the "
    "row's target; (a|b ready) while some of them are not ready"
)


def format_table(
    rows: Sequence[TraceRow],
    *,
    markdown: bool = False,
    show_partition: bool = True,
    details: bool = True,
    glyphs: G.GlyphSet = G.UNICODE,
    roles: bool | None = None,
    legend: bool = True,
) -> str:
    """The seeds' stage table: Stage | Partition | Replicas | lanes | Live | Available | Description,
    then (``legend``) one legend line naming the marks drawn.

    The one renderer of every stage table (``plan``, ``simulate``, the component's preview log,
    ``status``, markdown). Lanes: ``roles`` True draws one ``<role> old|new`` column per role
    (``row.lanes``), False one column per group (``R-<ordinal>``, ``G-<key>``), marks from
    ``glyphs``; None decides by the rows (role lanes when any row has them). Callers pass the
    API's own choice (``Workload.stage_lanes``). Description = the row's note, plus
    (``details``) its blocker, actions and how many pods got webhook-equivalent labels
    (``labelled N pods``: summarised, never listed)."""
    if roles is None:
        roles = any(row.lanes for row in rows)
    lanes = list(dict.fromkeys(lane.name for row in rows for lane in row.lanes)) if roles else []
    cols = [] if roles else group_columns(rows)
    head = ["Stage"] + (["Partition"] if show_partition else []) + ["Replicas"]
    head += [f"{name} old|new" for name in lanes]
    head += [group_label(gid) + (" (Surge)" if surge and gid.isdigit() else "") for gid, surge in cols]
    head += ["Live", "Available", "Description"]
    body = []
    drawn: set[str] = set()
    for i, row in enumerate(rows, 1):
        cells = {g.id: g.mark(glyphs) for g in row.groups}
        drawn.update(d for g in row.groups if (d := g.drawn) is not None)
        line = [f"Stage {i}"] + ([str(row.partition if row.partition is not None else "-")] if show_partition else [])
        by_lane = {lane.name: lane.text for lane in row.lanes}
        line += (
            [str(row.replicas)] + [by_lane.get(name, "") for name in lanes] + [cells.get(gid, "") for gid, _ in cols]
        )
        desc = row.note
        if row.blocker and details:
            desc = (desc + "; " if desc else "") + f"blocked: {row.blocker}"
        if row.actions and details:
            desc = (desc + "; " if desc else "") + "actions: " + ", ".join(row.actions)
        if row.labelled and details:
            desc = (desc + "; " if desc else "") + labelled_summary(row.labelled)
        line += [str(row.live), str(row.available), desc]
        body.append(line)
    note = (LANES_LEGEND if roles else glyphs.legend(drawn)) if legend and body and (roles or drawn) else ""
    if markdown:
        out = ["| " + " | ".join(h.replace("|", "\\|") for h in head) + " |", "|" + "|".join("---" for _ in head) + "|"]
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in line) + " |" for line in body]
        return "\n".join(out + (["", note] if note else []))
    widths = [max(_width(r[i]) for r in [head] + body) for i in range(len(head))]

    def fmt(line: list[str]) -> str:
        return "  ".join(c + " " * (w - _width(c)) for c, w in zip(line, widths)).rstrip()

    return "\n".join(
        [fmt(head), fmt(["-" * w for w in widths])] + [fmt(row) for row in body] + ([note] if note else [])
    )


def _width(s: str) -> int:
    """Display width: emoji glyphs take two terminal columns."""
    return sum(2 if ord(ch) > 0x2000 and ch not in "\ufe0f" else (0 if ch == "\ufe0f" else 1) for ch in s)


def format_json(trace: Trace) -> str:
    return json.dumps(trace.to_json(), indent=2, ensure_ascii=False)


def labelled_summary(pods: Sequence[str]) -> str:
    """``labelled 4 pods``: the table's summary of webhook-equivalent label actions."""
    return f"labelled {len(pods)} pod{'' if len(pods) == 1 else 's'}"


def rows_changed(rows: Iterable[TraceRow]) -> list[TraceRow]:
    """Drop rows identical to their predecessor (ignoring time and ``labelled``): one row per
    observed change; a dropped row's ``labelled`` pods move to the row kept."""
    out: list[TraceRow] = []
    for row in rows:
        if out and _same(out[-1], row):
            out[-1] = out[-1].with_labelled(row.labelled) if row.labelled else out[-1]
            continue
        out.append(row)
    return out


def _same(a: TraceRow, b: TraceRow) -> bool:
    # multi-role rows show lanes, not group cells: a change only inside a lane's groups is no new row
    groups_a, groups_b = (a.groups, b.groups) if not (a.lanes or b.lanes) else ((), ())
    return (a.replicas, a.partition, groups_a, a.lanes, a.blocker, a.live, a.available) == (
        b.replicas,
        b.partition,
        groups_b,
        b.lanes,
        b.blocker,
        b.live,
        b.available,
    ) and not b.actions
