"""The LeaderWorkerSet status a component publishes (upstream's status rules, both identities,
plus the failure conditions) and the HPA selector."""

from __future__ import annotations

from typing import Any

from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.core.contract.stage import Stage
from pulumi_lws.core.features.control import with_control_conditions
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.status.failure import merge_failure_status


def hpa_selector(lws: LeaderWorkerSet) -> str:
    """Upstream ``status.hpaPodSelector``: the leader pods of this LWS."""
    return f"{L.NAME}={lws.name},{L.WORKER_INDEX}=0"


def lws_status(lws: LeaderWorkerSet, snapshot: Snapshot, stage: Stage) -> dict[str, Any]:
    """Upstream's status rules plus the failure conditions (Degraded / GroupUnschedulable,
    ``rollout.failure.merge_failure_status``). Ordinal: ``rollout.status.ordinal_status``
    (leader StatefulSet); Hash: ``rollout.hash_status.hash_status`` (counts from the observed
    groups, Available only once the Deployment has observed its latest generation)."""
    if lws.spec.group_identity == "Hash":
        from pulumi_lws.lws.status.hash import hash_status

        status = hash_status(lws.name, stage.groups, lws.replicas, snapshot.get("Deployment", lws.name))
    else:
        from pulumi_lws.lws.status.ordinal import ordinal_status

        status = ordinal_status(
            lws.name, stage.groups, lws.replicas, lws.user_partition(), snapshot.get("StatefulSet", lws.name)
        )
    return with_control_conditions(merge_failure_status(status, lws, snapshot), stage)
