"""Wire paths, messages and the error helper shared by the LeaderWorkerSet rule modules."""

from __future__ import annotations

from typing import Any

from pulumi_lws.core.contract.errors import FieldError

MAX_REPLICAS = 1_000_000
MAX_INT32 = 2**31 - 1
LWT = "spec.leaderWorkerTemplate"
SGS_PATH = f"{LWT}.SubGroupPolicy.subGroupSize"  # sic: upstream's capital S
RUC = "spec.rolloutStrategy.rollingUpdateConfiguration"
MU_PATH, MS_PATH, PARTITION_PATH = f"{RUC}.maxUnavailable", f"{RUC}.maxSurge", f"{RUC}.partition"
SCHED = "spec.scheduling"
UPDATE_ORDER_ANNOTATION = "pulumi-lws.io/update-order"  # same key as pulumi_lws.lws.reconcile
IMMUTABLE = "field is immutable"

Errors = list[FieldError]


def err(path: str, message: str, value: Any = None, kind: str = "Invalid") -> Errors:
    return [FieldError(path, message, value, kind)]
