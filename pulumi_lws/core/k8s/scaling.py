"""IntOrString scaling (apimachinery ``GetScaledValueFromIntOrPercent``).

Invariant: percent scaling is exact integer arithmetic (``ceil``/``floor`` of ``pct * total / 100``).
"""

from __future__ import annotations

import re
from typing import Any

from pulumi_lws.core.k8s.model import IntOrString

_ATOI_RE = re.compile(r"^[+-]?[0-9]+$")


def percent_scaling_fails(value: Any) -> bool:
    """apimachinery ``GetScaledValueFromIntOrPercent`` returns an error for this value.

    That is: not an int, or a string without a trailing ``%`` or whose prefix is not ``Atoi``-able.
    """
    if isinstance(value, bool):
        return True
    if isinstance(value, int):
        return False
    if not isinstance(value, str) or not value.endswith("%"):
        return True
    return not _ATOI_RE.match(value[:-1])


def scaled_value(value: IntOrString, total: int, round_up: bool) -> int:
    """apimachinery ``intstr.GetScaledValueFromIntOrPercent``: ints as is, percents of ``total``.

    ``round_up`` selects ``ceil`` (maxSurge) or ``floor`` (maxUnavailable). Raises ValueError for a
    value upstream cannot scale (callers validate first).
    """
    if percent_scaling_fails(value):
        raise ValueError(f"invalid value for IntOrString: {value!r}")
    if isinstance(value, int):
        return value
    product = int(value[:-1]) * total
    return -(-product // 100) if round_up else product // 100
