"""Per-ordinal group state of an Ordinal LWS, read from a :class:`Snapshot`, and group revisions.

Group ``i`` = leader pod ``<lws>-<i>`` + worker StatefulSet ``<lws>-<i>`` (when the group's size
> 1) + worker pods labelled ``group-index: i``. Readiness and "updated" follow design.md "Group
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

from typing import Mapping

from pulumi_lws import labels as L
from pulumi_lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.observe import (
    Snapshot, annotations_of, is_deleting, labels_of, pod_running_and_ready, pod_unschedulable, revision_of,
    statefulset_ready,
)
from pulumi_lws.revision import RevisionCatalog
from pulumi_lws.rollout.stage import GroupView


def group_size(lws: LeaderWorkerSet, leader: Mapping | None) -> int:
    """The group's size: the leader pod's ``size`` annotation, else the spec's."""
    if leader is not None:
        raw = annotations_of(leader).get(L.SIZE)
        if raw is not None and str(raw).isdigit():
            return int(raw)
    return lws.size


def _pods_by_group(lws: LeaderWorkerSet, snapshot: Snapshot) -> dict[int, list[Mapping]]:
    """Every pod of the LWS indexed by its ``group-index`` label (one pass over the snapshot)."""
    out: dict[int, list[Mapping]] = {}
    for pod in snapshot.list("Pod", **{L.NAME: lws.name}):
        idx = labels_of(pod).get(L.GROUP_INDEX)
        if idx is not None and str(idx).isdigit():
            out.setdefault(int(idx), []).append(pod)
    return out


def group_phase(leader: Mapping | None, worker_sts: Mapping | None, pods: list[Mapping], ready: bool) -> str:
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


def group_revision_observed(leader: Mapping | None, worker_sts: Mapping | None) -> str | None:
    """The revision a group is observed on: its leader pod's when the leader pod exists (workers
    follow their leader: upstream derives the worker StatefulSet from the leader pod's revision),
    else its worker StatefulSet's label, else None."""
    return (revision_of(leader) if leader is not None else None) or revision_of(worker_sts)


def observe_group(lws: LeaderWorkerSet, snapshot: Snapshot, i: int, target_key: str, pods: list[Mapping]) -> GroupView:
    name = f"{lws.name}-{i}"
    leader = snapshot.get("Pod", name)
    worker_sts = snapshot.get("StatefulSet", name)
    size = group_size(lws, leader)
    multi = size > 1
    exists = leader is not None
    complete = exists and (not multi or worker_sts is not None)
    ready = complete and pod_running_and_ready(leader) and (not multi or statefulset_ready(worker_sts))
    updated = complete and revision_of(leader) == target_key and (not multi or revision_of(worker_sts) == target_key)
    revision = group_revision_observed(leader, worker_sts)
    return GroupView(
        id=str(i), revision=revision, ready=bool(ready), updated=bool(updated), exists=exists,
        surge=i >= lws.replicas, index=i, phase=group_phase(leader, worker_sts, pods, bool(ready)),
    )


def observe_ordinal_groups(lws: LeaderWorkerSet, snapshot: Snapshot, target_key: str) -> tuple[GroupView, ...]:
    """One :class:`GroupView` per ordinal over ``[0, max(S, R))`` (S = observed leader STS replicas)."""
    sts = snapshot.get("StatefulSet", lws.name)
    s = int((sts.get("spec") or {}).get("replicas", 1)) if sts else 0
    pods = _pods_by_group(lws, snapshot)
    return tuple(observe_group(lws, snapshot, i, target_key, pods.get(i, [])) for i in range(max(s, lws.replicas)))


def group_chars(groups: tuple[GroupView, ...]) -> str:
    return "".join(g.char for g in groups)


def group_revisions(
    groups: tuple[GroupView, ...], replicas: int, partition: int, catalog: RevisionCatalog, sts_revision: str | None,
) -> dict[str, str]:
    """Revision each ordinal in ``[0, replicas)`` is rendered on (design.md "how workers follow their leader").

    ``i >= partition``: the target. Below: the group's observed revision
    (:func:`group_revision_observed`: leader pod label when the leader pod exists, else worker STS
    label) when the catalog knows it; else the nearest observed known non-target revision below the
    partition; else the leader StatefulSet's own (old) revision label; else the target (nothing old
    is known, e.g. a fresh create with a user partition). Never the target for a group observed on
    an old revision.

    Following the leader pod first is the second line of defence of lws#225: if anything (a
    foreign crash, a manual edit, an apply that ignored the dependency order) left a worker
    StatefulSet below the partition on another revision than its leader pod, the next reconcile
    renders it back onto its leader's revision instead of keeping the workers ahead.
    """
    target = catalog.target.key
    by_index = {g.index: g for g in groups}
    known = lambda key: key is not None and catalog.get(key) is not None  # noqa: E731
    old_below = [(g.index, g.revision) for g in groups
                 if g.index is not None and g.index < partition and g.revision != target and known(g.revision)]
    out: dict[str, str] = {}
    for i in range(replicas):
        if i >= partition:
            out[str(i)] = target
            continue
        g = by_index.get(i)
        if g is not None and known(g.revision):
            out[str(i)] = g.revision  # type: ignore[assignment]
        elif old_below:
            out[str(i)] = min(old_below, key=lambda item: (abs(item[0] - i), item[0]))[1]
        elif sts_revision != target and known(sts_revision):
            out[str(i)] = sts_revision  # type: ignore[assignment]
        else:
            out[str(i)] = target
    return out
