"""``pulumi-lws plan --diff``: what the next ``pulumi up`` changes, object by object (kubectl-diff style).

The two sides are computed, never read from a cluster:

* **a/** (OLD): the objects OLD's converged fleet declares. OLD is rolled out on the embedded
  simulator to convergence (the scenario of ``simulate --from OLD --to NEW``, warm-up only:
  instant kubelet, nothing traced), then reconciled once more against that steady state.
* **b/** (NEW): the objects the next ``pulumi up`` registers for NEW: one reconcile of NEW
  against the same snapshot (:func:`pulumi_lws.lws.reconcile.reconcile`).

Both run on the cluster of ``simulate --from OLD --to NEW`` (one unbounded node, or the assumed
pool for exclusive placement: :mod:`pulumi_lws.sim.change`).

Invariants: both sides see the same snapshot, so every difference is caused by the edit; an
object is keyed by ``Kind/name`` (one LWS lives in one namespace); objects only in b/ are
created (``--- /dev/null``), objects only in a/ are deleted by that ``pulumi up``
(``+++ /dev/null``); each side is dumped as YAML with sorted keys, so key order never shows up
as a change. Pure apart from the in-memory simulator: no file is read or written.
"""
from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.observe import lws_scope
from pulumi_lws.lws.reconcile import ReconcileOptions, reconcile

NULL = "/dev/null"
DEFAULTS = ReconcileOptions()


@dataclass(frozen=True)
class ObjectDiff:
    """One object's unified diff (``text``), keyed ``Kind/name``; ``change`` is created|deleted|changed."""

    key: str
    change: str
    text: str


def object_key(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{obj.get('kind', '?')}/{meta.get('name', '?')}"


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def dump(obj: Mapping[str, Any] | None) -> list[str]:
    """The lines of ``obj`` as YAML with sorted keys (no lines for None: /dev/null)."""
    if obj is None:
        return []
    return yaml.safe_dump(_plain(obj), sort_keys=True, default_flow_style=False).splitlines(keepends=True)


def object_diffs(old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]], context: int = 3) -> list[ObjectDiff]:
    """Per-object unified diffs of two object lists: NEW's order first, then OLD's deleted objects."""
    before = {object_key(o): o for o in old}
    after = {object_key(o): o for o in new}
    out = []
    for key in list(after) + [k for k in before if k not in after]:
        a, b = before.get(key), after.get(key)
        lines = list(difflib.unified_diff(dump(a), dump(b), fromfile=f"a/{key}" if a is not None else NULL,
                                          tofile=f"b/{key}" if b is not None else NULL, n=context))
        if lines:
            change = "created" if a is None else "deleted" if b is None else "changed"
            out.append(ObjectDiff(key, change, "".join(x if x.endswith("\n") else x + "\n" for x in lines)))
    return out


def steady_objects(old: Mapping[str, Any], new: Mapping[str, Any],
                   options: ReconcileOptions = DEFAULTS) -> tuple[tuple[Mapping[str, Any], ...], tuple[Mapping[str, Any], ...]]:
    """``(a, b)``: OLD's converged objects and the objects of NEW's next reconcile (module doc).

    Runs on the cluster ``simulate --from OLD --to NEW`` uses (:func:`pulumi_lws.sim.change.change_scenario`).
    Raises :class:`~pulumi_lws.sim.timeline.WarmUpBlocked` naming the blocker when OLD never
    converges there (no steady state to diff against)."""
    from pulumi_lws.sim.change import change_scenario
    from pulumi_lws.sim.timeline import TimelineRunner

    scenario = change_scenario(old, new).scenario
    runner = TimelineRunner(scenario, "pure")
    try:
        for obj in scenario.objects:
            runner.cluster.create(obj)
        runner.warm_up()
        old_lws = LeaderWorkerSet.from_manifest(dict(old))
        new_lws = LeaderWorkerSet.from_manifest(dict(new))
        nodes = bool(runner.cluster.store.list("Node"))  # as the pure engine observes
        snapshot = runner.cluster.observe(lws_scope(new_lws.namespace, new_lws.name, nodes=nodes))
        return (reconcile(old_lws, snapshot, DEFAULTS).manifests,
                reconcile(new_lws, snapshot, options).manifests)
    finally:
        runner.close()


def plan_diff(old: Mapping[str, Any], new: Mapping[str, Any], options: ReconcileOptions = DEFAULTS) -> list[ObjectDiff]:
    """The diffs of the next ``pulumi up`` of NEW over OLD's converged fleet (empty: nothing changes)."""
    return object_diffs(*steady_objects(old, new, options))
