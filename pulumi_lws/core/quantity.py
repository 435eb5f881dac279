"""Exact Kubernetes quantity arithmetic (``resource.Quantity``: parse, add, canonical text).

Used for gang-scheduling ``minResources`` sums (LWS Volcano PodGroups, ModelServing PodGroups).

Invariants: arithmetic is exact (``Decimal``); a sum is written with the largest binary suffix
that divides it exactly when any term used a binary suffix (``1Gi + 512Mi = 1536Mi``), else as an
integer, else in milli units rounded up (``500m + 1 = 1500m``, as Kubernetes rounds sub-milli
precision). An unparsable quantity raises ``ValueError`` naming it (validation rejects those
before rendering).
"""
from __future__ import annotations

import re
from decimal import Decimal
from typing import Any, Iterable, Mapping

_QUANTITY = re.compile(r"^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$")
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": Decimal(1), "k": Decimal("1e3"),
            "M": Decimal("1e6"), "G": Decimal("1e9"), "T": Decimal("1e12"), "P": Decimal("1e15"), "E": Decimal("1e18")}

#: An exact amount and whether a binary suffix was used (for the canonical text of a sum).
Amount = tuple[Decimal, bool]


def parse_quantity(value: Any) -> Amount:
    """A Kubernetes quantity ("500m", "4Gi", "8", "1e3") -> (exact value, uses a binary suffix)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return Decimal(str(value)), False
    m = _QUANTITY.match(str(value).strip())
    if not m or (m.group(2) not in _BINARY and m.group(2) not in _DECIMAL):
        raise ValueError(f"invalid quantity {value!r}")
    number, suffix = Decimal(m.group(1)), m.group(2)
    return (number * _BINARY[suffix], True) if suffix in _BINARY else (number * _DECIMAL[suffix], False)


def format_quantity(value: Decimal, binary: bool) -> str:
    """Canonical text: the largest exact binary suffix (binary inputs), else an integer, else milli
    (rounded up)."""
    if binary and value == value.to_integral_value() and value > 0:
        for suffix, factor in sorted(_BINARY.items(), key=lambda kv: -kv[1]):
            if value % factor == 0:
                return f"{int(value // factor)}{suffix}"
    if value == value.to_integral_value():
        return str(int(value))
    milli = (value * 1000).to_integral_value(rounding="ROUND_CEILING")
    return f"{int(milli)}m"


def add_amounts(total: dict[str, Amount], amounts: Mapping[str, Amount], times: int = 1) -> None:
    """``total += times * amounts`` per resource name (in place)."""
    for name, (v, b) in amounts.items():
        old = total.get(name, (Decimal(0), False))
        total[name] = (old[0] + v * times, old[1] or b)


def sum_quantities(parts: Iterable[tuple[Mapping[str, Amount], int]]) -> dict[str, str]:
    """Σ ``count`` x amounts over ``parts`` as canonical quantity strings, sorted by resource name."""
    total: dict[str, Amount] = {}
    for amounts, count in parts:
        if count > 0:
            add_amounts(total, amounts, count)
    return {name: format_quantity(v, b) for name, (v, b) in sorted(total.items())}
