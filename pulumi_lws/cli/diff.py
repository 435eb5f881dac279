"""``pulumi-lws plan --diff``: what the next ``pulumi up`` changes, object by object (kubectl-diff style).

The two sides are computed, never read from a cluster:

* **a/** (OLD): the objects OLD's converged fleet declares. OLD is rolled out on the embedded
  simulator to convergence (the scenario of ``simulate --from OLD --to NEW``, warm-up only:
  instant kubelet, nothing traced), then reconciled once more against that steady state.
* **b/** (NEW): the objects the next ``pulumi up`` registers for NEW: one reconcile of NEW
  against the same snapshot (``workload.reconcile``: the manifest's API from the registry, so
  LeaderWorkerSet and ModelServing alike).

Both run on the cluster of ``simulate --from OLD --to NEW`` (one unbounded node, or the assumed
pool for exclusive placement: :mod:`pulumi_lws.sim.driver.change`).

Invariants: both sides see the same snapshot, so every difference is caused by the edit; an
object is keyed by ``Kind/name`` (one workload lives in one namespace); objects only in b/ are
created (``--- /dev/null``), objects only in a/ are deleted by that ``pulumi up``
(``+++ /dev/null``); each side is dumped as YAML with sorted keys, so key order never shows up
as a change. Pure apart from the in-memory simulator: no file is read or written.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pulumi_lws.core.k8s.yamlio import dump_document
from pulumi_lws.workloads import workload_of

NULL = "/dev/null"


@dataclass(frozen=True)
class ObjectDiff:
    """One object's unified diff (``text``), keyed ``Kind/name``; ``change`` is created|deleted|changed."""

    key: str
    change: str
    text: str


def object_key(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{obj.get('kind', '?')}/{meta.get('name', '?')}"


def dump(obj: Mapping[str, Any] | None) -> list[str]:
    """The lines of ``obj`` as YAML with sorted keys (no lines for None: /dev/null)."""
    if obj is None:
        return []
    return dump_document(obj, sort_keys=True, text_keys=True).splitlines(keepends=True)


def object_diffs(
    old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]], context: int = 3
) -> list[ObjectDiff]:
    """Per-object unified diffs of two object lists: NEW's order first, then OLD's deleted objects."""
    before = {object_key(o): o for o in old}
    after = {object_key(o): o for o in new}
    out = []
    for key in list(after) + [k for k in before if k not in after]:
        a, b = before.get(key), after.get(key)
        lines = list(
            difflib.unified_diff(
                dump(a),
                dump(b),
                fromfile=f"a/{key}" if a is not None else NULL,
                tofile=f"b/{key}" if b is not None else NULL,
                n=context,
            )
        )
        if lines:
            change = "created" if a is None else "deleted" if b is None else "changed"
            out.append(ObjectDiff(key, change, "".join(x if x.endswith("\n") else x + "\n" for x in lines)))
    return out


def steady_objects(
    old: Mapping[str, Any], new: Mapping[str, Any], choices: Mapping[str, Any] | None = None
) -> tuple[tuple[Mapping[str, Any], ...], tuple[Mapping[str, Any], ...]]:
    """``(a, b)``: OLD's converged objects and the objects of NEW's next reconcile (module doc).

    ``choices``: the shell's reconcile choices for NEW (``update_order``, ...: ``workload.options``;
    OLD is reconciled with the defaults). Runs on the cluster ``simulate --from OLD --to NEW``
    uses (:func:`pulumi_lws.sim.driver.change.converged_snapshot`). Raises
    :class:`~pulumi_lws.sim.driver.timeline.WarmUpBlocked` naming the blocker when OLD never converges
    there (no steady state to diff against)."""
    from pulumi_lws.sim.driver.change import converged_snapshot

    workload = workload_of(new)
    if workload is None:
        raise ValueError(f"not a workload this project models: kind {new.get('kind')!r}")
    snapshot = converged_snapshot(old, new)
    old_spec, new_spec = workload.parse(dict(old)), workload.parse(dict(new))
    return (
        workload.reconcile(old_spec, snapshot, workload.options()).manifests,
        workload.reconcile(new_spec, snapshot, workload.options(**dict(choices or {}))).manifests,
    )


def plan_diff(
    old: Mapping[str, Any], new: Mapping[str, Any], choices: Mapping[str, Any] | None = None
) -> list[ObjectDiff]:
    """The diffs of the next ``pulumi up`` of NEW over OLD's converged fleet (empty: nothing changes)."""
    return object_diffs(*steady_objects(old, new, choices))
