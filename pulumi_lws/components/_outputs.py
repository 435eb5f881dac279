"""Plain-data views of a :class:`Stage` for component outputs and preview logs (pure)."""
from __future__ import annotations

from typing import Any

from pulumi_lws import labels as L
from pulumi_lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.observe import Snapshot
from pulumi_lws.rollout.stage import Stage
from pulumi_lws.trace import GroupCell, TraceRow, format_table


def hpa_selector(lws: LeaderWorkerSet) -> str:
    """Upstream ``status.hpaPodSelector``: the leader pods of this LWS."""
    return f"{L.NAME}={lws.name},{L.WORKER_INDEX}=0"


def stage_summary(stage: Stage) -> dict[str, Any]:
    return {
        "policy": stage.policy,
        "replicas": stage.replicas,
        "partition": stage.partition,
        "case": stage.case,
        "complete": stage.complete,
        "groups": stage.group_chars,
    }


def remaining_stages(stage: Stage) -> list[dict[str, Any]]:
    return [{"replicas": p.replicas, "partition": p.partition, "groups": p.groups} for p in stage.remaining]


def blocker_text(stage: Stage) -> str | None:
    return None if stage.blocker is None else f"{stage.blocker.code}: {stage.blocker.message}"


def fallback_status(lws: LeaderWorkerSet, stage: Stage) -> dict[str, Any]:
    """Counts and LWS-style conditions from the stage's group views."""
    groups = [g for g in stage.groups if g.exists and not g.surge]
    ready = sum(1 for g in groups if g.ready)
    updated = sum(1 for g in groups if g.updated)
    available = ready >= lws.replicas - lws.max_unavailable() if lws.replicas else True
    progressing = not stage.complete
    conditions = [
        {"type": "Available", "status": str(available), "reason": "AllGroupsReady" if ready == lws.replicas else "GroupsReady"},
        {"type": "Progressing", "status": str(progressing and stage.blocker is None),
         "reason": "GroupsProgressing" if progressing else "Complete"},
        {"type": "UpdateInProgress", "status": str(progressing), "reason": stage.blocker.code if stage.blocker else ""},
    ]
    return {"replicas": len(groups), "readyReplicas": ready, "updatedReplicas": updated,
            "hpaPodSelector": hpa_selector(lws), "conditions": conditions}


def lws_status(lws: LeaderWorkerSet, snapshot: Snapshot, stage: Stage) -> dict[str, Any]:
    """Ordinal: upstream's status rules (``rollout.status.ordinal_status``) plus the failure
    conditions (Degraded / GroupUnschedulable, ``rollout.failure.merge_failure_status``).
    Hash: counts from the observed groups (``fallback_status``)."""
    if lws.spec.group_identity != "Ordinal":
        return fallback_status(lws, stage)
    from pulumi_lws.rollout.failure import merge_failure_status
    from pulumi_lws.rollout.status import ordinal_status

    status = ordinal_status(lws.name, stage.groups, lws.replicas, lws.user_partition(),
                            snapshot.get("StatefulSet", lws.name))
    return merge_failure_status(status, lws, snapshot)


def _row(replicas: int, partition: int | None, chars: str, note: str = "", actions: tuple[str, ...] = (),
         blocker: str | None = None) -> TraceRow:
    cells = tuple(GroupCell(id=str(i), state=c) for i, c in enumerate(chars))
    live = sum(1 for c in chars if c != "-")
    available = sum(1 for c in chars if c in "Uo")
    return TraceRow(time=0.0, replicas=replicas, partition=partition, groups=cells, live=live,
                    available=available, actions=actions, blocker=blocker, note=note)


def stage_table(stage: Stage) -> str:
    """This stage (as observed) followed by the predicted remaining stages, in the seeds' style."""
    rows = [_row(stage.replicas, stage.partition, stage.group_chars, note=f"now (case {stage.case})" if stage.case else "now",
                 actions=tuple(a.describe() for a in stage.actions), blocker=blocker_text(stage))]
    rows += [_row(p.replicas, p.partition, p.groups, note="predicted") for p in stage.remaining]
    return format_table(rows, show_partition=stage.partition is not None)
