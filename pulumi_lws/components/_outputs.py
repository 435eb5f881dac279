"""Plain-data views of a :class:`Stage` for component outputs and preview logs (pure)."""
from __future__ import annotations

from typing import Any

from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.core.snapshot import Snapshot
from pulumi_lws.core.stage import Stage, is_webhook_labels
from pulumi_lws.core.trace import GroupCell, TraceRow, format_table


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


def lws_status(lws: LeaderWorkerSet, snapshot: Snapshot, stage: Stage) -> dict[str, Any]:
    """Upstream's status rules plus the failure conditions (Degraded / GroupUnschedulable,
    ``rollout.failure.merge_failure_status``). Ordinal: ``rollout.status.ordinal_status``
    (leader StatefulSet); Hash: ``rollout.hash_status.hash_status`` (counts from the observed
    groups, Available only once the Deployment has observed its latest generation)."""
    from pulumi_lws.lws.rollout.failure.ordinal import merge_failure_status

    if lws.spec.group_identity == "Hash":
        from pulumi_lws.lws.status.hash import hash_status

        status = hash_status(lws.name, stage.groups, lws.replicas, snapshot.get("Deployment", lws.name))
    else:
        from pulumi_lws.lws.status.ordinal import ordinal_status

        status = ordinal_status(lws.name, stage.groups, lws.replicas, lws.user_partition(),
                                snapshot.get("StatefulSet", lws.name))
    return merge_failure_status(status, lws, snapshot)


def _row(replicas: int, partition: int | None, chars: str, note: str = "", actions: tuple[str, ...] = (),
         blocker: str | None = None, labelled: tuple[str, ...] = ()) -> TraceRow:
    cells = tuple(GroupCell(id=str(i), state=c) for i, c in enumerate(chars))
    live = sum(1 for c in chars if c != "-")
    available = sum(1 for c in chars if c in "Uo")
    return TraceRow(time=0.0, replicas=replicas, partition=partition, groups=cells, live=live,
                    available=available, actions=actions, blocker=blocker, note=note, labelled=labelled)


def stage_table(stage: Stage) -> str:
    """This stage (as observed) followed by the predicted remaining stages, in the seeds' style.
    Webhook-equivalent label actions are summarised ("labelled N pods"), the others listed."""
    rows = [_row(stage.replicas, stage.partition, stage.group_chars, note=f"now (case {stage.case})" if stage.case else "now",
                 actions=tuple(a.describe() for a in stage.actions if not is_webhook_labels(a)), blocker=blocker_text(stage),
                 labelled=tuple(a.name for a in stage.actions if is_webhook_labels(a)))]
    rows += [_row(p.replicas, p.partition, p.groups, note="predicted") for p in stage.remaining]
    return format_table(rows, show_partition=stage.partition is not None)
