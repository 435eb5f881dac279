"""How reconciles become trace rows: the actions a row shows, and runs of equal rows merged.

Apart from :mod:`~pulumi_lws.sim.driver.runner` because the timeline
(:mod:`~pulumi_lws.sim.driver.timeline`) reads a reconcile's actions by the same rule as the
trace. Invariants: webhook-equivalent labels (``stage.is_webhook_labels``) are never actions,
only the names of the pods they labelled; a merged row keeps the first row's time and note, the
run's latest blocker and every pod labelled during the run.
"""

from __future__ import annotations

from dataclasses import replace

from pulumi_lws.core.contract.stage import is_webhook_labels
from pulumi_lws.core.contract.trace import TraceRow
from pulumi_lws.sim.driver.engines import EngineStep


def split_executed(step: EngineStep | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(actions, labelled)`` of one reconcile for its trace row: the executed result lines of
    every action except webhook-equivalent labels (``stage.is_webhook_labels``), and the names
    of the pods those labelled. Both engines report one line per action of ``step.stages``, in
    order; if the counts ever differ, every line stays in ``actions``."""
    if step is None:
        return (), ()
    planned = [a for s in step.stages for a in s.actions]
    if len(planned) != len(step.executed):
        return tuple(step.executed), ()
    actions = tuple(line for a, line in zip(planned, step.executed) if not is_webhook_labels(a))
    labelled = tuple(dict.fromkeys(a.name for a in planned if is_webhook_labels(a)))
    return actions, labelled


def _state(row: TraceRow) -> tuple:
    return (row.replicas, row.partition, row.groups, row.live, row.available)


def coalesce(rows: list[TraceRow]) -> list[TraceRow]:
    """Merge runs of rows with the same observed state (no actions; webhook-equivalent labels
    don't count as actions): one row per state change, keeping the first row's time and note,
    the run's latest blocker and every pod labelled during the run."""
    out: list[TraceRow] = []
    for row in rows:
        if out and not row.actions and _state(out[-1]) == _state(row):
            prev = out[-1]
            out[-1] = replace(
                prev,
                blocker=row.blocker,
                blocker_code=row.blocker_code,
                note=prev.note or row.note,
                case=prev.case or row.case,
            ).with_labelled(row.labelled)
            continue
        out.append(row)
    return out
