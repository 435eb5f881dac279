"""Stable hashing: canonical JSON, FNV-32a and apimachinery's SafeEncodeString alphabet.

The same value gives the same key in every process (any ``PYTHONHASHSEED``), for any dict key
order and in every Python version.

FNV-32a is ``fnv_hash_fast.fnv1a_32`` (C; the package falls back to pure Python itself where its
extension cannot load): a fleet's templates are hashed by every reconcile that renders them and
by the simulated StatefulSet controller, ~3 KB each, ~1 ms apiece in a Python loop, ~3 µs in C.
:func:`fnv32a_reference` is the algorithm written out, which tests hold it to.
"""

from __future__ import annotations

import json
from typing import Any

from fnv_hash_fast import fnv1a_32

from pulumi_lws.core.k8s.model import ints_back

_SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def safe_encode(s: str) -> str:
    """apimachinery ``rand.SafeEncodeString``: map each byte onto a vowel-free alphabet."""
    return "".join(_SAFE_ALPHABET[b % len(_SAFE_ALPHABET)] for b in s.encode())


def fnv32a(data: bytes) -> int:
    """FNV-1a, 32 bits (Go's ``hash/fnv.New32a``)."""
    return fnv1a_32(data)


def fnv32a_reference(data: bytes) -> int:
    """:func:`fnv32a` written out: offset basis, then per byte XOR and multiply by the FNV prime."""
    h = 0x811C9DC5
    for b in data:
        h ^= b
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def stable_key(value: Any) -> str:
    """SafeEncodeString of the decimal FNV-32a of ``value``'s canonical JSON: the key upstream
    derives its revision names from (LWS and ModelServing revisions, a StatefulSet's template)."""
    return safe_encode(str(fnv32a(canonical_json(value).encode())))


def canonical_json(obj: Any) -> str:
    """Sorted keys, no whitespace, UTF-8 as is, integral floats as ints: one text per value."""
    plain = obj if _json_without_floats(obj) else ints_back(obj)
    return json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


_SCALARS = frozenset({str, int, bool, type(None)})


def _json_without_floats(value: Any) -> bool:
    """Whether ``value`` is only dicts, lists, tuples, strings, ints, bools and None, which
    ``json.dumps`` writes exactly as it writes ``ints_back(value)``: then the copy ``ints_back``
    makes is skipped (a template hash per StatefulSet and per revision, every reconcile). A float
    anywhere, or any other type (a read-only mapping), answers False: ``ints_back`` normalises it."""
    kind = type(value)
    if kind is dict:
        value = value.values()
    elif kind is not list and kind is not tuple:
        return kind in _SCALARS
    for v in value:  # a loop, not all(<generator>): this runs once per template and node
        if type(v) not in _SCALARS and not _json_without_floats(v):
            return False
    return True
