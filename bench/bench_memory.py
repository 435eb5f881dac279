"""The memory floor of a render's output (issue 27): the same manifests with every identical
subtree shared.

A reconcile's peak is mostly its output (the manifests it returns). The least memory the same
output can take as Python dicts and lists is when every subtree that is equal in two places is
one object (hash-consing: equal dicts, lists and strings merged, bottom up); what remains is
what differs from group to group (names, labels, addresses and the containers holding them).
The floor is measured like the peak (tracemalloc), on a pickle round trip of the merged
manifests, so only their own structure counts. A target below it cannot be met by any renderer
returning the same objects.
"""

from __future__ import annotations

import json
import pickle
import tracemalloc
from collections.abc import Iterable, Mapping
from typing import Any


def _merged(value: Any, pool: dict[tuple[str, str], Any]) -> Any:
    if isinstance(value, dict):
        value = {k: _merged(v, pool) for k, v in value.items()}
        return pool.setdefault(("dict", json.dumps(value)), value)
    if isinstance(value, list):
        value = [_merged(v, pool) for v in value]
        return pool.setdefault(("list", json.dumps(value)), value)
    if isinstance(value, str):
        return pool.setdefault(("str", value), value)
    return value


def shared_floor_kib(manifests: Iterable[Mapping[str, Any]], groups: int) -> float:
    """KiB per group of ``manifests`` with every identical subtree shared (module doc)."""
    pool: dict[tuple[str, str], Any] = {}
    blob = pickle.dumps([_merged(dict(m), pool) for m in manifests])
    del pool
    tracemalloc.start()
    copy = pickle.loads(blob)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del copy
    return peak / groups / 1024
