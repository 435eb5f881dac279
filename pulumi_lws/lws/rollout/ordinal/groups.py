"""Per-ordinal group state of an Ordinal LWS, read from a :class:`Snapshot`, and group revisions.

Group ``i`` = leader pod ``<lws>-<i>`` + worker StatefulSet ``<lws>-<i>`` (when the group's size
> 1) + worker pods labelled ``group-index: i``. Readiness and "updated" follow leaderworkerset.md "Group
state legend" (upstream ``getReplicaStates``):

* ready(i)   = leader pod Running+Ready and (size == 1 or worker STS ready);
* updated(i) = leader pod and (size > 1) worker STS both carry the target revision key;
* a group whose leader pod is missing, or whose worker STS is missing when size > 1, is neither.

The size of a group is its leader pod's ``size`` annotation (the group's own revision), falling
back to the spec. Ordinals ``>= R`` are marked ``surge``.

:func:`group_revisions` is the crash-safety rule: an ordinal below the partition keeps the
revision it is observed on — its leader pod's, workers follow their leader — and is never moved
to the target by a re-run (issue #225).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

from pulumi_lws.core.contract.snapshot import (
    Snapshot,
    annotations_of,
    is_deleting,
    labels_of,
    pod_unschedulable,
    statefulset_ready,
)
from pulumi_lws.core.contract.stage import GroupView
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.observe import revision_of
from pulumi_lws.lws.revision import RevisionCatalog


def group_size(lws: LeaderWorkerSet, leader: Mapping[str, Any] | None) -> int:
    """The group's size: the leader pod's ``size`` annotation, else the spec's."""
    if leader is not None:
        raw = annotations_of(leader).get(L.SIZE)
        if raw is not None and str(raw).isdigit():
            return int(raw)
    return lws.size


def _pods_by_group(lws: LeaderWorkerSet, snapshot: Snapshot) -> dict[int, list[Mapping[str, Any]]]:
    """Every pod of the LWS indexed by its ``group-index`` label (one pass over the snapshot)."""
    out: dict[int, list[Mapping[str, Any]]] = {}
    for pod in snapshot.list("Pod", **{L.NAME: lws.name}):
        idx = labels_of(pod).get(L.GROUP_INDEX)
        if idx is not None and str(idx).isdigit():
            out.setdefault(int(idx), []).append(pod)
    return out


def group_phase(
    leader: Mapping[str, Any] | None, worker_sts: Mapping[str, Any] | None, pods: list[Mapping[str, Any]], ready: bool
) -> str:
    """Detail for tables and blockers: terminating, unschedulable, pending, or ""."""
    if leader is None:
        return ""
    if is_deleting(leader) or (worker_sts is not None and is_deleting(worker_sts)):
        return "terminating"
    if any(pod_unschedulable(p) for p in [leader, *pods]):
        return "unschedulable"
    if not ready and (leader.get("status") or {}).get("phase", "Pending") == "Pending":
        return "pending"
    return ""


def group_revision_observed(leader: Mapping[str, Any] | None, worker_sts: Mapping[str, Any] | None) -> str | None:
    """The revision a group is observed on: its leader pod's when the leader pod exists (workers
    follow their leader: upstream derives the worker StatefulSet from the leader pod's revision),
    else its worker StatefulSet's label, else None."""
    return (revision_of(leader) if leader is not None else None) or revision_of(worker_sts)


def _leader_conditions(status: Mapping[str, Any]) -> tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]:
    """The first ``Ready`` and the first ``PodScheduled`` condition of a pod status, in one pass
    (what :func:`pod_running_and_ready` and :func:`pod_unschedulable` each look up)."""
    ready = scheduled = None
    for c in status.get("conditions") or ():
        ctype = c.get("type")
        if ctype == "Ready":
            if ready is None:
                ready = c
                if scheduled is not None:
                    break
        elif ctype == "PodScheduled" and scheduled is None:
            scheduled = c
            if ready is not None:
                break
    return ready, scheduled


def _unschedulable(scheduled: Mapping[str, Any] | None) -> bool:
    return bool(
        scheduled and scheduled.get("status") == "False" and scheduled.get("reason") not in (None, "SchedulingGated")
    )


def observe_group(
    i: int,
    leader: Mapping[str, Any] | None,
    worker_sts: Mapping[str, Any] | None,
    pods: Sequence[Mapping[str, Any]],
    spec_size: int,
    replicas: int,
    target_key: str,
) -> GroupView:
    """Group ``i`` from its leader pod, worker StatefulSet and worker pods (the module legend).

    Equal, field for field, to composing :func:`group_size`, :func:`pod_running_and_ready`,
    :func:`statefulset_ready`, :func:`group_revision_observed` and :func:`group_phase` (a
    hypothesis property checks it, tests/lws/rollout/ordinal/test_ordinal_observe.py), in the
    same short-circuit order; the leader pod's metadata, status and conditions are read once
    because this runs for every group of every reconcile.
    """
    surge = i >= replicas
    if leader is None:
        return GroupView(str(i), revision_of(worker_sts), False, False, False, surge, i, "")
    meta = leader.get("metadata") or {}
    revision = (meta.get("labels") or {}).get(L.TEMPLATE_REVISION_HASH)
    raw = (meta.get("annotations") or {}).get(L.SIZE)
    multi = (int(raw) if raw is not None and str(raw).isdigit() else spec_size) > 1
    leader_deleting = bool(meta.get("deletionTimestamp"))
    status = leader.get("status") or {}
    ready_cond, scheduled = (None, None) if leader_deleting else _leader_conditions(status)
    complete = not multi or worker_sts is not None
    ready = (
        complete
        and not leader_deleting
        and status.get("phase") == "Running"
        and ready_cond is not None
        and ready_cond.get("status") == "True"
        and (not multi or statefulset_ready(worker_sts))
    )
    updated = complete and revision == target_key and (not multi or revision_of(worker_sts) == target_key)
    if leader_deleting or (worker_sts is not None and is_deleting(worker_sts)):
        phase = "terminating"
    elif _unschedulable(scheduled) or any(pod_unschedulable(p) for p in pods):
        phase = "unschedulable"
    elif not ready and status.get("phase", "Pending") == "Pending":
        phase = "pending"
    else:
        phase = ""
    return GroupView(str(i), revision or revision_of(worker_sts), bool(ready), bool(updated), True, surge, i, phase)


def observe_ordinal(
    lws: LeaderWorkerSet, snapshot: Snapshot, target_key: str
) -> tuple[tuple[GroupView, ...], dict[int, str | None]]:
    """One :class:`GroupView` per ordinal over ``[0, max(S, R))`` (S = observed leader STS
    replicas), and the revision label of each of those ordinals' worker StatefulSets (None =
    absent; :func:`observed_worker_revisions`), read in the same lookups."""
    sts = snapshot.get("StatefulSet", lws.name)
    s = int((sts.get("spec") or {}).get("replicas", 1)) if sts else 0
    pods = _pods_by_group(lws, snapshot)
    get, name, size, replicas, none = snapshot.get, lws.name, lws.size, lws.replicas, ()
    groups, workers = [], {}
    for i in range(max(s, replicas)):
        worker_sts = get("StatefulSet", f"{name}-{i}")
        workers[i] = revision_of(worker_sts)
        groups.append(
            observe_group(i, get("Pod", f"{name}-{i}"), worker_sts, pods.get(i, none), size, replicas, target_key)
        )
    return tuple(groups), workers


def observe_ordinal_groups(lws: LeaderWorkerSet, snapshot: Snapshot, target_key: str) -> tuple[GroupView, ...]:
    """The groups of :func:`observe_ordinal`."""
    return observe_ordinal(lws, snapshot, target_key)[0]


def group_chars(groups: tuple[GroupView, ...]) -> str:
    return "".join(g.char for g in groups)


def observed_worker_revisions(
    lws: LeaderWorkerSet, snapshot: Snapshot, upto: int, known: Mapping[int, str | None] | None = None
) -> dict[int, str | None]:
    """The revision label of each observed worker StatefulSet ``<lws>-<i>``, ``i in [0, upto)``
    (None = absent); ``known``: ordinals already read (:func:`observe_ordinal`), not looked up again."""
    known = known or {}
    return {
        i: known[i] if i in known else revision_of(snapshot.get("StatefulSet", f"{lws.name}-{i}")) for i in range(upto)
    }


def leader_current_revision(snapshot: Snapshot, leader_sts: Mapping[str, Any] | None) -> str | None:
    """The LWS revision key the leader StatefulSet recreates pods below its partition from.

    Kubernetes recreates a missing pod below the partition from ``status.currentRevision``, which
    stays on an old template until a rollout completes (it can be several spec changes old). The
    StatefulSet's own ControllerRevision copies the pod template's labels, so its
    ``template-revision-hash`` label names the LWS revision. None when not observable.
    """
    if leader_sts is None:
        return None
    name = (leader_sts.get("status") or {}).get("currentRevision")
    cr = snapshot.get("ControllerRevision", str(name)) if name else None
    return labels_of(cr).get(L.TEMPLATE_REVISION_HASH) if cr is not None else None


def revisions_in_use(
    groups: tuple[GroupView, ...],
    worker_revisions: Mapping[int, str | None],
    leader_current: str | None,
    catalog: RevisionCatalog,
) -> tuple[str, ...]:
    """Known non-target revisions the cluster may still run or recreate: every observed leader pod's
    and worker StatefulSet's revision, and the leader StatefulSet's current revision.

    Their ControllerRevisions must stay declared (not only those a group is rendered on this
    stage): a group below the partition follows its leader pod's revision, and the leader
    StatefulSet may recreate that pod from its current revision at any time. Dropping such a
    revision left the planner unable to render workers on their leader's revision (seed 12717).
    Sorted, deterministic.
    """
    keys = {g.revision for g in groups} | set(worker_revisions.values()) | {leader_current}
    target = catalog.target.key
    return tuple(sorted(k for k in keys if k is not None and k != target and catalog.get(k) is not None))


def nearest_old_revision(i: int, observed: list[tuple[int, str]]) -> str | None:
    """The revision of the observed group nearest to ordinal ``i`` (ties: the lower ordinal), or None."""
    if not observed:
        return None
    return min(observed, key=lambda item: (abs(item[0] - i), item[0]))[1]


def revision_below_partition(
    i: int,
    g: GroupView | None,
    worker_revision: str | None,
    catalog: RevisionCatalog,
    old_below: list[tuple[int, str]],
    old_anywhere: list[tuple[int, str]],
    sts_revision: str | None,
) -> str:
    """The revision group ``i`` (not admitted by the partition) is rendered on.

    Invariant (lws#225): the result is the target only if the group is observed on the target, or
    the group is not observed on any revision and nothing old is known (a fresh create with a
    user partition). A group observed on an old revision is never moved to the target, even when
    its own revision is not in the catalog: then its workers stay on their own (known) revision,
    else the nearest known old revision is used. If nothing old is known at all, the group's own
    revision is returned and rendering fails loudly (a ControllerRevision was deleted by hand),
    as upstream does, rather than put workers ahead of their leader.
    """
    target = catalog.target.key

    def known(key: str | None) -> TypeGuard[str]:
        return key is not None and catalog.get(key) is not None

    observed = g.revision if g is not None else None
    if known(observed):
        return observed  # workers follow their leader pod
    if observed is not None and worker_revision != target and known(worker_revision):
        return worker_revision  # leader's revision unknown: do not move the workers
    fallback = nearest_old_revision(i, old_below)
    if fallback is None and sts_revision != target and known(sts_revision):
        fallback = sts_revision
    if fallback is None and observed is not None:
        fallback = nearest_old_revision(i, old_anywhere) or observed
    return fallback or target


def group_revisions(
    groups: tuple[GroupView, ...],
    replicas: int,
    partition: int,
    catalog: RevisionCatalog,
    sts_revision: str | None,
    worker_revisions: Mapping[int, str | None] | None = None,
) -> dict[str, str]:
    """Revision each ordinal in ``[0, replicas)`` is rendered on (docs/leaderworkerset.md "how workers follow their leader").

    ``i >= partition``: the target. Below: :func:`revision_below_partition` -- the group's
    observed revision (:func:`group_revision_observed`: leader pod label when the leader pod
    exists, else worker STS label) when the catalog knows it; for a group observed on a revision
    the catalog does not know, its worker StatefulSet's own known old revision; else the nearest
    observed known non-target revision below the partition; else the leader StatefulSet's own
    (old) revision label; else, for a group observed on an old revision, the nearest known old
    revision at any ordinal; else the target only for a group not observed on any old revision
    (e.g. a fresh create with a user partition). Never the target for a group observed on an old
    revision -- in particular when a new spec moves the partition up (Case 2 resets it to
    ``min(R, S)``) over groups admitted under a previous revision.

    Following the leader pod first is the second line of defence of lws#225: if anything (a
    foreign crash, a manual edit, an apply that ignored the dependency order) left a worker
    StatefulSet below the partition on another revision than its leader pod, the next reconcile
    renders it back onto its leader's revision instead of keeping the workers ahead.
    """
    target = catalog.target.key
    workers = worker_revisions or {}
    by_index = {g.index: g for g in groups}

    def known(key: str | None) -> bool:
        return key is not None and catalog.get(key) is not None

    old_anywhere: list[tuple[int, str]] = [
        (g.index, g.revision)
        for g in groups
        if g.index is not None and g.revision is not None and g.revision != target and known(g.revision)
    ]
    seen = set(old_anywhere)  # a set: this runs per reconcile over every group (10,000s)
    old_anywhere += [
        (i, rev)
        for i in sorted(workers)  # ints sort in C; (int, str) pairs do not
        if (rev := workers[i]) is not None and rev != target and known(rev) and (i, rev) not in seen
    ]
    old_below = [
        (i, rev)
        for i, rev in old_anywhere
        if i < partition and by_index.get(i) is not None and by_index[i].revision == rev
    ]
    out: dict[str, str] = {}
    get = catalog.get
    for i in range(replicas):
        if i >= partition:
            out[str(i)] = target
            continue
        g = by_index.get(i)
        observed = g.revision if g is not None else None
        if observed is not None and get(observed) is not None:
            out[str(i)] = observed  # revision_below_partition's first rule, the common case, without the call
        else:
            out[str(i)] = revision_below_partition(i, g, workers.get(i), catalog, old_below, old_anywhere, sts_revision)
    return out
