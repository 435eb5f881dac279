"""LeaderWorkerSet validation: upstream webhook rules (exact messages and paths) + name budgets.

Each rule is a small function returning FieldErrors; :func:`validate_leaderworkerset` runs all.
"""
from __future__ import annotations

from pulumi_lws.api.common import FieldError, validate_dns1035
from pulumi_lws.api.leaderworkerset import LeaderWorkerSet


def validate_leaderworkerset(lws: LeaderWorkerSet, old: LeaderWorkerSet | None = None) -> list[FieldError]:
    errors: list[FieldError] = []
    if not lws.metadata.name:
        errors.append(FieldError("metadata.name", "Required value"))
    else:
        errors += validate_dns1035(lws.metadata.name, "metadata.name")
    return errors
