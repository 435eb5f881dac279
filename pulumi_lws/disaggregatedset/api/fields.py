"""Wire paths, limits and the error helper shared by the DisaggregatedSet rule modules."""

from __future__ import annotations

from typing import Any

from pulumi_lws.core.contract.errors import FieldError

ROLES = "spec.roles"
SLICES = "spec.slices"
PLACEMENT = "spec.placementPolicy"
MIN_ROLES, MAX_ROLES = 2, 10
MIN_SLICES, MAX_SLICES = 1, 100
ROLE_NAME_MAX = 63
ROLE_NAME_PATTERN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
MAX_ROLE_REPLICAS = 1_000_000
RUC = "spec.rolloutStrategy.rollingUpdateConfiguration"  # role-relative

Errors = list[FieldError]


def role_path(i: int) -> str:
    return f"{ROLES}[{i}]"


def err(path: str, message: str, value: Any = None, kind: str = "Invalid") -> Errors:
    return [FieldError(path, message, value, kind)]
