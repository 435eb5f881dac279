"""Plain-data views of a :class:`Stage` for component outputs and preview logs (pure)."""
from __future__ import annotations

from typing import Any

from pulumi_lws.core.control import control_summary
from pulumi_lws.core.stage import Stage, is_webhook_labels
from pulumi_lws.core.trace import GroupCell, TraceRow, format_table
from pulumi_lws.lws.rollout.ordinal.cases import describe_case


def stage_summary(stage: Stage) -> dict[str, Any]:
    return {
        "policy": stage.policy,
        "replicas": stage.replicas,
        "partition": stage.partition,
        "case": stage.case,
        "complete": stage.complete,
        "groups": stage.group_chars,
        # rollout control (pulumi_lws.core.control): paused, progress deadline, group counts, times
        "paused": bool(stage.control and stage.control.paused),
        "control": control_summary(stage),
    }


def remaining_stages(stage: Stage) -> list[dict[str, Any]]:
    return [{"replicas": p.replicas, "partition": p.partition, "groups": p.groups} for p in stage.remaining]


def blocker_text(stage: Stage) -> str | None:
    return None if stage.blocker is None else f"{stage.blocker.code}: {stage.blocker.message}"


def _row(replicas: int, partition: int | None, chars: str, note: str = "", actions: tuple[str, ...] = (),
         blocker: str | None = None, labelled: tuple[str, ...] = ()) -> TraceRow:
    cells = tuple(GroupCell(id=str(i), state=c) for i, c in enumerate(chars))
    live = sum(1 for c in chars if c != "-")
    available = sum(1 for c in chars if c in "Uo")
    return TraceRow(time=0.0, replicas=replicas, partition=partition, groups=cells, live=live,
                    available=available, actions=actions, blocker=blocker, note=note, labelled=labelled)


def stage_table(stage: Stage) -> str:
    """This stage (as observed) followed by the predicted remaining stages, in the seeds' style.
    The first row's note describes the planner's case in plain words (the id stays in
    :func:`stage_summary`'s ``case``). Webhook-equivalent label actions are summarised ("labelled N pods"), the others listed."""
    note = f"now: {describe_case(stage.case)}" if stage.case else "now"
    if stage.control is not None and (stage.control.paused or stage.control.exceeded):
        note = f"{note} [{'paused' if stage.control.paused else 'ProgressDeadlineExceeded'}]"
    rows = [_row(stage.replicas, stage.partition, stage.group_chars, note=note,
                 actions=tuple(a.describe() for a in stage.actions if not is_webhook_labels(a)), blocker=blocker_text(stage),
                 labelled=tuple(a.name for a in stage.actions if is_webhook_labels(a)))]
    rows += [_row(p.replicas, p.partition, p.groups, note="predicted") for p in stage.remaining]
    return format_table(rows, show_partition=stage.partition is not None)
