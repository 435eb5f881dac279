"""Validation rules shared by every API: IntOrString budgets, DNS-1035 names (apimachinery messages)."""

from __future__ import annotations

import re
from typing import Any

from pulumi_lws.core.contract.errors import FieldError

PERCENT_RE = re.compile(r"^[0-9]+%$")


PERCENT_MSG = (
    "a valid percent string must be a numeric string followed by an ending '%' "
    "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
)


def validate_int_or_percent(value: Any, path: str) -> list[FieldError]:
    """Upstream ``ValidatePositiveIntOrPercent`` + ``IsNotMoreThan100Percent`` (rules 6-8).

    A value of another type (not int, not str) gets ``invalid value`` (rule 9).
    """
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return [FieldError(path, "invalid value", value)]
    if isinstance(value, str):
        if not PERCENT_RE.match(value):
            return [FieldError(path, PERCENT_MSG, value)]
        if int(value[:-1]) > 100:
            return [FieldError(path, "must not be greater than 100%", value)]
    elif value < 0:
        return [FieldError(path, "must be greater than or equal to 0", value)]
    return []


DNS1035_RE = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")


DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
    "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)


def validate_dns1035(name: str, path: str) -> list[FieldError]:
    """apimachinery ``IsDNS1035Label``: length first, then the regex (both may be reported)."""
    errs = []
    if len(name) > 63:
        errs.append(FieldError(path, "must be no more than 63 characters", name))
    if not DNS1035_RE.match(name):
        errs.append(FieldError(path, DNS1035_MSG, name))
    return errs
