"""The StatefulSet controller's template hash, FNV-32a computed a comma-separated piece at a time.

``TemplateHasher().hash(t) == template_hash(t)`` for every template: the same FNV-32a of the same
canonical JSON (:mod:`pulumi_lws.core.k8s.hashing`), only faster when many templates share their
pieces, as a fleet's do (thousands of StatefulSets whose templates differ in a few labels).

Why it is exact: one FNV-32a step is ``h -> ((h ^ b) * P) mod 2**32`` and the XOR touches only
the low byte, so for any state ``h`` and bytes ``B``
``fnv(h, B) = ((h & ~0xFF) * P**len(B) + fnv(h & 0xFF, B)) mod 2**32`` (the high part only gets
multiplied; a multiple of 256 stays one). ``fnv(r, B)`` for the 256 low bytes ``r`` is all a piece
needs, and it is memoised per ``(r, piece)``: at 1,000 groups most pieces of a template were met
before with the same low byte. tests/sim/cluster/test_template_hash.py checks it against
``fnv32a`` (hypothesis).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_lws.core.k8s.hashing import canonical_json, fnv32a, safe_encode

_BASIS = 0x811C9DC5
_PRIME = 0x01000193
_MASK = 0xFFFFFFFF
_HIGH = 0xFFFFFF00
_COMMA = ord(",")


def template_hash(template: Mapping[str, Any]) -> str:
    """``<hash>`` of ``<sts>-<hash>``: SafeEncodeString of FNV-32a of the canonical JSON."""
    return safe_encode(str(fnv32a(canonical_json(template).encode())))


class TemplateHasher:
    """:func:`template_hash` with a bounded memo of pieces (one per controller: it lives and dies
    with its simulated cluster, never process-wide)."""

    #: pieces remembered at most (then forgotten all at once): ~10 MiB
    LIMIT = 1 << 16

    def __init__(self) -> None:
        self._memo: dict[tuple[int, bytes], int] = {}  # (low byte, piece) -> fnv(low byte, piece + b",")
        self._powers: list[int] = [1]  # P**n mod 2**32

    def hash(self, template: Mapping[str, Any]) -> str:
        return safe_encode(str(self.fnv32a(canonical_json(template).encode())))

    def fnv32a(self, data: bytes) -> int:
        """``fnv32a(data)``, every comma-terminated piece of ``data`` from the memo when it can."""
        pieces = data.split(b",")
        tail = pieces.pop()
        memo, powers = self._memo, self._powers
        if len(memo) > self.LIMIT:
            memo.clear()
        h = _BASIS
        for piece in pieces:
            key = (h & 0xFF, piece)
            low = memo.get(key)
            if low is None:
                low = key[0]
                for b in piece:
                    low = ((low ^ b) * _PRIME) & _MASK
                low = ((low ^ _COMMA) * _PRIME) & _MASK
                memo[key] = low
            n = len(piece) + 1
            while len(powers) <= n:
                powers.append((powers[-1] * _PRIME) & _MASK)
            h = ((h & _HIGH) * powers[n] + low) & _MASK
        for b in tail:
            h = ((h ^ b) * _PRIME) & _MASK
        return h
