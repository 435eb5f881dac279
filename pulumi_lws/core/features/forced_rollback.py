"""Pods the StatefulSet controller will never replace after a bad template (forced rollback).

Kubernetes documents it ("Forced rollback", StatefulSet rolling updates): when a template never
becomes Running and Ready, reverting or fixing the template is not enough — the controller keeps
waiting for the broken pod and a person must delete it. In the controller (1.35,
``MaxUnavailableStatefulSet`` on, ``defaultStatefulSetControl``):

* ``OrderedReady``: ``processReplica`` stops at the first pod that is not Running+Ready (or is
  terminating) before the rolling update runs at all, so an outdated pod that never becomes
  ready is never replaced;
* both policies: the rolling update counts the unavailable pods of ``[start, start+replicas)``
  and deletes nothing when they reach ``maxUnavailable`` (int or percent of replicas rounded up,
  at least 1), so outdated pods that are themselves unavailable use up the budget that should
  replace them.

:func:`stalled_pods` is that model as a pure function of one observed StatefulSet and its pods;
:func:`forced_rollback_actions` turns the stalled pods of a workload's StatefulSets into uid-guarded
``delete`` actions. Deleting them is always inside every availability budget: an outdated pod that
is not available is already counted unavailable (Kthena #743's rule: unhealthy outdated units are
replaced first and never counted against availability); the controller recreates each one from
its update revision. Only ordinals at or above the StatefulSet's partition are touched (the
partition is how the planners hold groups back), and only once the controller has observed the
current generation (``status.observedGeneration``), so the update revision is the live template's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pulumi_lws.core.contract.reuse import Reuse
from pulumi_lws.core.contract.snapshot import is_deleting, labels_of, pod_condition, pod_running_and_ready
from pulumi_lws.core.contract.stage import Action
from pulumi_lws.core.k8s.keys import CONTROLLER_REVISION_HASH
from pulumi_lws.core.k8s.scaling import scaled_value
from pulumi_lws.core.k8s.timestamps import parse_timestamp

#: ``Action.reason`` of the deletes: says why the stage, not the controller, replaces the pod
FORCED_ROLLBACK_REASON = "forced rollback: outdated pod never became ready and its StatefulSet will not replace it"


def _ordinal(sts_name: str, pod_name: str) -> int | None:
    prefix = sts_name + "-"
    digits = pod_name[len(prefix) :] if pod_name.startswith(prefix) else ""
    return int(digits) if digits.isdecimal() else None


def _available(pod: Mapping[str, Any], min_ready: float, now: float | None) -> bool:
    if not pod_running_and_ready(pod):
        return False
    if min_ready <= 0 or now is None:
        return True
    since = parse_timestamp((pod_condition(pod, "Ready") or {}).get("lastTransitionTime"))
    return since is not None and now - since >= min_ready


_UNKNOWN = object()


def _controller_uid(obj: Mapping[str, Any]) -> str | None:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller"):
            uid = ref.get("uid")
            return None if uid is None else str(uid)
    return None


def stalled_pods(
    sts: Mapping[str, Any], pods: Iterable[Mapping[str, Any]], now: float | None = None
) -> tuple[Mapping[str, Any], ...]:
    """The pods of ``sts`` (``pods``: those it controls, any order) that are outdated (revision
    label != ``status.updateRevision``), not available, not terminating, at an ordinal
    ``>= start + partition``, and that the controller will not replace (module docstring), by
    ordinal. Empty for OnDelete, for a StatefulSet being deleted, and while the controller has not
    observed the current generation. ``now``: epoch seconds (``minReadySeconds``)."""
    spec, status, meta = sts.get("spec") or {}, sts.get("status") or {}, sts.get("metadata") or {}
    strategy = spec.get("updateStrategy") or {}
    update_revision = status.get("updateRevision")
    if is_deleting(sts) or strategy.get("type", "RollingUpdate") != "RollingUpdate" or not update_revision:
        return ()
    if status.get("observedGeneration") != meta.get("generation"):
        return ()
    name = str(meta.get("name") or "")
    start = int((spec.get("ordinals") or {}).get("start") or 0)
    replicas = int(spec.get("replicas", 1))
    ru = strategy.get("rollingUpdate") or {}
    low = start + int(ru.get("partition") or 0)
    min_ready = float(spec.get("minReadySeconds") or 0)
    by_ordinal = {}
    outdated = False  # a candidate at all: an outdated pod at or above the partition
    for pod in pods:
        pm = pod.get("metadata") or {}
        ordinal = _ordinal(name, str(pm.get("name") or ""))
        if ordinal is not None and start <= ordinal < start + replicas:
            by_ordinal[ordinal] = pod
            outdated = outdated or (
                ordinal >= low and (pm.get("labels") or {}).get(CONTROLLER_REVISION_HASH) != update_revision
            )
    if not outdated:
        # nothing the final filter could keep (it requires an outdated pod at or above ``low``;
        # the last pod of an ordinal is the one kept): the availability count cannot change that
        return ()
    unavailable = sum(
        1
        for o in range(start, start + replicas)
        if o not in by_ordinal or is_deleting(by_ordinal[o]) or not _available(by_ordinal[o], min_ready, now)
    )
    ordered = spec.get("podManagementPolicy", "OrderedReady") == "OrderedReady"
    max_unavailable = max(1, scaled_value(ru.get("maxUnavailable", 1), replicas, round_up=True))
    if not ordered and unavailable < max_unavailable:
        return ()  # the controller's own budget still replaces outdated pods
    return tuple(
        pod
        for o, pod in sorted(by_ordinal.items())
        if o >= low
        and not is_deleting(pod)
        and not _available(pod, min_ready, now)
        and ((pod.get("metadata") or {}).get("labels") or {}).get(CONTROLLER_REVISION_HASH) != update_revision
    )


def forced_rollback_actions(
    statefulsets: Sequence[Mapping[str, Any]],
    pods: Iterable[Mapping[str, Any]],
    *,
    now: float | None = None,
    skip: Iterable[str] = (),
    propagation: Mapping[str, str] | None = None,
    reuse: Reuse | None = None,
    selector: tuple[str, str] | None = None,
) -> tuple[Action, ...]:
    """uid-guarded ``delete`` actions for the :func:`stalled_pods` of ``statefulsets`` (``pods``: the
    workload's pods; each is matched to its controller by uid), in StatefulSet then ordinal order.
    ``skip``: pod names another action of the stage already deletes. ``propagation``: by
    StatefulSet name (default Background), e.g. Foreground for an LWS leader pod that owns its
    group's workers. ``reuse``: the snapshot's :attr:`~pulumi_lws.core.contract.snapshot.Snapshot.reuse`
    (a pod already read keeps its controller uid and revision label: :func:`_pod_memo`).
    ``selector``: ``(label key, value)``: only the pods so labelled are the workload's (the pods
    ``Snapshot.list("Pod", **{key: value})`` answers, read in this pass instead of an index).

    One pass reads every pod's controller and revision label; only the StatefulSets with an owned
    pod off their update revision (the others have no outdated pod: :func:`stalled_pods` finds
    none) have their pods collected, in a second pass, and looked at."""
    pods = pods if isinstance(pods, (list, tuple)) else list(pods)
    memo = _pod_memo(reuse, selector)
    uids: list[str | None] = []
    first: dict[str, Any] = {}  # controller uid -> the revision label of its pods, _MIXED when they differ
    for pod in pods:
        hit = memo.get(id(pod)) if memo is not None else None
        if hit is not None and hit[0] is pod:
            uid, label = hit[1], hit[2]
        else:
            uid, label = _controller_uid(pod), _revision_label(pod)
            if selector is not None and labels_of(pod).get(selector[0]) != selector[1]:
                uid = None  # not the workload's pod: owns nothing here
            if memo is not None:
                memo[id(pod)] = (pod, uid, label)
        uids.append(uid)
        if uid is not None:
            seen = first.get(uid, _ABSENT)
            if seen is _ABSENT:
                first[uid] = label
            elif seen is not _MIXED and (label is _UNKNOWN or (seen is not label and seen != label)):  # as a set adds
                first[uid] = _MIXED
    if memo is not None and len(memo) > 2 * len(pods) + 1024:
        kept = {id(p): memo[id(p)] for p in pods if id(p) in memo}
        memo.clear()
        memo.update(kept)
    look: list[Mapping[str, Any]] = []  # the StatefulSets looked at, in order
    for sts in statefulsets:
        uid = str((sts.get("metadata") or {}).get("uid") or "")
        seen = first.get(uid, _ABSENT)
        if seen is _ABSENT:
            continue  # owns no pod
        # {label} == {updateRevision} exactly as a set of the labels compares (raises as it does
        # on an unhashable updateRevision): every pod on the update revision, none is outdated
        if seen is not _MIXED and seen is not _UNKNOWN and {seen} == {(sts.get("status") or {}).get("updateRevision")}:
            continue
        look.append(sts)
    if not look:
        return ()
    wanted = {str((sts.get("metadata") or {}).get("uid") or "") for sts in look}
    by_owner: dict[str, list[Mapping[str, Any]]] = {}
    for pod, uid in zip(pods, uids):
        if uid in wanted:
            by_owner.setdefault(uid, []).append(pod)
    skipped, out = set(skip), []
    for sts in look:
        meta = sts.get("metadata") or {}
        uid = str(meta.get("uid") or "")
        mode = (propagation or {}).get(str(meta.get("name")), "Background")
        for pod in stalled_pods(sts, by_owner[uid], now):
            pm = pod.get("metadata") or {}
            name = str(pm.get("name") or "")
            if name in skipped:
                continue
            skipped.add(name)
            out.append(
                Action("delete", "Pod", name, {"propagation": mode}, uid=pm.get("uid"), reason=FORCED_ROLLBACK_REASON)
            )
    return tuple(out)


_ABSENT = object()
_MIXED = object()


def _revision_label(pod: Mapping[str, Any]) -> Any:
    """The pod's revision label; :data:`_UNKNOWN` when unhashable (malformed input: never "all updated")."""
    label = ((pod.get("metadata") or {}).get("labels") or {}).get(CONTROLLER_REVISION_HASH)
    try:
        hash(label)
    except TypeError:
        return _UNKNOWN
    return label


def _pod_memo(
    reuse: Reuse | None, selector: tuple[str, str] | None
) -> dict[int, tuple[Mapping[str, Any], str | None, Any]] | None:
    """``id(pod) -> (pod, controller uid or None when the selector rejects it, revision label)``
    of the pods read under ``reuse``'s observer with ``selector`` (None: no promise, nothing
    kept). The pod is held, so no id is reused while remembered; both values are functions of
    the pod's content, which an identical pod shares, and of the selector (a memo per selector).
    Memory: at most twice the most pods of one call plus 1,024 entries (then only the current
    call's are kept)."""
    return None if reuse is None else reuse.memo(f"{__name__}:{selector!r}")


def with_forced_rollback(
    actions: Sequence[Action],
    statefulsets: Sequence[Mapping[str, Any]],
    pods: Iterable[Mapping[str, Any]],
    *,
    now: float | None = None,
    propagation: Mapping[str, str] | None = None,
    reuse: Reuse | None = None,
    selector: tuple[str, str] | None = None,
) -> tuple[Action, ...]:
    """``actions`` followed by the forced-rollback deletes of pods no action of them deletes."""
    skip = [a.name for a in actions if a.verb == "delete" and a.kind == "Pod"]
    return tuple(actions) + forced_rollback_actions(
        statefulsets, pods, now=now, skip=skip, propagation=propagation, reuse=reuse, selector=selector
    )
