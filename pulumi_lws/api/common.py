"""Shared API plumbing: camelCase models, field errors, IntOrString scaling, pydantic errors.

Invariants:
* every user-facing error names the field path on the wire (camelCase, as upstream emits it)
  and carries the upstream message where upstream has one;
* an explicit ``null`` in the input means "unset" (as in Kubernetes JSON), so the field's
  default applies;
* percent scaling is exact integer arithmetic (``ceil``/``floor`` of ``pct * total / 100``).
"""
from __future__ import annotations

import json
import re
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Iterable, Mapping, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError, model_validator
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

PERCENT_RE = re.compile(r"^[0-9]+%$")
PERCENT_MSG = (
    "a valid percent string must be a numeric string followed by an ending '%' "
    "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
)
_ATOI_RE = re.compile(r"^[+-]?[0-9]+$")


def _no_bool(kind: str):
    def check(v: Any) -> Any:
        if isinstance(v, bool):
            raise PydanticCustomError("k8s_type", "must be of type {type}", {"type": kind})
        return v
    return check


#: ``intstr.IntOrString``: an int or a string (percent strings are checked by validation).
IntOrString = Annotated[Union[int, str], BeforeValidator(_no_bool("integer or string"))]
#: An int field that rejects booleans (pydantic would otherwise read ``true`` as 1).
K8sInt = Annotated[int, BeforeValidator(_no_bool("integer"))]


def ints_back(value: Any) -> Any:
    """Integral floats -> int, recursively (Pulumi delivers every number as a float); bools stay
    bools. Also the normalisation :func:`pulumi_lws.revision.canonical_json` hashes, so it is on a
    hot path: scalars return first and plain dicts are checked before the slower ``Mapping``."""
    if isinstance(value, (str, int)):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, (list, tuple)):
        return [ints_back(v) for v in value]
    if isinstance(value, (dict, Mapping)):
        return {k: ints_back(v) for k, v in value.items()}
    return value


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


class K8sModel(BaseModel):
    """Base for API types: snake_case in Python, camelCase on the wire, unknown fields rejected."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        validate_assignment=False,
        frozen=False,
    )

    @model_validator(mode="before")
    @classmethod
    def _null_is_unset(cls, data: Any) -> Any:
        # Kubernetes JSON: `field: null` == field omitted, so the default applies.
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if v is not None}
        return data

    def to_wire(self) -> dict[str, Any]:
        """The object as upstream serialises it: camelCase keys, unset optionals omitted."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


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


# ---- pydantic errors -> FieldErrors ---------------------------------------------------------

_TYPE_NAMES = {"int": "integer", "string": "string", "bool": "boolean", "float": "number",
               "dict": "object", "model": "object", "list": "array"}


def _inner_model(annotation: Any) -> "tuple[str, Any]":
    """What a field holds: ('model', cls) | ('map', None) | ('list', None) | ('value', None)."""
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return _inner_model(typing.get_args(annotation)[0])
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "model", annotation
    if origin in (dict, typing.Mapping) or annotation is dict:
        return "map", None
    if origin in (list, tuple) or annotation is list:
        return "list", None
    if origin is Union or str(origin) == "types.UnionType":
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return _inner_model(args[0])
    return "value", None


def _is_tag(part: str) -> bool:
    """A pydantic union-branch / validator marker in an error location, not a field."""
    return part in ("int", "str", "bool", "float", "none") or "[" in part


def wire_path(loc: "tuple[Any, ...]", root: "type[BaseModel] | None") -> str:
    """The wire path of a pydantic error location, walking ``root``'s fields for aliases.

    Model fields become ``.camelCase``; map keys ``[key]``; list indexes ``[i]``.
    """
    out, state, model = "", ("model" if root else "value"), root
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
            state, model = "value", None
            continue
        s = str(part)
        if state == "model" and model is not None:
            match = next(((n, f) for n, f in model.model_fields.items() if s in (n, f.alias)), None)
            if match is None:
                if _is_tag(s):
                    continue
                out += ("." if out else "") + s  # unknown field, as the user spelled it
                state, model = "value", None
                continue
            name, info = match
            out += ("." if out else "") + (info.alias or to_camel(name))
            state, model = _inner_model(info.annotation)
        elif _is_tag(s):
            continue
        elif state == "map":
            out += f"[{s}]"
            state = "value"
        else:
            out += ("." if out else "") + s
    return out or "<root>"


def _supported(expected: str) -> str:
    values = re.findall(r"'((?:[^'\\]|\\.)*)'", expected)
    return ", ".join(json.dumps(v) for v in values)


def pydantic_field_errors(exc: ValidationError, root: "type[BaseModel] | None" = None) -> list[FieldError]:
    """Translate pydantic errors into wire-path FieldErrors with Kubernetes-style messages.

    Enum: ``Unsupported value: "X": supported values: "A", "B"`` (NotSupported); unknown field:
    ``unknown field "<path>"``; missing: ``Required value``; wrong type: ``must be of type
    <integer|string|object|array|boolean>`` (Invalid, with the value). One error per path+message
    (an IntOrString reports once, not once per union branch).
    """
    by_path: dict[str, list[dict[str, Any]]] = {}
    for err in exc.errors():
        by_path.setdefault(wire_path(err["loc"], root), []).append(err)
    errors: list[FieldError] = []
    for path, errs in by_path.items():
        types = {e["type"].split("_")[0] for e in errs if e["type"].endswith(("_type", "_parsing", "_from_float"))}
        if {"int", "string"} <= types:  # both union branches of an IntOrString failed
            errs = [{**errs[0], "type": "k8s_type", "msg": "must be of type integer or string"}]
        seen: set[str] = set()
        for err in errs:
            fe = _one_error(path, err)
            if fe.message not in seen:
                seen.add(fe.message)
                errors.append(fe)
    return errors


def _one_error(path: str, err: dict[str, Any]) -> FieldError:
    typ, value = err["type"], err.get("input")
    if typ == "literal_error":
        msg = f"Unsupported value: {format_value(value)}: supported values: {_supported(err.get('ctx', {}).get('expected', ''))}"
        return FieldError(path, msg, value, "NotSupported")
    if typ == "extra_forbidden":
        return FieldError(path, f'unknown field "{path}"', None, "Unknown")
    if typ == "missing":
        return FieldError(path, "Required value", None, "Required")
    if typ == "k8s_type":
        return FieldError(path, err["msg"], value)
    head = typ.split("_")[0]
    if head in _TYPE_NAMES and typ.endswith(("_type", "_parsing", "_from_float", "_attributes_type")):
        return FieldError(path, f"must be of type {_TYPE_NAMES[head]}", value)
    return FieldError(path, err["msg"], value)
