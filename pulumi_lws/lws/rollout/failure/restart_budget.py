"""Group restart budget (``maxGroupRestarts``) and restart backoff (``restartBackoff``), pure.

Storage (docs/failure-handling.md "Where the counts live"): upstream keeps
``leaderworkerset.sigs.k8s.io/group-restart-counts`` (JSON ``{"<rev>/<group>": n}``) on the LWS
object; pulumi-lws has no LWS object in the cluster, so the counts live on the **leader
controller**: the StatefulSet ``<lws>`` (Ordinal, ``<group>`` = ordinal) or the Deployment
``<lws>`` (Hash, ``<group>`` = group key). A recreation writes the new value with an
``annotate`` action (before the leader delete in the same action list, so a crash never loses a
consumed restart) AND the rendered leader controller carries the same value
(``failure.with_failure_state`` / ``failure_hash.with_hash_failure_state``), so the
``pulumi up`` that follows never reverts it.

Invariants:
* a count is consumed only when a recreation is initiated (never by exhaustion or a deferral);
* counts are per (revision, group): a group rolled to a new revision starts with a fresh budget;
  keys of (revision, group) pairs no observed or planned group uses any more are pruned;
* ``dump_counts(parse_counts(s)) == s`` for every value this module writes (sorted, compact),
  so re-rendering an unchanged count never produces a diff;
* backoff ``min(base * 2**count, cap)`` is measured from the leader pod's creationTimestamp.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from pulumi_lws.core.contract.snapshot import Snapshot, annotations_of
from pulumi_lws.core.k8s.timestamps import parse_timestamp
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet


def count_key(revision: str | None, group: str) -> str:
    """``"<rev>/<group>"`` as in upstream's annotation."""
    return f"{revision or ''}/{group}"


def parse_counts(raw: str | None) -> dict[str, int]:
    """The annotation value as a dict; malformed values and entries are ignored (never raise)."""
    if not raw:
        return {}
    try:
        data = json.loads(raw)
    except (TypeError, ValueError):
        return {}
    if not isinstance(data, Mapping):
        return {}
    out: dict[str, int] = {}
    for k, v in data.items():
        if isinstance(v, (int, float)) and not isinstance(v, bool) and int(v) > 0:
            out[str(k)] = int(v)
    return out


def dump_counts(counts: Mapping[str, int]) -> str:
    """Canonical JSON (sorted keys, no spaces, zero counts dropped)."""
    return json.dumps({k: int(v) for k, v in sorted(counts.items()) if int(v) > 0}, separators=(",", ":"))


def observed_counts_raw(lws: LeaderWorkerSet, snapshot: Snapshot) -> str | None:
    """The annotation as observed on the leader StatefulSet (None when absent)."""
    sts = snapshot.get("StatefulSet", lws.name)
    return None if sts is None else annotations_of(sts).get(L.GROUP_RESTART_COUNTS)


def tracks_counts(lws: LeaderWorkerSet) -> bool:
    """Counts are kept only when a feature reads them (maxGroupRestarts or restartBackoff)."""
    lwt = lws.spec.leader_worker_template
    return lwt.max_group_restarts is not None or lwt.restart_backoff is not None


def prune_counts(counts: Mapping[str, int], live_keys: Iterable[str]) -> dict[str, int]:
    """Keep only the entries of (revision, group) pairs still in use."""
    keep = set(live_keys)
    return {k: v for k, v in counts.items() if k in keep}


def budget_exhausted(lws: LeaderWorkerSet, count: int) -> bool:
    """True when one more recreation would exceed ``maxGroupRestarts`` (unset: never)."""
    limit = lws.spec.leader_worker_template.max_group_restarts
    return limit is not None and count >= int(limit)


def backoff_delay(lws: LeaderWorkerSet, count: int) -> float:
    """``min(base * 2**count, cap)`` seconds; 0 without ``restartBackoff``."""
    rb = lws.spec.leader_worker_template.restart_backoff
    if rb is None:
        return 0.0
    return float(min(int(rb.base_seconds) * (2 ** max(0, count)), int(rb.cap_seconds)))


def created_at(obj: Mapping[str, Any] | None) -> float | None:
    return None if obj is None else parse_timestamp((obj.get("metadata") or {}).get("creationTimestamp"))


def backoff_remaining(lws: LeaderWorkerSet, count: int, leader: Mapping[str, Any], now: float) -> float:
    """Seconds until the group is old enough to be recreated (0 = now). Unknown age: no wait."""
    delay = backoff_delay(lws, count)
    born = created_at(leader)
    if delay <= 0 or born is None:
        return 0.0
    return max(0.0, born + delay - now)
