"""What a held reconcile registers (pure): the paused stage, and the capacity hold of
:mod:`pulumi_lws.core.features.fit`; rollout control (:mod:`pulumi_lws.core.features.control`)
decides when to hold, this module says what holding means.

:func:`hold` keeps the objects the snapshot shows as observed (:func:`frozen`), creates only what
completes an observed group or what pod creation needs (:data:`KEPT_WHILE_HELD`), keeps every
object of ours the plan dropped, and keeps failure-handling actions (:func:`_recovery_action`);
the rules are in :mod:`pulumi_lws.core.features.control`'s docstring ("Pause").

Invariant: a held result never contains an object the snapshot does not show, except one that
completes an observed group or a :data:`KEPT_WHILE_HELD` kind.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pulumi_lws.core.contract.snapshot import Snapshot, is_deleting, labels_of
from pulumi_lws.core.contract.stage import Action, Blocker, GroupView, Stage
from pulumi_lws.core.contract.trace import GroupsView
from pulumi_lws.core.contract.workload import Reconciled
from pulumi_lws.core.k8s import keys as K

PAUSED_ANNOTATION = "pulumi-lws.io/paused"
#: ``Blocker.code`` of a held stage
PAUSED = "paused"
#: verbs that move a rollout (held while paused); every other verb is failure handling or bookkeeping
ROLLOUT_VERBS = frozenset({"ungate"})
#: ``Action.params`` key an API sets on an ``ungate`` that restores a group the pause keeps (kept)
RECOVERY_PARAM = "recovery"
#: kinds made by built-in controllers: never registered by a held stage
CONTROLLER_OWNERS = frozenset({"StatefulSet", "ReplicaSet", "Deployment", "Job", "DaemonSet"})
#: metadata the API server or a controller writes: never registered back
SERVER_METADATA = (
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
    "finalizers",
)
CONTROLLER_ANNOTATIONS = ("deployment.kubernetes.io/", "kubectl.kubernetes.io/last-applied-configuration")


def ours(obj: Mapping[str, Any]) -> bool:
    """An object this project registers (ownership label), not a Pod, not a controller's own."""
    if obj.get("kind") == "Pod" or labels_of(obj).get(K.OWNERSHIP) != K.OWNERSHIP_VALUE or is_deleting(obj):
        return False
    owners = (obj.get("metadata") or {}).get("ownerReferences") or []
    return not any(o.get("controller") and o.get("kind") in CONTROLLER_OWNERS for o in owners)


def _written(actions: Iterable[Action], kind: str, name: str, verb: str, key: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for a in actions:
        if a.verb == verb and a.kind == kind and a.name == name:
            out.update(a.params.get(key) or {})
    return out


def frozen(observed: Mapping[str, Any], actions: Iterable[Action] = ()) -> dict[str, Any]:
    """``observed`` as a desired manifest: no status, no server-written metadata, plus what the
    kept actions write on it and without the ownerReferences they drop (``disown``), so a held
    ``pulumi up`` never reverts an action of the same run."""
    actions = tuple(actions)
    meta = dict(observed.get("metadata") or {})
    kind, name = str(observed.get("kind")), str(meta.get("name"))
    out_meta = {k: v for k, v in meta.items() if k not in SERVER_METADATA}
    for field_name, verb in (("labels", "label"), ("annotations", "annotate")):
        values = {
            k: v
            for k, v in dict(meta.get(field_name) or {}).items()
            if not (field_name == "annotations" and k.startswith(CONTROLLER_ANNOTATIONS))
        }
        for k, v in _written(actions, kind, name, verb, field_name).items():
            if v is None:
                values.pop(k, None)
            else:
                values[k] = v
        if values:
            out_meta[field_name] = values
        else:
            out_meta.pop(field_name, None)
    disowned = {
        uid
        for a in actions
        if a.verb == "disown" and a.kind == kind and a.name == name
        for uid in a.params.get("owners") or ()
    }
    if disowned and out_meta.get("ownerReferences"):  # never declare back a reference a kept action drops
        refs = [r for r in out_meta["ownerReferences"] if r.get("uid") not in disowned]
        if refs:
            out_meta["ownerReferences"] = refs
        else:
            out_meta.pop("ownerReferences")
    body = {k: v for k, v in observed.items() if k not in ("metadata", "status")}
    if kind == "Deployment":
        # its own controller would go on rolling ReplicaSets towards the template: pause it natively
        body["spec"] = {**dict(body.get("spec") or {}), "paused": True}
    return {**body, "metadata": out_meta}


def object_ref(obj: Mapping[str, Any]) -> tuple[str, str]:
    """(kind, name): how snapshots and dependencies key an object."""
    return str(obj.get("kind")), str((obj.get("metadata") or {}).get("name"))


def _recovery_action(action: Action, snapshot: Snapshot, target: str) -> bool:
    """Kept while paused: every verb but ``ungate``; an ``ungate`` only when marked recovery
    (:data:`RECOVERY_PARAM`) or of a pod on an old revision (a replacement its own controller made
    for a recreated group — never a rollout move)."""
    if action.verb not in ROLLOUT_VERBS or action.params.get(RECOVERY_PARAM) is True:
        return True
    pod = snapshot.get(action.kind, action.name)
    return pod is not None and bool(target) and target not in labels_of(pod).values()


#: planned kinds registered as planned while held: cluster configuration the creation of pods needs
#: (per-pod values admission-policy: a pod recreated while paused must still get its values), never
#: a rollout move; not observed, so without this the hold would drop them and Pulumi delete them
KEPT_WHILE_HELD = ("MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding")


def _completes_observed_group(manifest: Mapping[str, Any], live_uids: set[str]) -> bool:
    """A planned object owned by an observed, admitted pod (a Hash group's worker StatefulSet and
    Service are owned by its leader): creating it completes a group that exists, it moves none. A
    gated leader's objects wait: its admission is held."""
    owners = (manifest.get("metadata") or {}).get("ownerReferences") or []
    return any(o.get("uid") in live_uids for o in owners)


#: an API's view of a held stage: the stage with its groups and lanes as observed
#: (:meth:`pulumi_lws.core.contract.workload.Workload.held_stage` bound to a spec and snapshot)
HeldView = Callable[[Stage], Stage]


def observed_groups(stage: Stage, view: GroupsView) -> Stage:
    """``stage`` with its groups and lanes as ``view`` (an API's ``trace_view``, its independent
    reading of the cluster) shows them: what a held stage registers. ``replicas``/``partition``,
    the case and the predicted stages stay the plan the hold keeps (what resuming applies); lanes
    are replaced only on a stage that has lanes."""
    groups = tuple(
        GroupView(
            id=cell.id,
            revision=cell.revision or None,
            ready=cell.state in "Uo",
            updated=cell.state in "Uu",
            exists=cell.state != "-",
            surge=cell.surge,
            index=int(cell.id) if cell.id.isdigit() else None,
            phase=cell.detail,
        )
        for cell in view.cells
    )
    return dataclasses.replace(stage, groups=groups, lanes=tuple(view.lanes) if stage.lanes else stage.lanes)


def hold(
    result: Reconciled,
    snapshot: Snapshot,
    blocker: Blocker | None = None,
    note: str = "paused",
    held_view: HeldView | None = None,
) -> Reconciled:
    """The paused reconcile of ``result`` (module docstring): observed objects as observed,
    failure-handling actions only, the stage marked paused — or, with ``blocker``, held for that
    reason (the capacity check, :mod:`pulumi_lws.core.features.fit`) and noted ``note``.

    ``held_view`` (the API's ``Workload.held_stage``): the stage's groups and lanes describe what
    the hold registers — the observed state, not the planned stage's groups — so every API's
    summary and stage table shows what is held (None: the stage's groups already are the
    observed ones, as LeaderWorkerSet's)."""
    target = result.stage.target_revision
    actions = tuple(a for a in result.stage.actions if _recovery_action(a, snapshot, target))
    observed = {object_ref(o): o for o in snapshot if ours(o)}
    live_uids = {
        str(o["metadata"].get("uid"))
        for o in snapshot
        if o.get("kind") == "Pod" and not is_deleting(o) and not (o.get("spec") or {}).get("schedulingGates")
    }  # an admitted pod: no gate left
    manifests = [
        frozen(observed[object_ref(m)], actions) if object_ref(m) in observed else dict(m)
        for m in result.manifests
        if object_ref(m) in observed or _completes_observed_group(m, live_uids) or m.get("kind") in KEPT_WHILE_HELD
    ]
    kept = {object_ref(m) for m in manifests}
    manifests += [frozen(o, actions) for ref, o in sorted(observed.items()) if ref not in kept]
    refs = {object_ref(m) for m in manifests}
    dependencies = {
        ref: tuple(d for d in deps if d in refs) for ref, deps in result.dependencies.items() if ref in refs
    }
    stage = result.stage
    blocker = (
        stage.blocker
        if stage.complete
        else blocker
        if blocker is not None
        else Blocker(
            PAUSED,
            f"rollout paused ({PAUSED_ANNOTATION}); holding the observed state (the planned stage is not applied); "
            "failure recovery continues",
            stage.blocker.groups if stage.blocker else (),
            (f"remove the {PAUSED_ANNOTATION} annotation (or set paused: false) and run pulumi up to resume",),
        )
    )
    stage = dataclasses.replace(stage, actions=actions, blocker=blocker, notes=stage.notes + (note,))
    if held_view is not None:
        stage = held_view(stage)
    return dataclasses.replace(
        result, stage=stage, manifests=tuple(manifests), dependencies={k: v for k, v in dependencies.items() if v}
    )
