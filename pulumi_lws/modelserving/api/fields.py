"""Wire paths, upstream messages and IntOrString helpers shared by the ModelServing rule modules.

Invariant: every message here is upstream's text (``validator.go``, apimachinery, the Kubernetes
1.35 apiserver's schema validation), so an error reads as the cluster would print it.
"""

from __future__ import annotations

import re
from typing import Any

from pulumi_lws.core.contract.errors import FieldError
from pulumi_lws.core.k8s.rules import PERCENT_MSG

Errors = list[FieldError]

TEMPLATE = "spec.template"
ROLES = f"{TEMPLATE}.roles"
RUC = "spec.rolloutStrategy.rollingUpdateConfiguration"
MIN_ROLE_REPLICAS = f"{TEMPLATE}.gangPolicy.minRoleReplicas"
BOTH_ZERO = "maxUnavailable and maxSurge cannot both resolve to 0"
ROLE_NAME_MAX = 12
ROLE_NAME_PATTERN = r"^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$"
MAX_ROLES = 4
TIER_NAME_MAX = 253
_GO_INT_MAX = 2**63 - 1
_PERCENT_RE = re.compile(r"^[0-9]+%$")
_ATOI_RE = re.compile(r"^[+-]?[0-9]+$")


def err(path: str, message: str, value: Any = None, kind: str = "Invalid") -> Errors:
    return [FieldError(path, message, value, kind)]


def role_path(i: int) -> str:
    return f"{ROLES}[{i}]"


def _atoi(s: str) -> tuple[int | None, str]:
    """Go ``strconv.Atoi`` (64-bit): (value, "") or (None, its error text)."""
    if not _ATOI_RE.fullmatch(s):
        return None, f'strconv.Atoi: parsing "{s}": invalid syntax'
    v = int(s)
    if not -_GO_INT_MAX - 1 <= v <= _GO_INT_MAX:
        return None, f'strconv.Atoi: parsing "{s}": value out of range'
    return v, ""


def validate_int_or_percent(value: Any, path: str) -> Errors:
    """Kthena ``validateIntOrPercent``: percent format, 0-100, non-negative int, else int-or-percent."""
    if isinstance(value, str):
        if not _PERCENT_RE.fullmatch(value):
            return err(path, PERCENT_MSG, value)
        pct, _ = _atoi(value[:-1])
        return err(path, "must be a valid percent value (0-100)", value) if pct is None or pct > 100 else []
    if isinstance(value, int) and not isinstance(value, bool):
        return err(path, "must be a non-negative integer", value) if value < 0 else []
    return err(path, "must be an int or percent", value)


def scale(value: Any, total: int, round_up: bool) -> tuple[int | None, str]:
    """apimachinery ``GetScaledValueFromIntOrPercent``: (value, "") or (None, its error text)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value, ""
    if not isinstance(value, str):
        return None, "invalid value for IntOrString: invalid type: neither int nor percentage"
    if not value.endswith("%"):
        return None, "invalid value for IntOrString: invalid type: string is not a percentage"
    pct, atoi_err = _atoi(value[:-1])
    if pct is None:
        return None, f'invalid value for IntOrString: invalid value "{value}": {atoi_err}'
    product = pct * total
    return (-(-product // 100) if round_up else product // 100), ""


def scaled_or(value: Any, total: int, round_up: bool, default: int) -> int:
    """The scaled value, ``default`` when unset or unscalable (upstream's silent fallbacks)."""
    if value is None:
        return default
    v, _ = scale(value, total, round_up)
    return default if v is None else v
