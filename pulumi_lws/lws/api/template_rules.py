"""Pod-template rules from upstream's CRD schema (``workerTemplate`` is required).

Catching these here keeps the promise that invalid input fails before anything is registered,
naming the LWS field rather than a derived StatefulSet's.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from pulumi_lws.core.errors import FieldError

if TYPE_CHECKING:
    from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet

Errors = list[FieldError]
LWT = "spec.leaderWorkerTemplate"


def worker_template_required(lws: LeaderWorkerSet) -> Errors:
    """``workerTemplate`` is required by upstream's CRD (it is also the leader's when no leaderTemplate)."""
    if lws.spec.leader_worker_template.worker_template:
        return []
    return [FieldError(f"{LWT}.workerTemplate", "Required value", None, "Required")]
