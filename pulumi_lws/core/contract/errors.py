"""Field errors and the one exception type for invalid input.

Every user-facing error names the field path on the wire (camelCase, as upstream emits it) and
carries the upstream message where upstream has one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


def format_value(value: Any) -> str:
    """A value as Kubernetes prints it in ``Invalid value: ...`` (JSON-ish)."""
    try:
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


@dataclass(frozen=True)
class FieldError:
    """One validation problem: wire path, message, offending value and Kubernetes error kind.

    ``kind`` follows apimachinery's ``field.ErrorType``: ``Invalid`` prints
    ``path: Invalid value: <value>: <message>``; ``Forbidden`` prints ``path: Forbidden: <message>``;
    ``Required``, ``NotSupported`` and ``Unknown`` carry their whole text in ``message``.
    """

    path: str
    message: str
    value: Any = None
    kind: str = "Invalid"

    def __str__(self) -> str:
        if self.kind == "Forbidden":
            return f"{self.path}: Forbidden: {self.message}"
        if self.kind != "Invalid" or self.value is None:
            return f"{self.path}: {self.message}"
        return f"{self.path}: Invalid value: {format_value(self.value)}: {self.message}"


class SpecError(ValueError):
    """Invalid input. Raised before anything is rendered or registered; lists every problem."""

    def __init__(self, kind: str, name: str | None, errors: Iterable[FieldError]):
        self.kind = kind
        self.name = name
        self.errors: list[FieldError] = list(errors)
        head = f"{kind} {name!r} is invalid" if name else f"{kind} is invalid"
        lines = "\n".join(f"  - {e}" for e in self.errors)
        super().__init__(f"{head} ({len(self.errors)} problem{'s' if len(self.errors) != 1 else ''}):\n{lines}")
