"""Human descriptions of trace rows, derived only from the change between consecutive rows.

Like the Description column of the upstream rollout tables ("R-4 becomes ready; partition waits
for R-5", "surge replicas reclaimed", "rolling update complete"). Generic: the text comes from
which groups appeared, became ready, started updating, were gated/ungated or terminate, and how
``replicas``/``partition`` moved; no scenario-specific knowledge.

Invariants: pure and deterministic (same rows, same notes); a row's existing note (scenario
events such as ``lws.yaml patched``) is kept first; blockers other than plain waiting
(``waiting-for-groups``) are spelled out once, when they first appear.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from pulumi_lws.core.contract.trace import GroupCell, TraceRow, group_label

WAITING_CODES = ("waiting-for-groups",)
MAX_INLINE_BLOCKER = 110  # characters of a blocker message shown in a row's note

#: blocker codes of a stage held as observed: its row's partition is not a planner's move
HELD_CODES = frozenset({"paused", "insufficient-capacity"})


def narrate(rows: Sequence[TraceRow], *, first_note: str = "") -> list[TraceRow]:
    """``rows`` with notes: ``first_note`` on the first row, a derived description on the others."""
    out: list[TraceRow] = []
    rolled = False
    for i, row in enumerate(rows):
        prev = rows[i - 1] if i else None
        rolled = rolled or (prev is not None and prev.revision != row.revision)
        parts = [first_note] if prev is None else describe(prev, row, rolled)
        note = "; ".join(p for p in [row.note, *parts] if p)
        out.append(replace(row, note=note))
    return out


def describe(prev: TraceRow, row: TraceRow, rolled: bool = True) -> list[str]:
    """What changed from ``prev`` to ``row``: a rollout start first, otherwise the readiness
    change that let the planner move first, then what it moved."""
    if row.lanes:
        return _lanes(prev, row, rolled)
    ready, others = _groups(prev, row)
    shape = _shape(prev, row)
    parts = shape + ready + others if prev.revision != row.revision else ready + shape + others
    if complete(row):
        parts.append("rolling update complete" if rolled or _had_old(prev) else "all groups ready")
    else:
        parts += _waiting(prev, row)
    if row.blocker and row.blocker_code not in WAITING_CODES and row.blocker != prev.blocker:
        parts.append(_blocked(row))
    return parts


def _lanes(prev: TraceRow, row: TraceRow, rolled: bool = True) -> list[str]:
    """Multi-role rows: what each role's old|new groups did ("prefill 6|0 -> 6|1", "decode ready"),
    then completion or a spelled-out blocker."""
    if prev.revision != row.revision:  # each row counts against its own target: say where the roll starts
        parts = ["rolling update starts: " + ", ".join(f"{lane.name} {lane.old}|{lane.new}" for lane in row.lanes)]
        if row.blocker and row.blocker_code not in WAITING_CODES + ("waiting-for-roles",):
            parts.append(_blocked(row))
        return parts
    before = {lane.name: lane for lane in prev.lanes}
    moved, ready = [], []
    for lane in row.lanes:
        was = before.get(lane.name)
        if was is None or (was.old, was.new) != (lane.old, lane.new):
            moved.append(f"{lane.name} {was.old if was else 0}|{was.new if was else 0} -> {lane.old}|{lane.new}")
        elif (was.old_ready, was.new_ready) != (lane.old_ready, lane.new_ready):
            ready.append(f"{lane.name} {lane.new_ready}/{lane.new} new ready")
    parts = ready + moved
    done = lambda r: all(lane.old == 0 and lane.new_ready == lane.new for lane in r.lanes)  # noqa: E731
    if done(row) and prev.lanes and not done(prev):  # old ones gone, or new ones (replaced at once) now ready
        parts.append(
            "rolling update complete" if rolled or any(lane.old for lane in prev.lanes) else "all groups ready"
        )
    if row.blocker and row.blocker_code not in WAITING_CODES + ("waiting-for-roles",) and row.blocker != prev.blocker:
        parts.append(_blocked(row))
    return parts


def _blocked(row: TraceRow) -> str:
    """``blocked (code): message``; a long message is left to the JSON trace and the summary."""
    if not row.blocker_code:
        return f"blocked: {row.blocker}"
    if len(row.blocker or "") > MAX_INLINE_BLOCKER:
        return f"blocked: {row.blocker_code}"
    return f"blocked ({row.blocker_code}): {row.blocker}"


def complete(row: TraceRow) -> bool:
    """Every wanted group updated and ready, no surge, nothing terminating, the full count live."""
    wanted = [g for g in row.groups if g.state != "-"]
    return (
        bool(wanted)
        and all(g.state == "U" and not g.surge and not g.detail for g in wanted)
        and row.live == len(wanted) == row.replicas
    )


def _had_old(row: TraceRow) -> bool:
    return any(g.state in "ox" for g in row.groups)


def _present(row: TraceRow) -> dict[str, GroupCell]:
    return {g.id: g for g in row.groups if g.state != "-"}


def _names(ids: Sequence[str]) -> str:
    return ", ".join(group_label(i) for i in ids)


def _verb(ids: Sequence[str], one: str, many: str) -> str:
    return f"{_names(ids)} {one if len(ids) == 1 else many}"


def _shape(prev: TraceRow, row: TraceRow) -> list[str]:
    """Rollout start, surge creation/reclaim, scaling, partition moves."""
    was, now = _present(prev), _present(row)
    created = [i for i in now if i not in was]
    surge_new = [i for i in created if now[i].surge]
    surge_gone = [i for i in was if was[i].surge and i not in now]
    parts: list[str] = []
    if prev.revision != row.revision:
        plain = [i for i in created if not now[i].surge]
        what = [f"{len(surge_new)} surge group{'s' if len(surge_new) > 1 else ''} created"] if surge_new else []
        what += [_created(plain, now)] if plain else []
        parts.append("rolling update starts" + (": " + ", ".join(what) if what else ""))
        parts += _rollout_partition(prev, row)
    else:
        plain = [i for i in created if not now[i].surge]
        if plain:
            parts.append(_created(plain, now))
        if surge_new:
            parts.append(f"{len(surge_new)} surge group{'s' if len(surge_new) > 1 else ''} created")
        if row.partition is not None and prev.partition is not None and row.partition != prev.partition:
            parts.append(f"partition {prev.partition}→{row.partition}")
    if surge_gone:
        parts.append("surge replicas reclaimed")
    elif row.replicas != prev.replicas and not surge_new:
        parts.append(f"replicas {prev.replicas}→{row.replicas}")
    return parts


def _created(ids: Sequence[str], now: dict[str, GroupCell]) -> str:
    gated = all(now[i].detail == "gated" for i in ids)
    return f"{_names(ids)} created" + (" (gated)" if gated else "")


def _rollout_partition(prev: TraceRow, row: TraceRow) -> list[str]:
    """On a template change upstream first sets partition = min(old replicas, replicas); a lower
    partition in the same row means the planner went on to the fixed point in one stage."""
    if row.partition is None or row.blocker_code in HELD_CODES:
        return []  # a held stage (paused, insufficient capacity) registered the observed partition
    spec_replicas = sum(1 for g in row.groups if not g.surge and g.state != "-") or row.replicas
    start = min(prev.replicas, spec_replicas)
    if row.case == "rf":
        return [
            f"RolloutFirst: partition {start}→{row.partition}, replicas stay {row.replicas} until old groups are replaced"
        ]
    if row.partition < start:
        return [f"partition {start}→{row.partition} in one stage (fixed point)"]
    return [f"partition {row.partition}"]


def _groups(prev: TraceRow, row: TraceRow) -> tuple[list[str], list[str]]:
    """Per-group changes: (became ready, [started updating, admitted, gated, terminating, removed, unschedulable])."""
    was, now = _present(prev), _present(row)
    same_rev = prev.revision == row.revision
    ready = [i for i, g in now.items() if g.state == "U" and not (i in was and was[i].state == "U" and same_rev)]
    updating = [
        i
        for i, g in now.items()
        if g.state == "u"
        and not g.detail
        and i in was
        and was[i].detail != "gated"
        and (was[i].state in "ox" or (was[i].state == "U" and not same_rev))
    ]
    gated = [i for i, g in now.items() if g.detail == "gated" and i in was and was[i].detail != "gated"]
    admitted = [i for i, g in now.items() if i in was and was[i].detail == "gated" and g.detail != "gated"]
    terminating = [
        i for i, g in now.items() if g.detail == "terminating" and (i not in was or was[i].detail != "terminating")
    ]
    unschedulable = [
        i for i, g in now.items() if g.detail == "unschedulable" and (i not in was or was[i].detail != "unschedulable")
    ]
    removed = [i for i, g in was.items() if i not in now and not g.surge]
    changes = (
        (updating, "updating"),
        (admitted, "admitted (ungated)"),
        (gated, "gated"),
        (terminating, "tearing down"),
        (removed, "removed"),
        (unschedulable, "unschedulable"),
    )
    parts = [_verb(ids, word, word) for ids, word in changes if ids]
    return ([_verb(ready, "becomes ready", "become ready")] if ready else []), parts


def _waiting(prev: TraceRow, row: TraceRow) -> list[str]:
    """Ordinal: the partition only descends past a contiguous ready tail, so with the partition
    unchanged it waits for the highest ordinal at or above it that is not ready+updated."""
    if row.partition is None or row.partition == 0 or row.partition != prev.partition or prev.revision != row.revision:
        return []
    tail = [g for g in row.groups if g.id.isdigit() and int(g.id) >= row.partition and g.state != "U"]
    if not tail:
        return []
    top = max(tail, key=lambda g: int(g.id))
    return [f"partition waits for {group_label(top.id)}"]
