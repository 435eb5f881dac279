"""Kubernetes quantities (``resource.Quantity``): the one parser (``resource.ParseQuantity``'s
grammar and error messages) and exact arithmetic (parse, add, canonical text).

Used by validation (:mod:`pulumi_lws.core.k8s.podspec` checks every quantity of a pod template with
:func:`quantity_error`) and by gang-scheduling ``minResources`` sums (LWS Volcano PodGroups,
ModelServing PodGroups), so whatever validation accepts, the arithmetic can add.

Invariants: arithmetic is exact to 100 significant digits (``Decimal``, a local context: any
quantity the API server stores fits); values are rounded up to ``1n`` as ``ParseQuantity`` rounds
(away from zero), binary-suffixed ones capped at 2^63-1 as it caps them; a sum is written with
the largest binary suffix that divides it exactly when any term used a binary suffix
(``1Gi + 512Mi = 1536Mi``), else as an integer, else in milli units rounded up
(``500m + 1 = 1500m``, as Kubernetes rounds sub-milli precision); a value beyond 10^30 is written
in exponent form (``12e40``), so writing it never builds a huge integer. An unparsable quantity
raises :class:`QuantityError` (a ``ValueError``) with apimachinery's message; validation rejects
those before rendering.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from decimal import ROUND_CEILING, ROUND_UP, Context, Decimal, localcontext
from typing import Any

#: ``resource.ErrFormatWrong`` / ``ErrSuffix`` (apimachinery ``pkg/api/resource``)
QUANTITY_FORMAT_MSG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
QUANTITY_SUFFIX_MSG = "unable to parse quantity's suffix"

#: ``parseQuantityString``: sign, digits, ``.digits``, then suffix letters and an optional signed
#: exponent; anything left over is ErrFormatWrong.
_SCAN = re.compile(r"^(?P<number>[+-]?[0-9]*(?:\.[0-9]*)?)(?P<suffix>[eEinumkKMGTP]*[-+]?[0-9]*)$")
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_EXPONENT = re.compile(r"^[eE](?P<exp>[+-]?[0-9]+)$")
_INT32 = 2**31
_MAX_BINARY = Decimal(2**63 - 1)
_NANO = Decimal("1e-9")
_EXACT = Context(prec=100, Emax=999_999_999_999, Emin=-999_999_999_999)
#: beyond this many integer digits a value is written in exponent form
_PLAIN_DIGITS = 30

#: An exact amount and whether a binary suffix was used (for the canonical text of a sum).
Amount = tuple[Decimal, bool]


class QuantityError(ValueError):
    """A value ``resource.ParseQuantity`` rejects; ``reason`` is apimachinery's message."""

    def __init__(self, value: Any, reason: str):
        self.value, self.reason = value, reason
        super().__init__(f"invalid quantity {value!r}: {reason}")


def _scale(suffix: str) -> tuple[int, int] | None:
    """(base, exponent) of a suffix as ``quantitySuffixer.interpret`` reads it, or None."""
    if suffix in _DECIMAL:
        return 10, _DECIMAL[suffix]
    if suffix in _BINARY:
        return 2, _BINARY[suffix].bit_length() - 1
    m = _EXPONENT.match(suffix)
    if m and -_INT32 <= int(m["exp"]) < _INT32:
        return 10, int(m["exp"])
    return None


def parse_quantity(value: Any) -> Amount:
    """A Kubernetes quantity ("500m", "4Gi", "8", "1e3", a JSON number) -> (exact value, uses a
    binary suffix). Raises :class:`QuantityError` for anything ``resource.ParseQuantity`` rejects
    (and for a non-finite number, which JSON cannot carry)."""
    if isinstance(value, bool):
        raise QuantityError(value, QUANTITY_FORMAT_MSG)
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise QuantityError(value, QUANTITY_FORMAT_MSG)
        return _rounded(Decimal(str(value)), binary=False), False
    if not isinstance(value, str) or not value:
        raise QuantityError(value, QUANTITY_FORMAT_MSG)
    m = _SCAN.match(value)
    if m is None:
        raise QuantityError(value, QUANTITY_FORMAT_MSG)
    scale = _scale(m["suffix"])
    if scale is None:
        raise QuantityError(value, QUANTITY_SUFFIX_MSG)
    number = m["number"]
    if not number.lstrip("+-").replace(".", "").strip("0"):  # "0", "+", ".", "-0.0": ParseQuantity's 0
        return Decimal(0), scale[0] == 2
    base, exponent = scale
    with localcontext(_EXACT):
        amount = Decimal(number).scaleb(exponent) if base == 10 else Decimal(number) * (2**exponent)
    return _rounded(amount, binary=base == 2), base == 2


def _rounded(amount: Decimal, *, binary: bool) -> Decimal:
    """``ParseQuantity``: non-zero values rounded up (away from zero) to 1n; binary capped."""
    with localcontext(_EXACT):
        exponent = amount.as_tuple().exponent
        # below 1n: round up; a value of 90+ digits keeps its digits (1n is beyond the precision)
        if isinstance(exponent, int) and exponent < -9 and amount.adjusted() < 90:
            amount = amount.quantize(_NANO, rounding=ROUND_UP)
        if binary and abs(amount) > _MAX_BINARY:
            amount = _MAX_BINARY.copy_sign(amount)
        return amount


def quantity_error(value: Any) -> str | None:
    """``resource.ParseQuantity``'s error message for ``value``, or None when it parses."""
    try:
        parse_quantity(value)
    except QuantityError as exc:
        return exc.reason
    return None


def format_quantity(value: Decimal, binary: bool) -> str:
    """Canonical text: the largest exact binary suffix (binary inputs), else an integer, else milli
    (rounded up); beyond 10^30 the exponent form."""
    with localcontext(_EXACT):
        if value != 0 and value.adjusted() >= _PLAIN_DIGITS:
            sign, digits, exponent = value.normalize().as_tuple()
            return f"{'-' if sign else ''}{''.join(map(str, digits))}e{exponent}"
        if binary and value == value.to_integral_value() and value > 0:
            for suffix, factor in sorted(_BINARY.items(), key=lambda kv: -kv[1]):
                if value % factor == 0:
                    return f"{int(value // factor)}{suffix}"
        if value == value.to_integral_value():
            return str(int(value))
        milli = (value * 1000).to_integral_value(rounding=ROUND_CEILING)
        return f"{int(milli)}m"


def add_amounts(total: dict[str, Amount], amounts: Mapping[str, Amount], times: int = 1) -> None:
    """``total += times * amounts`` per resource name (in place)."""
    with localcontext(_EXACT):
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
