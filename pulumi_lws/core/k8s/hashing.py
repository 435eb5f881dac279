"""Stable hashing: canonical JSON, FNV-32a and apimachinery's SafeEncodeString alphabet.

The same value gives the same key in every process (any ``PYTHONHASHSEED``), for any dict key
order and in every Python version.
"""

from __future__ import annotations

import json
from typing import Any

from pulumi_lws.core.k8s.model import ints_back

_SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def safe_encode(s: str) -> str:
    """apimachinery ``rand.SafeEncodeString``: map each byte onto a vowel-free alphabet."""
    return "".join(_SAFE_ALPHABET[b % len(_SAFE_ALPHABET)] for b in s.encode())


def fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h ^= b
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def canonical_json(obj: Any) -> str:
    """Sorted keys, no whitespace, UTF-8 as is, integral floats as ints: one text per value."""
    return json.dumps(ints_back(obj), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
