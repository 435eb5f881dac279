"""core.quantity: the one quantity parser (``resource.ParseQuantity``'s grammar and messages) that
validation and the PodGroup ``minResources`` sums share, so whatever validation accepts adds up."""

from __future__ import annotations

import math
import time
from decimal import Decimal

import pytest

from pulumi_lws.core.k8s.quantity import (
    QUANTITY_FORMAT_MSG,
    QUANTITY_SUFFIX_MSG,
    QuantityError,
    parse_quantity,
    quantity_error,
    sum_quantities,
)


@pytest.mark.parametrize(
    "text,value",
    [
        ("+", 0),
        (".", 0),
        ("-0.0", 0),
        ("0Gi", 0),
        ("1.", 1),
        ("1.G", 10**9),
        (".5", Decimal("0.5")),
        ("+.5", Decimal("0.5")),
        ("1e3", 1000),
        ("1E-3", Decimal("0.001")),
        ("1Ki", 1024),
        ("1n", Decimal("1e-9")),
        ("0.1n", Decimal("1e-9")),
        ("-0.1n", Decimal("-1e-9")),  # rounded up to 1n, away from 0
        ("9Ei", 2**63 - 1),  # a binary value is capped at 2^63-1, as ParseQuantity caps it
    ],
)
def test_apimachinery_grammar_edges_parse(text: str, value) -> None:
    assert parse_quantity(text)[0] == value
    assert quantity_error(text) is None


@pytest.mark.parametrize(
    "value,message",
    [
        ("", QUANTITY_FORMAT_MSG),
        ("1 ", QUANTITY_FORMAT_MSG),
        ("-1%", QUANTITY_FORMAT_MSG),
        ("1K", QUANTITY_SUFFIX_MSG),
        ("1e99999999999", QUANTITY_SUFFIX_MSG),  # the exponent must fit an int32
        (math.inf, QUANTITY_FORMAT_MSG),
        (math.nan, QUANTITY_FORMAT_MSG),
        (True, QUANTITY_FORMAT_MSG),
        ([1], QUANTITY_FORMAT_MSG),
    ],
)
def test_what_parse_quantity_rejects_carries_its_message(value, message: str) -> None:
    with pytest.raises(QuantityError) as info:
        parse_quantity(value)
    assert info.value.reason == message and quantity_error(value) == message


def test_huge_and_tiny_values_sum_at_once_in_exponent_form() -> None:
    start = time.perf_counter()
    huge = sum_quantities([({"cpu": parse_quantity("1e999999999")}, 2**31 - 1)])
    tiny = sum_quantities([({"cpu": parse_quantity("1e-999999999")}, 3)])
    assert time.perf_counter() - start < 1.0
    assert huge == {"cpu": "2147483647e999999999"} and tiny == {"cpu": "1m"}  # 3n, written in milli units rounded up


def test_ordinary_sums_keep_their_canonical_text() -> None:
    assert sum_quantities([({"memory": parse_quantity("1Gi")}, 1), ({"memory": parse_quantity("512Mi")}, 1)]) == {
        "memory": "1536Mi"
    }
    assert sum_quantities([({"cpu": parse_quantity("500m")}, 3)]) == {"cpu": "1500m"}
