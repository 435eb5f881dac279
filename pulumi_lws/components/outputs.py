"""Plain-data views of a :class:`Stage` for component outputs and preview logs (pure)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pulumi_lws.core.contract import glyphs as G
from pulumi_lws.core.contract.stage import Stage, is_webhook_labels
from pulumi_lws.core.contract.stagetable import Lanes, predicted_row, stage_row
from pulumi_lws.core.contract.trace import format_table
from pulumi_lws.core.contract.workload import describe_case
from pulumi_lws.core.features.control import control_summary


def stage_summary(stage: Stage) -> dict[str, Any]:
    """The ``stage`` output (and ``pulumi-lws status``'s ``stage``: both call this): a stage drawn
    in lanes (DisaggregatedSet roles, ModelServing RoleRollingUpdate) also lists each lane's
    ``old|new`` replicas and how many of each are ready, under ``roles``."""
    summary = {
        "policy": stage.policy,
        "replicas": stage.replicas,
        "partition": stage.partition,
        "case": stage.case,
        "complete": stage.complete,
        "groups": stage.group_chars,
        # rollout control (pulumi_lws.core.features.control): paused, progress deadline, group counts, times
        "paused": bool(stage.control and stage.control.paused),
        "control": control_summary(stage),
    }
    if stage.lanes:
        summary["roles"] = [
            {
                "name": lane.name,
                "old": lane.old,
                "new": lane.new,
                "oldReady": lane.old_ready,
                "newReady": lane.new_ready,
            }
            for lane in stage.lanes
        ]
    return summary


def remaining_stages(stage: Stage) -> list[dict[str, Any]]:
    return [{"replicas": p.replicas, "partition": p.partition, "groups": p.groups} for p in stage.remaining]


def blocker_text(stage: Stage) -> str | None:
    return None if stage.blocker is None else f"{stage.blocker.code}: {stage.blocker.message}"


def stage_table(stage: Stage, lanes: Lanes | None = None) -> str:
    """This stage (as observed) followed by the predicted remaining stages, drawn by the one
    stage-table renderer (:func:`pulumi_lws.core.contract.trace.format_table`, rows from
    :mod:`pulumi_lws.core.contract.stagetable`, as ``pulumi-lws plan``), with its legend line.
    ``lanes``: the API's ``Workload.stage_lanes`` (None: :meth:`Lanes.of_lanes` of the stage's lanes).
    The first row's note describes the planner's case in plain words (the id stays in
    :func:`stage_summary`'s ``case``). Webhook-equivalent label actions are summarised
    ("labelled N pods"), the others listed."""
    note = f"now: {describe_case(stage.case)}" if stage.case else "now"
    if stage.control is not None and (stage.control.paused or stage.control.exceeded):
        note = f"{note} [{'paused' if stage.control.paused else 'ProgressDeadlineExceeded'}]"
    lanes = lanes or Lanes.of_lanes(stage.lanes)
    now = stage_row(
        0,
        stage,
        note=note,
        actions=tuple(a.describe() for a in stage.actions if not is_webhook_labels(a)),
        labelled=tuple(a.name for a in stage.actions if is_webhook_labels(a)),
    )
    rows = [replace(now, blocker=blocker_text(stage))]
    rows += [
        predicted_row(n, p, revision=stage.target_revision, note="predicted") for n, p in enumerate(stage.remaining, 1)
    ]
    return format_table(rows, show_partition=stage.partition is not None, roles=lanes.by_role, glyphs=G.preferred())
