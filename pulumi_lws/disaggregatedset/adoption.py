"""DisaggregatedSet adoption: operator-free mode taking over a fleet the upstream DisaggregatedSet
and LeaderWorkerSet controllers created (pure; docs/modes.md, "Adoption").

Upstream's fleet: the DS controller made one child LeaderWorkerSet CR per (slice, revision, role)
named ``<ds>-<slice>-<rev8>-<role>`` (owned by the DS CR), the LWS controller expanded each into
StatefulSets / Deployments, Services and ControllerRevisions (owned by the child CR). Both CRs
deleted with ``--cascade=orphan`` (or the controllers gone), the native objects keep running.

* **DS revision** (:func:`target_revision`): ``rev8`` is sha256 over Go's JSON, which pulumi-lws
  cannot reproduce byte for byte (:mod:`~pulumi_lws.disaggregatedset.revision`), so the spec's own
  key names no observed child. When it is not observed, the observed revision whose children's
  *content* matches the spec becomes the target under upstream's key: every spec role has a
  child of it, every child of it is of a spec role, and each child passes the LWS path's
  :func:`~pulumi_lws.lws.revision.matching_revision` (upstream ``SetMatchesRevision``) against its
  recorded LWS ControllerRevision, with the same groupIdentity (a Deployment leader = Hash). The
  spec's child is compared in upstream's shape (:func:`upstream_child_lws`: the DS labels and
  placement affinities, none of pulumi-lws's ``DISAGGREGATEDSET_*`` env, which upstream never
  injects). Since the adopted key is not :func:`compute_revision`, the renderer draws its children
  from their recorded templates (``render.recorded_child_lws``), and each child's LWS catalog
  adopts upstream's template hash in turn: no pod template changes, no pod restarts. The env
  variables appear with the next rollout's children.
* **ownership** (:func:`with_disown`): every observed object with an ownerReference to a
  DisaggregatedSet (the ``<lws>-prv`` Services) or to a child LeaderWorkerSet (everything the LWS
  controller made) gets a uid-guarded ``disown`` action (:func:`pulumi_lws.core.features.adoption.disown_actions`).

Invariant: on a fleet pulumi-lws created (the spec's key observed, or no content match; no
upstream owner) the target is :func:`compute_revision` and no action is added.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.core.contract.workload import UpstreamController
from pulumi_lws.core.features.adoption import disown_actions
from pulumi_lws.disaggregatedset import names
from pulumi_lws.disaggregatedset.api import DisaggregatedSet
from pulumi_lws.disaggregatedset.observe import ChildState, split_by_child
from pulumi_lws.disaggregatedset.render import (
    _decorate_template,
    _with_child_metadata,
    child_labels,
    recorded_revision_data,
)
from pulumi_lws.disaggregatedset.revision import compute_revision
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.revision import Revision, matching_revision
from pulumi_lws.lws.workload import LeaderWorkerSetWorkload


def upstream_child_lws(
    ds: DisaggregatedSet, role: str, slice_index: int, revision: str, replicas: int
) -> LeaderWorkerSet:
    """The child LWS as upstream's ``LeaderWorkerSetManager.Create`` builds it: the renderer's
    :func:`~pulumi_lws.disaggregatedset.render.child_lws` without pulumi-lws's env variables."""
    lws = ds.role_spec_as_lws(role, name=names.child_lws(ds.name, slice_index, revision, role))
    lws.spec.replicas = int(replicas)
    labels = child_labels(ds.name, slice_index, revision, role)
    _with_child_metadata(lws, labels, None)
    lwt = lws.spec.leader_worker_template
    lwt.worker_template = _decorate_template(lwt.worker_template, labels, [], ds, slice_index)
    if lwt.leader_template is not None:
        lwt.leader_template = _decorate_template(lwt.leader_template, labels, [], ds, slice_index)
    return lws


def child_matches(ds: DisaggregatedSet, child: ChildState, part: Snapshot) -> bool:
    """``child``'s recorded template and groupIdentity are the spec's for its role (module docstring)."""
    if child.role not in ds.role_names:
        return False
    identity = ds.role(child.role).spec.group_identity or "Ordinal"
    if child.workload and child.hash_mode != (identity == "Hash"):
        return False
    data = recorded_revision_data(part, child.name)
    if data is None:
        return False
    lws = upstream_child_lws(ds, child.role, child.slice, child.revision, child.replicas)
    return matching_revision(lws, [Revision("recorded", 0, data)], "") is not None


def adopted_revision(ds: DisaggregatedSet, children: Sequence[ChildState], snapshot: Snapshot) -> str | None:
    """The observed DS revision (newest child first) whose children's content matches the spec, or None."""
    live = [c for c in children if not c.being_deleted]
    by_revision: dict[str, list[ChildState]] = {}
    for c in live:
        by_revision.setdefault(c.revision, []).append(c)
    newest = sorted(by_revision, key=lambda r: (-max((c.created or 0.0) for c in by_revision[r]), r))
    parts = split_by_child(snapshot)
    for rev in newest:
        group = by_revision[rev]
        if {c.role for c in group} != set(ds.role_names):
            continue
        if all(child_matches(ds, c, parts.get(c.name, snapshot)) for c in group):
            return rev
    return None


def target_revision(ds: DisaggregatedSet, children: Sequence[ChildState], snapshot: Snapshot) -> str:
    """:func:`compute_revision` unless no child of it is observed and an observed revision's content
    matches the spec (adoption: upstream's key is kept)."""
    own = compute_revision(ds)
    if any(c.revision == own for c in children):
        return own
    return adopted_revision(ds, children, snapshot) or own


#: the child LeaderWorkerSet CRs upstream's DS controller created (they own the native objects)
CHILD_UPSTREAM: UpstreamController = LeaderWorkerSetWorkload.upstream


def with_disown(reconciled: Any, snapshot: Snapshot, upstream: UpstreamController) -> Any:
    """``reconciled`` with one ``disown`` action per object a DisaggregatedSet (``upstream``) or a
    child LeaderWorkerSet owns, after the planner's actions (they change no group)."""
    import dataclasses

    # only objects with an ownerReference of one of the owners' kinds can be disowned
    # (upstream_owners): one pass to find them — not every pod, whose owner is a StatefulSet —
    # then both owners
    kinds = {*upstream.owner_kinds, *CHILD_UPSTREAM.owner_kinds}
    owned = [
        o
        for o in snapshot
        if any(ref.get("kind") in kinds for ref in (o.get("metadata") or {}).get("ownerReferences") or ())
    ]
    extra = disown_actions(owned, upstream) + disown_actions(owned, CHILD_UPSTREAM)
    if not extra:
        return reconciled
    extra = tuple(sorted(extra, key=lambda a: (a.kind, a.name)))
    stage = dataclasses.replace(reconciled.stage, actions=reconciled.stage.actions + extra)
    return dataclasses.replace(reconciled, stage=stage)
