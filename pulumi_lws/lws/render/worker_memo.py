"""The Ordinal worker StatefulSets of one render, reusing those the previous render of the same
LeaderWorkerSet built from the same inputs (a memo; output unchanged).

A reconcile renders every group's worker StatefulSet (:func:`~pulumi_lws.lws.render.ordinal.worker_statefulset`),
and between two reconciles of a rollout almost none changes: only the groups the stage moves to
another revision (or another topology domain). The memo keeps, per LeaderWorkerSet
``(namespace, name)``, the worker StatefulSets its last render returned, keyed by

* the **context**: everything ``worker_statefulset`` reads of the live LWS and of the group's
  revision besides the group — the live LWS's name, namespace, metadata labels and annotations
  (which also decide the per-pod values mode), the revision's whole ``leaderWorkerTemplate`` and
  ``networkConfig`` (their ``repr``: equal reprs of these plain-data models mean equal values),
  the revision key and the revision's TPU requests;
* the group's **ordinal** and its **topology domain**;

and hands back the very dict when all three are equal. Invariants:

* the result equals, element for element, what calling ``worker_statefulset`` for every group
  returns (tests/lws/render/test_worker_memo.py);
* a reused manifest is shared with the previous render's result: rendered manifests are
  read-only for every consumer (the simulator's apply, ``with_gang_scheduling`` and
  ``with_failure_state`` copy on write; the CLI and the components serialise them);
* memory: per LWS only what its last render returned (alive anyway while applied), for at most
  :data:`LIMIT` LeaderWorkerSets (the least recently rendered dropped first).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Mapping
from typing import Any

from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet

#: LeaderWorkerSets whose last render is remembered (a DisaggregatedSet has one per child)
LIMIT = 64

Entries = dict[Hashable, dict[int, tuple[str | None, dict[str, Any]]]]
_last: dict[tuple[str, str], Entries] = {}


def context(live: LeaderWorkerSet, at: LeaderWorkerSet, key: str, tpus: tuple[bool, bool]) -> Hashable:
    """What the worker StatefulSet of any group on revision ``key`` (``at``) reads besides the
    group's ordinal and domain (module docstring)."""
    return (
        live.name,
        live.namespace,
        repr(live.metadata.labels),
        repr(live.metadata.annotations),
        repr(at.spec.leader_worker_template),
        repr(at.spec.network_config),
        key,
        tpus,
    )


def worker_statefulsets(
    live: LeaderWorkerSet,
    group_lws: Mapping[int, LeaderWorkerSet],
    keys: Mapping[int, str],
    domains: Mapping[int, str],
    tpus: Mapping[str, tuple[bool, bool]],
    worker_groups: Collection[int] | None,
    worker_statefulset: Callable[..., dict[str, Any]],
) -> list[dict[str, Any]]:
    """``worker_statefulset(live, at, i, keys[i], domains.get(i), tpus=tpus[keys[i]])`` for every
    group ``i`` of ``group_lws`` (in its order) whose revision's size is above 1 and that
    ``worker_groups`` admits (None: all), each reused from the previous render when its inputs
    are the same (module docstring). ``worker_statefulset``: render/ordinal.py's, passed in (that
    module imports this one)."""
    ident = (live.namespace, live.name)
    previous = _last.pop(ident, None) or {}
    kept: Entries = {}
    contexts: dict[str, Hashable] = {}
    out: list[dict[str, Any]] = []
    for i, at in group_lws.items():
        if at.size <= 1 or (worker_groups is not None and i not in worker_groups):
            continue
        key = keys[i]
        ctx = contexts.get(key)
        if ctx is None:
            ctx = contexts[key] = context(live, at, key, tpus[key])
        domain = domains.get(i)
        hit = previous.get(ctx, {}).get(i)
        manifest = hit[1] if hit is not None and hit[0] == domain else None
        if manifest is None:
            manifest = worker_statefulset(live, at, i, key, domain, tpus=tpus[key])
        kept.setdefault(ctx, {})[i] = (domain, manifest)
        out.append(manifest)
    _last[ident] = kept
    while len(_last) > LIMIT:
        del _last[next(iter(_last))]
    return out


def clear() -> None:
    """Forget every remembered render (tests compare against renders without the memo)."""
    _last.clear()
