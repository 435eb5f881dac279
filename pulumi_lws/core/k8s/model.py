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
import math
import re
import typing
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError, model_validator
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from pulumi_lws.core.contract.errors import FieldError, format_value


def _no_bool(kind: str) -> Callable[[Any], Any]:
    def check(v: Any) -> Any:
        if isinstance(v, bool):
            raise PydanticCustomError("k8s_type", "must be of type {type}", {"type": kind})
        return v

    return check


INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def _integer_in(low: int, high: int) -> Callable[[Any], Any]:
    """An integer as the API server decodes a schema ``type: integer``: no booleans, no strings
    (pydantic's lax mode would read ``"3"`` as 3; the apiserver answers ``must be of type
    integer``), integral floats accepted (Pulumi delivers every number as a float), and the
    ``low..high`` range of the field's Go type."""

    def check(v: Any) -> Any:
        if isinstance(v, (bool, str)) or (isinstance(v, float) and not math.isfinite(v)):
            raise PydanticCustomError("k8s_type", "must be of type integer")
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        if isinstance(v, int):
            if v > high:
                raise PydanticCustomError("k8s_range", "less than or equal to {limit}", {"limit": high})
            if v < low:
                raise PydanticCustomError("k8s_range", "greater than or equal to {limit}", {"limit": low})
        return v

    return check


def _int_or_string(v: Any) -> Any:
    if isinstance(v, bool):
        raise PydanticCustomError("k8s_type", "must be of type integer or string")
    return v if isinstance(v, str) else _integer_in(INT32_MIN, INT32_MAX)(v)


#: ``intstr.IntOrString``: a string (percent strings are checked by validation) or an int32 (its
#: Go ``IntVal``), never a boolean.
IntOrString = Annotated[int | str, BeforeValidator(_int_or_string)]
#: A schema ``type: integer`` with ``format: int64`` (or no format: Go decodes it into an int64):
#: no booleans, no strings, the int64 range (``<path> in body should be less than or equal to
#: 9223372036854775807``).
K8sInt = Annotated[int, BeforeValidator(_integer_in(INT64_MIN, INT64_MAX))]
#: A schema ``type: integer, format: int32`` (an ``int32`` Go field): as :data:`K8sInt`, within
#: the int32 range. The apiserver does not enforce the format (it stores the object and the
#: controller then fails to decode it); pulumi-lws refuses the value up front, in the words of
#: the schema's ``maximum`` (``spec.replicas in body should be less than or equal to 2147483647``).
Int32 = Annotated[int, BeforeValidator(_integer_in(INT32_MIN, INT32_MAX))]


def ints_back(value: Any) -> Any:
    """Integral floats -> int, recursively (Pulumi delivers every number as a float); bools stay
    bools. Also the normalisation :func:`pulumi_lws.core.k8s.hashing.canonical_json` hashes, so it is on a
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


# ---- pydantic errors -> FieldErrors ---------------------------------------------------------

_TYPE_NAMES = {
    "int": "integer",
    "string": "string",
    "bool": "boolean",
    "float": "number",
    "dict": "object",
    "model": "object",
    "list": "array",
}


def _inner_model(annotation: Any) -> tuple[str, Any]:
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


def wire_path(loc: tuple[Any, ...], root: type[BaseModel] | None) -> str:
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


def pydantic_field_errors(exc: ValidationError, root: type[BaseModel] | None = None) -> list[FieldError]:
    """Translate pydantic errors into wire-path FieldErrors with Kubernetes-style messages.

    Enum: ``Unsupported value: "X": supported values: "A", "B"`` (NotSupported); unknown field:
    ``unknown field "<path>"``; missing: ``Required value``; wrong type: ``must be of type
    <integer|string|object|array|boolean>`` (Invalid, with the value). One error per path+message
    (an IntOrString reports once, not once per union branch).
    """
    by_path: dict[str, list[Any]] = {}  # pydantic ErrorDetails, some rewritten below
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
    if typ == "k8s_range":  # the apiserver's schema minimum/maximum message
        return FieldError(path, f"{path} in body should be {err['msg']}", value)
    head = typ.split("_")[0]
    if head in _TYPE_NAMES and typ.endswith(("_type", "_parsing", "_from_float", "_attributes_type")):
        return FieldError(path, f"must be of type {_TYPE_NAMES[head]}", value)
    return FieldError(path, err["msg"], value)
