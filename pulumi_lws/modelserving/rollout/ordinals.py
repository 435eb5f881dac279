"""upstream ``forEachMissingOrdinal`` (model_serving_controller.go l.478)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator


def for_each_missing_ordinal(expected_count: int, existing: Iterable[int], limit: int) -> Iterator[int]:
    """The missing ordinals of ``[0, expected_count)``, ascending, at most ``limit`` of them.

    ``existing`` may be unsorted, duplicated or out of range (ignored). Lazy: never materialises
    the range (upstream calls it with ``expected_count = 2147483647``).
    """
    if limit <= 0 or expected_count <= 0:
        return
    present = {o for o in existing if 0 <= o < expected_count}
    visited = 0
    o = 0
    while o < expected_count and visited < limit:
        if o not in present:
            yield o
            visited += 1
        o += 1


def missing_ordinals(expected_count: int, existing: Iterable[int], limit: int) -> tuple[int, ...]:
    return tuple(for_each_missing_ordinal(expected_count, existing, limit))
