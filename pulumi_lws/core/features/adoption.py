"""Adoption: operator-free mode taking over a fleet the upstream controller created (pure).

After ``kubectl delete <cr> --cascade=orphan`` (or with the controller uninstalled and the CR
still there) the native objects keep running. The reconcile adopts them without restarting a
group when the spec is unchanged (docs/modes.md, "Moving between modes"):

* revisions — each API's catalog treats the observed ControllerRevision whose *content* matches
  the spec as the target revision, whatever hash upstream computed its key with (LeaderWorkerSet:
  :func:`pulumi_lws.lws.revision.build_catalog`; ModelServing:
  :func:`pulumi_lws.modelserving.revision.build_catalog`), so the rendered pod templates keep
  upstream's revision labels and no StatefulSet or Deployment rolls;
* ownership — every observed object with an ownerReference to the API's upstream kinds
  (``UpstreamController.owner_kinds`` in ``UpstreamController.group``) gets a ``disown`` action
  (:func:`disown_actions`), guarded by its uid, so deleting the CR later (or the GC finding it
  gone) can never cascade into the adopted fleet. References to other owners (a worker
  StatefulSet's leader Pod) are kept. Labels are replaced by the ordinary apply: the rendered
  objects declare exactly pulumi-lws's labels.

Invariant: on a fleet pulumi-lws created itself (no upstream owner), :func:`disown_actions`
returns nothing, so an operator-free stage is unchanged by this module.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.core.contract.stage import Action
from pulumi_lws.core.contract.workload import UpstreamController

DISOWN_REASON = "adopt from the upstream controller: drop its ownerReference (pulumi-lws manages this object)"


def pruned(value: Any) -> Any:
    """``value`` without nulls, empty objects and empty lists, recursively: what Go's omitempty
    serialisation (``metadata: {creationTimestamp: null}``) and pulumi-lws's disagree on, never
    meaning. Two revisions' data are the same content when their pruned forms are equal (the
    role of upstream's ``SetMatchesRevision`` semantic comparison)."""
    if isinstance(value, Mapping):
        items = {k: pruned(v) for k, v in value.items()}
        return {k: v for k, v in items.items() if v not in (None, {}, [])}
    if isinstance(value, list):
        return [pruned(v) for v in value]
    return value


def upstream_owners(obj: Mapping[str, Any], upstream: UpstreamController) -> list[str]:
    """uids of ``obj``'s ownerReferences to one of ``upstream``'s kinds in its API group."""
    out = []
    kinds = upstream.owner_kinds
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        # the kind first (one lookup): most references (a pod's to its StatefulSet) stop there
        if ref.get("kind") in kinds and str(ref.get("apiVersion") or "").rpartition("/")[0] == upstream.group:
            if ref.get("uid"):
                out.append(str(ref["uid"]))
    return out


def disown_actions(
    snapshot: Snapshot | Iterable[Mapping[str, Any]], upstream: UpstreamController
) -> tuple[Action, ...]:
    """One ``disown`` action per observed object an upstream CR owns (sorted by kind, name)."""
    actions = []
    kinds = upstream.owner_kinds
    for obj in snapshot:
        meta = obj.get("metadata") or {}
        refs = meta.get("ownerReferences")
        # no reference of an upstream kind: upstream_owners is empty (the common case: a fleet
        # pulumi-lws created has none), read without the call; a malformed one still raises there
        if not refs:
            continue
        if type(refs) is list:
            for ref in refs:
                if type(ref) is not dict or ref.get("kind") in kinds:
                    break
            else:
                continue
        owners = upstream_owners(obj, upstream)
        if owners and obj.get("kind") != "Node" and not meta.get("deletionTimestamp"):
            actions.append(
                Action(
                    "disown",
                    str(obj["kind"]),
                    str(meta.get("name")),
                    {"owners": owners},
                    uid=meta.get("uid"),
                    reason=DISOWN_REASON,
                )
            )
    return tuple(sorted(actions, key=lambda a: (a.kind, a.name)))


def with_adoption(reconciled: Any, snapshot: Snapshot, upstream: UpstreamController) -> Any:
    """``reconciled`` (a :class:`~pulumi_lws.core.contract.workload.Reconciled`) with the disown actions
    appended to its stage (after the planner's: they change no group)."""
    import dataclasses

    extra = disown_actions(snapshot, upstream)
    if not extra:
        return reconciled
    stage = dataclasses.replace(reconciled.stage, actions=reconciled.stage.actions + extra)
    return dataclasses.replace(reconciled, stage=stage)
