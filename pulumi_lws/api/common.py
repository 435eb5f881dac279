"""Shared API plumbing: camelCase models, field errors, IntOrString scaling.

Invariant: every user-facing error names the field path on the wire (camelCase, as upstream
emits it) and carries the upstream message where upstream has one.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Iterable, Union

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

IntOrString = Union[int, str]

PERCENT_RE = re.compile(r"^[0-9]+%$")
PERCENT_MSG = (
    "a valid percent string must be a numeric string followed by an ending '%' "
    "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
)


@dataclass(frozen=True)
class FieldError:
    """One validation problem: the wire path of the field, the message, the offending value."""

    path: str
    message: str
    value: Any = None

    def __str__(self) -> str:
        if self.value is None:
            return f"{self.path}: {self.message}"
        return f"{self.path}: Invalid value: {self.value!r}: {self.message}"


class SpecError(ValueError):
    """Invalid input. Raised before anything is rendered or registered; lists every problem."""

    def __init__(self, kind: str, name: str | None, errors: Iterable[FieldError]):
        self.kind = kind
        self.name = name
        self.errors: list[FieldError] = list(errors)
        head = f"{kind} {name!r} is invalid" if name else f"{kind} is invalid"
        lines = "\n".join(f"  - {e}" for e in self.errors)
        super().__init__(f"{head} ({len(self.errors)} problem{'s' if len(self.errors) != 1 else ''}):\n{lines}")


class K8sModel(BaseModel):
    """Base for API types: snake_case in Python, camelCase on the wire, unknown fields rejected."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        validate_assignment=False,
        frozen=False,
    )

    def to_wire(self) -> dict[str, Any]:
        """The object as upstream serialises it: camelCase keys, unset optionals omitted."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


def scaled_value(value: IntOrString, total: int, round_up: bool) -> int:
    """apimachinery ``intstr.GetScaledValueFromIntOrPercent``: ints as is, percents of ``total``.

    Raises ValueError for a malformed percent (callers validate first).
    """
    if isinstance(value, bool):
        raise ValueError("invalid value")
    if isinstance(value, int):
        return value
    if not isinstance(value, str) or not PERCENT_RE.match(value):
        raise ValueError(PERCENT_MSG)
    pct = int(value[:-1])
    if round_up:
        return math.ceil(pct * total / 100)
    return (pct * total) // 100


def validate_int_or_percent(value: Any, path: str) -> list[FieldError]:
    """Upstream ``ValidatePositiveIntOrPercent`` + ``IsNotMoreThan100Percent``."""
    errs: list[FieldError] = []
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return [FieldError(path, "invalid value", value)]
    if isinstance(value, str):
        if not PERCENT_RE.match(value):
            errs.append(FieldError(path, PERCENT_MSG, value))
        elif int(value[:-1]) > 100:
            errs.append(FieldError(path, "must not be greater than 100%", value))
    elif value < 0:
        errs.append(FieldError(path, "must be greater than or equal to 0", value))
    return errs


DNS1035_RE = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
    "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)


def validate_dns1035(name: str, path: str) -> list[FieldError]:
    errs = []
    if len(name) > 63:
        errs.append(FieldError(path, "must be no more than 63 characters", name))
    if not DNS1035_RE.match(name):
        errs.append(FieldError(path, DNS1035_MSG, name))
    return errs
