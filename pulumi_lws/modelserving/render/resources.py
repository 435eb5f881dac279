"""Exact Kubernetes quantity sums for Volcano ``minResources`` (``resource.Quantity.Add``).

Invariants: arithmetic is exact (``Decimal``); a sum is written with the largest binary suffix
that divides it exactly when any term used a binary suffix (``1Gi + 512Mi = 1536Mi``), else as an
integer, else in milli units rounded up (``500m + 1 = 1500m``). An unparsable quantity raises
``ValueError`` naming it (validation rejects those before rendering).

Note: the LWS renderer has the same arithmetic (``lws/render/scheduling.py``); API packages may
not import each other, so this belongs in ``core`` once both can move there.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

_QUANTITY = re.compile(r"^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$")
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": Decimal(1), "k": Decimal("1e3"),
            "M": Decimal("1e6"), "G": Decimal("1e9"), "T": Decimal("1e12"), "P": Decimal("1e15"), "E": Decimal("1e18")}

Amount = tuple[Decimal, bool]  # (exact value, a binary suffix was used)


def parse(value: Any) -> Amount:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return Decimal(str(value)), False
    m = _QUANTITY.match(str(value).strip())
    if not m or (m.group(2) not in _BINARY and m.group(2) not in _DECIMAL):
        raise ValueError(f"invalid quantity {value!r}")
    number, suffix = Decimal(m.group(1)), m.group(2)
    return (number * _BINARY[suffix], True) if suffix in _BINARY else (number * _DECIMAL[suffix], False)


def format_amount(value: Decimal, binary: bool) -> str:
    if binary and value == value.to_integral_value() and value > 0:
        for suffix, factor in sorted(_BINARY.items(), key=lambda kv: -kv[1]):
            if value % factor == 0:
                return f"{int(value // factor)}{suffix}"
    if value == value.to_integral_value():
        return str(int(value))
    return f"{int((value * 1000).to_integral_value(rounding='ROUND_CEILING'))}m"


def container_requests(template: Mapping[str, Any] | None) -> dict[str, Amount]:
    """Σ ``resources.requests`` over a pod template's ``containers`` (upstream's PodGroup sum)."""
    total: dict[str, Amount] = {}
    for c in ((template or {}).get("spec") or {}).get("containers") or []:
        for name, q in (((c.get("resources") or {}).get("requests")) or {}).items():
            v, b = parse(q)
            old = total.get(name, (Decimal(0), False))
            total[name] = (old[0] + v, old[1] or b)
    return total


def sum_requests(parts: Iterable[tuple[Mapping[str, Any] | None, int]]) -> dict[str, str]:
    """Σ ``count`` x container_requests(template) over ``parts``, canonical strings, sorted by name."""
    total: dict[str, Amount] = {}
    for template, count in parts:
        if count <= 0:
            continue
        for name, (v, b) in container_requests(template).items():
            old = total.get(name, (Decimal(0), False))
            total[name] = (old[0] + v * count, old[1] or b)
    return {name: format_amount(v, b) for name, (v, b) in sorted(total.items())}
