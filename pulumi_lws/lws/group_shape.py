"""Facts about a group's pods that planners and renderers both need: subgroup membership and
TPU requests (upstream ``getSubGroupIndex``, ``PodRequestsTPUs``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TPU_RESOURCE = "google.com/tpu"


def _positive_quantity(value: Any) -> bool:
    text = str(value).strip()
    return bool(text) and text.lstrip("0.") != "" and not text.startswith("-")


def container_requests_tpus(container: Mapping[str, Any]) -> bool:
    res = container.get("resources") or {}
    return any(_positive_quantity((res.get(kind) or {}).get(TPU_RESOURCE, "0")) for kind in ("limits", "requests"))


def requests_tpus(pod_spec: Mapping[str, Any]) -> bool:
    """Upstream ``PodRequestsTPUs``: some container requests or limits ``google.com/tpu``."""
    return any(container_requests_tpus(c) for c in pod_spec.get("containers") or [])


def subgroup_index(size: int, subgroup_size: int, worker_index: int) -> int:
    """Upstream ``getSubGroupIndex``: the subgroup of worker ``worker_index`` (leader = 0)."""
    if (size - 1) % subgroup_size == 0 and size % subgroup_size != 0:
        return (worker_index - 1) // subgroup_size
    return worker_index // subgroup_size


def static_worker_subgroup(size: int, subgroup_size: int) -> int | None:
    """The subgroup index shared by ALL workers 1..size-1, or None when it varies per worker
    (then it cannot be written into one StatefulSet template)."""
    indices = {subgroup_index(size, subgroup_size, w) for w in range(1, size)}
    return indices.pop() if len(indices) == 1 else None
