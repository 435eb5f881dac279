"""Argument plumbing every workload component shares (pure: nothing is registered here).

Pulumi delivers numbers as floats and IntOrString fields from the provider as strings; component
arguments may be snake_case or camelCase; an unresolved ``pulumi.Output`` cannot be planned.
"""
from __future__ import annotations

import re
from typing import Any, Mapping

from pulumi_lws.core.errors import FieldError, SpecError


def snake(key: str) -> str:
    """``maxUnavailable`` -> ``max_unavailable`` (snake_case keys pass unchanged)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


def int_or_percent(value: Any) -> Any:
    """maxUnavailable/maxSurge from the provider arrive as ``str`` (no Unions): "2" -> 2, "50%" stays."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return value


def reject_outputs(value: Any, kind: str, path: str = "args") -> None:
    """The planner needs concrete values; an unresolved ``pulumi.Output`` cannot be planned."""
    if type(value).__name__ == "Output" and type(value).__module__.startswith("pulumi"):
        raise SpecError(kind, None, [FieldError(path, f"must be a plain value known when the program runs "
                                                      f"(the {kind} spec cannot depend on other resources' outputs)")])
    if isinstance(value, Mapping):
        for k, v in value.items():
            reject_outputs(v, kind, f"{path}.{k}")
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            reject_outputs(v, kind, f"{path}[{i}]")


def set_path(doc: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    node = doc
    for key in path[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = {}
            node[key] = child
        node = child
    node[path[-1]] = value
