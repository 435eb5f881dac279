"""``spec.podTerminationPolicy``: how a group's workers follow a deleted leader (pure).

Upstream, each worker StatefulSet is owned by its leader pod, so Kubernetes' garbage collector
removes a group's workers after (Sequential) or together with (Parallel) its leader. pulumi-lws
renders worker StatefulSets without ownerReferences (Pulumi owns them), so the workers would
survive a leader deletion. This module restores the upstream semantics with actions on the
worker *pods* (their StatefulSet, still declared, recreates them fresh):

* **Parallel**: as soon as a leader is deleting, every worker of that leader's incarnation
  (created no later than the leader's deletionTimestamp, not already deleting) is deleted
  (``Background``, uid-guarded) — leader and workers terminate concurrently.
* **Sequential** (default): a worker of a deleted leader is *marked* with the annotation
  ``pulumi-lws.io/previous-leader-uid: <leader uid>`` while the leader terminates, and deleted
  once no pod with that uid is the group's leader any more (the leader is gone or replaced).
  Marking happens when failure handling recreates a group (:func:`worker_teardown_actions`,
  same action list as the leader delete) and when a leader on the target revision is observed
  deleting for another reason (node loss, ``kubectl delete``). A leader deleted by a rollout
  (old revision) is not followed: the worker StatefulSet replaces those workers itself.

Invariants: every action is uid-guarded; re-planning on the snapshot after the actions ran adds
nothing (marked workers are not re-marked, deleting workers are not re-deleted, workers created
after the leader's deletionTimestamp are replacements and are never touched).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_lws.core.contract.snapshot import Snapshot, annotations_of, is_deleting, labels_of
from pulumi_lws.core.contract.stage import Action, Stage
from pulumi_lws.core.k8s.timestamps import parse_timestamp
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.observe import revision_of
from pulumi_lws.lws.rollout.failure.restart_budget import created_at

#: Marks a worker whose leader (this uid) is being deleted; the worker follows once it is gone.
PREVIOUS_LEADER_UID = "pulumi-lws.io/previous-leader-uid"
FOREGROUND, BACKGROUND = "Foreground", "Background"

Pod = Mapping[str, Any]


def uid_of(obj: Pod | None) -> str | None:
    return None if obj is None else (obj.get("metadata") or {}).get("uid")


def name_of(obj: Pod) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def delete_pod(pod: Pod, reason: str, propagation: str = BACKGROUND) -> Action:
    return Action("delete", "Pod", name_of(pod), {"propagation": propagation}, uid=uid_of(pod), reason=reason)


def marked_for(worker: Pod) -> str | None:
    """The uid of the deleted leader this worker must follow (None: not marked)."""
    return annotations_of(worker).get(PREVIOUS_LEADER_UID)


def of_incarnation(worker: Pod, leader: Pod) -> bool:
    """True when ``worker`` belongs to ``leader``'s incarnation of the group: not marked for
    another leader and, if the leader is deleting, created no later than that deletion."""
    mark = marked_for(worker)
    if mark is not None and mark != uid_of(leader):
        return False
    deleted = parse_timestamp((leader.get("metadata") or {}).get("deletionTimestamp"))
    born = created_at(worker)
    return deleted is None or born is None or born <= deleted


def worker_teardown_actions(
    lws: LeaderWorkerSet, leader: Pod, workers: Sequence[Pod], reason: str
) -> tuple[Action, ...]:
    """Worker part of tearing down ``leader``'s group, in the same action list as the leader
    delete: Parallel deletes the workers now; Sequential marks them to follow the leader."""
    live = [w for w in workers if not is_deleting(w) and of_incarnation(w, leader)]
    if lws.spec.pod_termination_policy == "Parallel":
        return tuple(delete_pod(w, f"{reason} (podTerminationPolicy Parallel)") for w in live)
    leader_uid = uid_of(leader)
    if leader_uid is None:
        return ()
    return tuple(
        Action(
            "annotate",
            "Pod",
            name_of(w),
            {"annotations": {PREVIOUS_LEADER_UID: leader_uid}},
            uid=uid_of(w),
            reason=f"{reason}: follow leader {name_of(leader)} once it is gone (podTerminationPolicy Sequential)",
        )
        for w in live
        if marked_for(w) != leader_uid
    )


def follow_actions(leader: Pod | None, workers: Sequence[Pod]) -> tuple[Action, ...]:
    """Sequential: delete marked workers whose leader is gone or replaced (new uid)."""
    current = None if leader is None else uid_of(leader)
    out = []
    for w in workers:
        mark = marked_for(w)
        if mark is not None and mark != current and not is_deleting(w):
            out.append(delete_pod(w, f"leader {mark} of this worker is gone (podTerminationPolicy Sequential)"))
    return tuple(out)


def group_termination_actions(
    lws: LeaderWorkerSet,
    leader: Pod | None,
    workers: Sequence[Pod],
    target_revision: str | None,
    *,
    removed: bool = False,
) -> tuple[Action, ...]:
    """Termination actions for one group (mode-agnostic: Hash mode may call it per group key).

    ``target_revision``: a leader deleting on another revision is a rollout replacement, which a
    Sequential group does not follow (None: follow every deleting leader). ``removed``: the group
    is being scaled away (its worker StatefulSet is no longer declared, so Pulumi deletes the
    workers): Sequential adds nothing.
    """
    actions: list[Action] = list(follow_actions(leader, workers))
    if leader is None or not is_deleting(leader):
        return tuple(actions)
    rollout = removed or (target_revision is not None and revision_of(leader) != target_revision)
    if lws.spec.pod_termination_policy == "Parallel" or not rollout:
        following = {a.name for a in actions}
        actions += [
            a
            for a in worker_teardown_actions(lws, leader, workers, f"leader {name_of(leader)} is deleting")
            if a.name not in following
        ]
    return tuple(actions)


def ordinal_members(lws: LeaderWorkerSet, snapshot: Snapshot) -> dict[int, tuple[Pod | None, list[Pod]]]:
    """``{ordinal: (leader pod or None, worker pods)}`` for every ordinal any pod names."""
    out: dict[int, tuple[Pod | None, list[Pod]]] = {}
    workers: dict[int, list[Pod]] = {}
    for pod in snapshot.list("Pod", **{L.NAME: lws.name}):
        lbl = labels_of(pod)
        idx = lbl.get(L.GROUP_INDEX)
        if lbl.get(L.WORKER_INDEX) != "0" and idx is not None and str(idx).isdigit():  # no webhook: label may be absent
            workers.setdefault(int(idx), []).append(pod)
    leaders = ordinal_leaders(lws, snapshot)
    for i in sorted(set(workers) | set(leaders)):
        out[i] = (leaders.get(i), workers.get(i, []))
    return out


def ordinal_leaders(lws: LeaderWorkerSet, snapshot: Snapshot) -> dict[int, Pod]:
    """``{ordinal: leader pod}``: pods ``worker-index: "0"`` named ``<lws>-<ordinal>``."""
    leaders = {}
    for pod in snapshot.list("Pod", **{L.NAME: lws.name, L.WORKER_INDEX: "0"}):
        suffix = name_of(pod)[len(lws.name) + 1 :]
        if name_of(pod).startswith(lws.name + "-") and suffix.isdigit():
            leaders[int(suffix)] = pod
    return leaders


def plan_termination_actions(
    lws: LeaderWorkerSet,
    snapshot: Snapshot,
    stage: Stage,
    members: Mapping[int, tuple[Pod | None, list[Pod]]] | None = None,
) -> tuple[Action, ...]:
    """Termination actions for every Ordinal group observed in ``snapshot`` (``members``:
    ``ordinal_members(lws, snapshot)`` when the caller has it)."""
    actions: list[Action] = []
    members = ordinal_members(lws, snapshot) if members is None else members
    for i, (leader, workers) in sorted(members.items()):
        actions += group_termination_actions(lws, leader, workers, stage.target_revision, removed=i >= stage.replicas)
    return tuple(actions)
