"""What a DisaggregatedSet reconcile reads, and its per-child readings (docs/disaggregatedset.md,
"Observation" and "Rendering and observation").

* :func:`ds_scope`: ONE scope for the whole DisaggregatedSet — the LWS kinds
  (:data:`pulumi_lws.lws.observe.LWS_KINDS`) labelled ``disaggregatedset.x-k8s.io/name=<ds>``. The
  renderer stamps the four DS labels on the metadata of every object a child renders and on both
  pod templates, so one LIST per kind reads every child, whatever the number of roles, slices and
  revisions (the DS's own ``<lws>-prv`` Services carry the name label too), plus the
  ``DisaggregatedSetRoleScaler`` kind when a role is External (its scalers carry the label).
  ControllerRevisions are the exception: LISTed by ``leaderworkerset.sigs.k8s.io/name``'s
  existence (still one LIST), since upstream's LWS controller labels an adopted child's revisions
  with only that (:mod:`~pulumi_lws.disaggregatedset.adoption`), and without
  ``leaderworkerset.sigs.k8s.io/group-index`` (the children's worker StatefulSets' own history;
  the leader StatefulSets' is read, as a LeaderWorkerSet's scope reads it:
  :func:`pulumi_lws.lws.observe.lws_scope`); :func:`split_by_child` drops the parts of other
  LeaderWorkerSets;
* :func:`split_by_child`: the snapshot cut per child LWS by ``leaderworkerset.sigs.k8s.io/name``
  (Nodes in every part; objects without the label — the DS Services — in none), so each child is
  reconciled by the LWS pipeline against exactly what an LWS scope would have read;
* :func:`observe_children`: one :class:`ChildState` per child found. A child is identified by the
  DS labels of its leader workload (the Ordinal leader StatefulSet / Hash leader Deployment named
  after the child) or, when that is gone or was never applied, of any other object of the child
  (ControllerRevision, pods, worker StatefulSets...): a half-applied or half-deleted child is still
  seen, so it is declared again or cleaned up.

Readings (pure; no planner, no LWS model needed):

* ``replicas``: the child LWS's ``spec.replicas`` as last applied — the leader StatefulSet's
  ``leaderworkerset.sigs.k8s.io/replicas`` annotation (its ``spec.replicas`` may hold surge), the
  leader Deployment's ``spec.replicas`` in Hash mode, 0 when no leader workload exists;
* ``ready`` / ``updated``: counted from the child's part of the snapshot with
  :func:`pulumi_lws.lws.trace_view.count_groups` (the totals of ``read_groups``, no cell or
  detail built: one state per leader pod) — the same legend as the LWS status
  (``readyReplicas`` = groups whose leader pod is Running+Ready and, for size > 1, whose worker
  StatefulSet is ready, surge included; ``updated`` = groups on the leader workload's
  ``template-revision-hash``). ``lws_status`` would need the child's model and the stage of a
  reconcile; this reading needs neither, so the planner's inputs never depend on the renderer;
* ``live``: the groups the child runs — its non-terminating leader pods, or the leader workload's
  own ``spec.replicas`` when more (0 once it is being deleted): more than ``replicas`` while the
  LWS controller keeps unready surge groups during a scale-down (the surge ceiling counts them);
* ``initial_replicas``: the ``disaggregatedset.x-k8s.io/initial-replicas`` annotation, which the
  LWS renderer carries from the child LWS metadata onto the leader StatefulSet/Deployment
  (recorded in the cluster, not in a journal); None when absent or not a decimal integer
  (upstream ``strconv.Atoi`` fails: no baseline);
* ``replaces``: pulumi-lws's ``pulumi-lws.io/replaces-revisions`` annotation, carried the same
  way: the target child is catching up on a rollout from those revisions (None when absent);
* ``created``: the earliest ``creationTimestamp`` of the child's objects (epoch seconds; None when
  none carries one) — upstream orders revisions by their children's creation (newest first) and
  the progress deadline runs from it;
* ``being_deleted``: the leader workload has a ``deletionTimestamp``, or there is none and every
  object of the child is being deleted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pulumi_lws.core.contract.ports import Scope, without_labels
from pulumi_lws.core.contract.snapshot import Snapshot, annotations_of, is_deleting, labels_of
from pulumi_lws.core.k8s.timestamps import parse_timestamp
from pulumi_lws.disaggregatedset import labels as DL
from pulumi_lws.disaggregatedset.api import DisaggregatedSet
from pulumi_lws.disaggregatedset.external import SCALER_KIND
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.observe import LWS_KINDS
from pulumi_lws.lws.trace_view import count_groups

NODE = "Node"
CONTROLLER_REVISION = "ControllerRevision"
_DECIMAL = re.compile(r"[+-]?[0-9]+")


def ds_scope(namespace: str, name: str, *, nodes: bool = False, scalers: bool = False) -> Scope:
    """Every object of :data:`LWS_KINDS` in ``namespace`` labelled ``disaggregatedset.x-k8s.io/name=<name>``
    (plus every Node when ``nodes``: a child using group-level exclusive topology needs them; plus
    the ``DisaggregatedSetRoleScaler`` kind when ``scalers``: some role is External, its value is
    read back — one more LIST, only then)."""
    # ControllerRevisions by the LWS name label's existence (still one LIST): the upstream LWS
    # controller labels a child's revisions with only its name and hash, so an adopted fleet's
    # revisions carry no DS label; split_by_child keeps only the children this DS labels.
    return Scope(
        namespace,
        {DL.NAME: name},
        (*LWS_KINDS, SCALER_KIND) if scalers else LWS_KINDS,
        nodes,
        kind_selectors=((CONTROLLER_REVISION, without_labels({L.NAME: None}, L.GROUP_INDEX)),),
    )


def child_name_of(obj: Mapping[str, Any]) -> str | None:
    """The child LWS an object belongs to (its ``leaderworkerset.sigs.k8s.io/name`` label)."""
    return labels_of(obj).get(L.NAME) or None


def split_by_child(snapshot: Snapshot) -> dict[str, Snapshot]:
    """``{child LWS name: its objects + every Node}``, children sorted by name; ``now`` kept.

    Only children of this DisaggregatedSet: :func:`ds_scope` reads ControllerRevisions by the LWS
    name label alone, so a child whose only objects are revisions forms a part only when one of
    them carries the DS name the other (DS-selected) kinds carry — those of other LeaderWorkerSets
    and DisaggregatedSets of the namespace form none."""
    # one pass, each object's labels read once (a reconcile splits a 10,000-group fleet's
    # 30,000 objects: docs/performance.md)
    nodes: dict[tuple[str, str], Mapping[str, Any]] = {}
    parts: dict[str, dict[tuple[str, str], Mapping[str, Any]]] = {}
    selected: set[str] = set()
    labelled: set[str] = set()
    revision_owners: list[tuple[str, str | None]] = []  # (child, DS name) of every ControllerRevision
    for key, obj in snapshot.objects.items():
        kind = key[0]
        if kind == NODE:
            nodes[key] = obj
            continue
        labels = labels_of(obj)
        ds_name = labels.get(DL.NAME)
        if kind != CONTROLLER_REVISION and ds_name is not None:
            selected.add(ds_name)
        child = labels.get(L.NAME) or None
        if child is None:
            continue
        part = parts.get(child)
        if part is None:
            part = parts[child] = {}
        part[key] = obj
        if kind == CONTROLLER_REVISION:
            revision_owners.append((child, ds_name))
        else:
            labelled.add(child)
    for child, ds_name in revision_owners:
        if ds_name is not None and (ds_name in selected or not selected):
            labelled.add(child)
    return {
        child: Snapshot({**objs, **nodes} if nodes else objs, snapshot.now, reuse=snapshot.reuse)
        for child, objs in sorted(parts.items())
        if child in labelled
    }


@dataclass(frozen=True)
class ChildState:
    """One child LeaderWorkerSet as observed (module docstring: what each field reads)."""

    name: str
    role: str
    slice: int
    revision: str
    replicas: int  # the child LWS spec.replicas as last applied (0 without a leader workload)
    ready: int  # ready groups (the LWS status readyReplicas rule)
    initial_replicas: int | None  # the initial-replicas annotation (None: absent)
    created: float | None  # earliest creationTimestamp of the child's objects (epoch seconds)
    being_deleted: bool = False
    updated: int = 0  # groups on the leader workload's template-revision-hash
    hash_mode: bool = False  # the leader workload is a Deployment (groupIdentity Hash)
    workload: bool = True  # the leader StatefulSet / Deployment is observed
    live: int | None = None  # groups running (module docstring); None: not read
    replaces: str | None = None  # the replaces-revisions annotation (module docstring); None: absent

    @property
    def key(self) -> str:
        """``"<slice>/<role>/<revision>"`` (the stage planner's child key)."""
        return f"{self.slice}/{self.role}/{self.revision}"


def parse_initial_replicas(value: Any) -> int | None:
    """Upstream ``parseInitialReplicasAnnotation`` (``strconv.Atoi``): a decimal integer, else None."""
    if value is None:
        return None
    text = str(value)
    return int(text) if _DECIMAL.fullmatch(text) else None


def _leader_workload(part: Snapshot, name: str) -> tuple[Mapping[str, Any] | None, bool]:
    sts = part.get("StatefulSet", name)
    if sts is not None:
        return sts, False
    dep = part.get("Deployment", name)
    return dep, dep is not None


def _identity(ds_name: str, candidates: Iterable[Mapping[str, Any]]) -> tuple[str, int, str] | None:
    """(role, slice, revision) from the first candidate carrying this DS's labels."""
    for obj in candidates:
        lbl = labels_of(obj)
        if lbl.get(DL.NAME) != ds_name or not lbl.get(DL.ROLE) or not lbl.get(DL.REVISION):
            continue
        raw = lbl.get(DL.SLICE)
        if raw is None or raw == "":
            slice_index = 0  # a legacy (pre-slices) object is slice 0 (upstream SliceLabelMatches)
        elif _DECIMAL.fullmatch(raw) and int(raw) >= 0:
            slice_index = int(raw)
        else:
            continue
        return lbl[DL.ROLE], slice_index, lbl[DL.REVISION]
    return None


def _spec_replicas(workload: Mapping[str, Any] | None, hash_mode: bool) -> int:
    if workload is None:
        return 0
    spec_replicas = int((workload.get("spec") or {}).get("replicas", 1))
    if hash_mode:
        return spec_replicas
    annotated = annotations_of(workload).get(L.REPLICAS)
    return int(annotated) if annotated is not None and _DECIMAL.fullmatch(annotated) else spec_replicas


def _template_size(workload: Mapping[str, Any] | None) -> int:
    tmpl = ((workload or {}).get("spec") or {}).get("template") or {}
    raw = ((tmpl.get("metadata") or {}).get("annotations") or {}).get(L.SIZE, "1")
    return int(raw) if _DECIMAL.fullmatch(str(raw)) else 1


def observe_child(ds_name: str, name: str, part: Snapshot, *, counts: bool = True) -> ChildState | None:
    """The :class:`ChildState` of child ``name`` from its part of the snapshot (None when no object
    of it carries this DisaggregatedSet's labels). ``counts`` False: the group counts are not read
    (``ready`` and ``updated`` 0, ``live`` None), for a reader of the identity fields only (name,
    role, slice, revision, replicas, initial_replicas, replaces, created, being_deleted,
    hash_mode, workload), which equal the counted reading's."""
    objs = [o for (kind, _), o in part.objects.items() if kind != NODE]
    workload, hash_mode = _leader_workload(part, name)
    identity = _identity(ds_name, [workload]) if workload is not None else None
    if identity is None:  # else the first object in (kind, name) order carrying the labels
        identity = _identity(ds_name, sorted(objs, key=lambda o: (o["kind"], o["metadata"]["name"])))
    if identity is None:
        return None
    role, slice_index, revision = identity
    replicas = _spec_replicas(workload, hash_mode)
    target = labels_of(workload).get(L.TEMPLATE_REVISION_HASH, "") if workload is not None else ""
    groups = count_groups(part, name, _template_size(workload), target, hash_mode) if counts else None
    initial = (
        parse_initial_replicas(annotations_of(workload).get(DL.INITIAL_REPLICAS)) if workload is not None else None
    )
    replaces = (annotations_of(workload).get(DL.REPLACES) or None) if workload is not None else None
    deleting = is_deleting(workload) if workload is not None else all(is_deleting(o) for o in objs)
    live = None if groups is None else 0 if deleting else max(groups.live, groups.replicas)
    return ChildState(
        name=name,
        role=role,
        slice=slice_index,
        revision=revision,
        replicas=replicas,
        ready=groups.available if groups is not None else 0,
        initial_replicas=initial,
        created=_earliest_creation(objs),
        being_deleted=deleting,
        updated=groups.updated if groups is not None else 0,
        hash_mode=hash_mode,
        workload=workload is not None,
        live=live,
        replaces=replaces,
    )


def _earliest_creation(objs: Iterable[Mapping[str, Any]]) -> float | None:
    """The earliest ``creationTimestamp`` of ``objs`` (epoch seconds; None when none carries one),
    each distinct timestamp parsed once (a child's objects share a handful)."""
    seen: set[str] = set()
    earliest = None
    for o in objs:
        raw = (o.get("metadata") or {}).get("creationTimestamp")
        if isinstance(raw, str):
            if raw in seen:
                continue
            seen.add(raw)
        t = parse_timestamp(raw)
        if t is not None and (earliest is None or t < earliest):
            earliest = t
    return earliest


def observe_children(
    ds: DisaggregatedSet, snapshot: Snapshot, parts: Mapping[str, Snapshot] | None = None, *, counts: bool = True
) -> list[ChildState]:
    """Every child LWS of ``ds`` found in ``snapshot`` (a :func:`ds_scope` read), sorted by
    (slice, role, created, name). ``parts``: ``split_by_child(snapshot)`` when the caller has it.
    ``counts`` False: no group counted (:func:`observe_child`; the same children in the same order,
    their identity fields equal)."""
    parts = split_by_child(snapshot) if parts is None else parts
    found = (observe_child(ds.name, name, part, counts=counts) for name, part in parts.items())
    children = [c for c in found if c is not None]
    return sorted(
        children, key=lambda c: (c.slice, c.role, c.created if c.created is not None else float("inf"), c.name)
    )


def revisions_newest_first(children: Sequence[ChildState], slice_index: int) -> list[str]:
    """The revisions observed in one slice, newest first: upstream sorts by the max
    creationTimestamp of each revision's children (ties and unknown times: by revision name)."""
    newest: dict[str, float] = {}
    for c in children:
        if c.slice == slice_index:
            t = c.created if c.created is not None else float("-inf")
            newest[c.revision] = max(newest.get(c.revision, float("-inf")), t)
    return [rev for rev, _ in sorted(newest.items(), key=lambda kv: (-kv[1], kv[0]))]
