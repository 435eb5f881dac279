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
  gone) can never cascade into the adopted fleet. Labels are replaced by the ordinary apply: the
  rendered objects declare exactly pulumi-lws's labels;
* ownership by a Pod — upstream LWS makes each worker StatefulSet (and, UniquePerReplica, each
  group's Service) a controller dependent of its group's leader Pod (``blockOwnerDeletion``), so
  the garbage collector deletes it whenever the leader pod is recreated (a rollout, a group
  restart). Hash identity declares that reference itself (its worker StatefulSets follow their
  leader); Ordinal identity renders those objects without owners, because Pulumi owns them and
  diffs against its state, not the cluster: once the collector deleted one, nothing would declare
  it back until ``pulumi refresh``. So the Ordinal reconcile gives every observed object of its
  own carrying a Pod ownerReference a uid-guarded ``disown`` of those references
  (:func:`pod_owner_actions`, the first actions of the stage), and :func:`held_for_pod_owners`
  holds a stage that is not complete — the one whose applied objects could make the leader
  StatefulSet recreate a leader pod — while any remains: nothing moves until the next
  ``pulumi up``, whose snapshot shows the references gone. (Under a real engine the actions run
  before the engine applies anything, :mod:`pulumi_lws.core.contract.driver`; the hold makes the
  order irrelevant, and a failed ``disown`` never lets a leader go first.) A failure-handling
  delete of a leader pod in the same reconcile comes after the disowns in the action list;
* field ownership — upstream applies with server-side apply as field manager ``lws``, with
  force: after adoption those fields have two managers, and the first apply that changes one of
  them (a template change, a scale) would be a conflict. Every declared object the snapshot shows
  adopted — without pulumi-lws's ownership label, still referencing an upstream or Pod owner, or
  with a field manager in ``metadata.managedFields`` that is not Pulumi's or pulumi-lws's (the
  live observer reads them) — is registered with ``pulumi.com/patchForce: "true"``
  (:func:`with_field_ownership`), so the declared value wins.

Invariant: on a fleet pulumi-lws created itself (no upstream owner, no Pod owner of an Ordinal
object, no foreign field manager), nothing here changes an operator-free stage.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.core.contract.stage import Action, Blocker
from pulumi_lws.core.contract.workload import Reconciled, UpstreamController
from pulumi_lws.core.features.hold import HeldView, hold
from pulumi_lws.core.k8s import keys as K

DISOWN_REASON = "adopt from the upstream controller: drop its ownerReference (pulumi-lws manages this object)"
#: the reason of :func:`pod_owner_actions`' disowns (how :func:`held_for_pod_owners` finds them)
POD_OWNER_REASON = (
    "adopt an Ordinal fleet: drop upstream's ownerReference to the group's leader Pod (the garbage "
    "collector would delete this object with its leader; pulumi-lws declares it)"
)
#: the blocker of a stage held while such references remain
POD_OWNERS_HELD = "adoption-pod-owners"


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
            actions.append(_disown(obj, owners, DISOWN_REASON))
    return tuple(sorted(actions, key=lambda a: (a.kind, a.name)))


def _disown(obj: Mapping[str, Any], owners: list[str], reason: str) -> Action:
    """The uid-guarded ``disown`` of ``owners`` (ownerReference uids) from ``obj``."""
    meta = obj.get("metadata") or {}
    return Action(
        "disown", str(obj["kind"]), str(meta.get("name")), {"owners": owners}, uid=meta.get("uid"), reason=reason
    )


def with_adoption(reconciled: Any, snapshot: Snapshot, upstream: UpstreamController) -> Any:
    """``reconciled`` (a :class:`~pulumi_lws.core.contract.workload.Reconciled`) with the disown actions
    appended to its stage (after the planner's: they change no group)."""
    extra = disown_actions(snapshot, upstream)
    if not extra:
        return reconciled
    stage = dataclasses.replace(reconciled.stage, actions=reconciled.stage.actions + extra)
    return dataclasses.replace(reconciled, stage=stage)


def pod_owners(obj: Mapping[str, Any]) -> list[str]:
    """uids of ``obj``'s ownerReferences to a Pod (core/v1)."""
    return [
        str(ref["uid"])
        for ref in (obj.get("metadata") or {}).get("ownerReferences") or ()
        if ref.get("kind") == "Pod" and ref.get("apiVersion") == "v1" and ref.get("uid")
    ]


def pod_owner_actions(objects: Iterable[Mapping[str, Any]]) -> tuple[Action, ...]:
    """One uid-guarded ``disown`` of its Pod ownerReferences per object of ``objects`` that has
    any and is not deleting (sorted by kind, name). ``objects``: what the API declares without
    owners (LeaderWorkerSet Ordinal: its worker StatefulSets and per-group Services)."""
    actions = []
    for obj in objects:
        meta = obj.get("metadata") or {}
        if not meta.get("ownerReferences"):  # the common case (every object pulumi-lws created): one lookup
            continue
        owners = pod_owners(obj)
        if owners and not meta.get("deletionTimestamp"):
            actions.append(_disown(obj, owners, POD_OWNER_REASON))
    return tuple(sorted(actions, key=lambda a: (a.kind, a.name)))


def held_for_pod_owners(reconciled: Reconciled, snapshot: Snapshot, held_view: HeldView | None = None) -> Reconciled:
    """``reconciled`` held (:func:`pulumi_lws.core.features.hold.hold`: the observed objects as
    observed, failure handling kept) while its stage still disowns Pod owners and is not complete
    (module docstring); the disowns run either way, first among the stage's actions (a
    DisaggregatedSet composes its children's). A paused stage is already held."""
    stage = reconciled.stage
    waiting = [a for a in stage.actions if a.verb == "disown" and a.reason == POD_OWNER_REASON]
    if not waiting:
        return reconciled
    if stage.actions[: len(waiting)] != tuple(waiting):  # first, whatever API composed the actions
        rest = tuple(a for a in stage.actions if not (a.verb == "disown" and a.reason == POD_OWNER_REASON))
        stage = dataclasses.replace(stage, actions=tuple(waiting) + rest)
        reconciled = dataclasses.replace(reconciled, stage=stage)
    if stage.complete or (stage.control is not None and stage.control.paused):
        return reconciled
    names = ", ".join(f"{a.kind} {a.name}" for a in waiting[:5]) + (" ..." if len(waiting) > 5 else "")
    blocker = Blocker(
        POD_OWNERS_HELD,
        f"adopting: removing upstream's leader-Pod ownerReferences ({names}) before any leader pod is "
        "recreated; the rollout continues at the next pulumi up",
        stage.blocker.groups if stage.blocker else (),
        ("run pulumi up again: this one removes the references",),
    )
    return hold(
        reconciled, snapshot, blocker=blocker, note="held: adopting leader-Pod-owned objects", held_view=held_view
    )


#: field managers that are this project's own: pulumi-kubernetes' (``pulumi-kubernetes-<random>``,
#: the static ``pulumi-kubernetes`` of a client-side create, the provider binary's name) and the
#: reconcile's actuator (``pulumi-lws``); Kubernetes' own controllers write status, not what we declare
OWN_FIELD_MANAGERS = ("pulumi-kubernetes", "pulumi-resource-kubernetes", "pulumi-lws")
SYSTEM_FIELD_MANAGERS = frozenset({"kube-controller-manager", "kube-scheduler", "kubelet", "before-first-apply"})


def foreign_field_managers(obj: Mapping[str, Any], declared: Mapping[str, Any] | None = None) -> list[str]:
    """Managers in ``obj``'s ``metadata.managedFields`` (of the object itself, not a subresource)
    that are neither Pulumi's nor pulumi-lws's nor Kubernetes' own — upstream's ``lws``, its
    controller's default (``manager``), a ``kubectl`` edit. ``declared``: the manifest, whose
    ``pulumi.com/patchFieldManager`` (when set) names Pulumi's manager too."""
    own = OWN_FIELD_MANAGERS
    chosen = ((declared or {}).get("metadata") or {}).get("annotations") or {}
    extra = chosen.get("pulumi.com/patchFieldManager")
    out = []
    for entry in (obj.get("metadata") or {}).get("managedFields") or ():
        manager = str(entry.get("manager") or "")
        if entry.get("subresource") or not manager or manager in SYSTEM_FIELD_MANAGERS or manager == extra:
            continue
        if not manager.startswith(own):
            out.append(manager)
    return out


def adopted(obj: Mapping[str, Any], declared: Mapping[str, Any], upstream: UpstreamController | None = None) -> bool:
    """Whether the observed ``obj`` (which ``declared`` declares) is still being adopted: no
    pulumi-lws ownership label, an ownerReference to an upstream kind or to a Pod, or a foreign
    field manager."""
    meta = obj.get("metadata") or {}
    if ((meta.get("labels") or {}).get(K.OWNERSHIP)) != K.OWNERSHIP_VALUE:
        return True
    if pod_owners(obj) and not pod_owners(declared):  # Hash declares its own Pod owner: not foreign
        return True
    if upstream is not None and upstream_owners(obj, upstream):
        return True
    return bool(foreign_field_managers(obj, declared))


def with_field_ownership(
    reconciled: Reconciled, snapshot: Snapshot, upstreams: Iterable[UpstreamController] = ()
) -> Reconciled:
    """``reconciled`` with ``pulumi.com/patchForce: "true"`` on every manifest whose observed
    object is still being adopted (:func:`adopted`; module docstring), so pulumi-kubernetes'
    server-side apply takes the fields upstream's manager holds instead of failing on a conflict.
    Objects not observed yet (created by this apply) and objects pulumi-lws already owns alone
    are left as they are; a fleet pulumi-lws created itself gets nothing."""
    ownership, ours = K.OWNERSHIP, K.OWNERSHIP_VALUE
    # the objects that may be adopted, in one pass over the snapshot but its pods (never declared):
    # not deleting, and not pulumi-lws's alone (its label, no owner, no field manager recorded —
    # what the simulator and a fleet pulumi-lws created show: then nothing is read further)
    candidates = {
        (kind, seen["name"]): obj
        for kind in snapshot.kinds()
        if kind != "Pod"
        for obj in snapshot.list(kind)
        if (seen := obj.get("metadata") or {})
        and not seen.get("deletionTimestamp")
        and (
            seen.get("ownerReferences")
            or seen.get("managedFields")
            or (seen.get("labels") or {}).get(ownership) != ours
        )
    }
    if not candidates:
        return reconciled
    owners = tuple(upstreams)
    out: list[Mapping[str, Any]] | None = None
    for n, m in enumerate(reconciled.manifests):
        meta = m["metadata"]
        obj = candidates.get((m["kind"], meta["name"]))
        if obj is None or (meta.get("annotations") or {}).get(K.PATCH_FORCE) == "true":
            continue
        if not (any(adopted(obj, m, u) for u in owners) if owners else adopted(obj, m)):
            continue
        if out is None:
            out = list(reconciled.manifests)
        out[n] = {**m, "metadata": {**meta, "annotations": {**(meta.get("annotations") or {}), K.PATCH_FORCE: "true"}}}
    if out is None:
        return reconciled
    return dataclasses.replace(reconciled, manifests=tuple(out))
