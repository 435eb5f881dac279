"""DisaggregatedSet children -> native objects, through the project's LeaderWorkerSet pipeline.

No child LeaderWorkerSet object is ever created: each child is a :class:`LeaderWorkerSet` *model*
reconciled by :func:`pulumi_lws.lws.reconcile.reconcile` into the StatefulSets / Deployments,
Services, ControllerRevisions and gang objects an LWS controller would have made (design:
docs/disaggregatedset.md, "Rendering and observation").

* :func:`child_lws`: upstream ``LeaderWorkerSetManager.Create`` — the role's LWS spec named
  ``<ds>-<slice>-<rev8>-<role>``, ``spec.replicas`` overridden, ``app=<ds>-<slice>-<role>`` and the
  four ``disaggregatedset.x-k8s.io/*`` labels merged over the user's labels on the LWS metadata
  and both pod templates (DS labels win), the role's annotations copied, the ``initial-replicas``
  annotation when asked (the key is the controller's: a user-written one is dropped), env
  ``DISAGGREGATEDSET_{NAME,ROLE,SLICE,REVISION}`` first in every (init)container of both templates
  (replacing same-named user variables; pulumi-lws's, per the LWS docs — upstream injects none),
  and the placement affinities of ``SetPlacementAffinities`` on both templates;
* :func:`render_children`: one LWS reconcile per declared child against ITS part of the snapshot
  (:func:`pulumi_lws.disaggregatedset.observe.split_by_child`), the four DS labels stamped on the
  metadata of every manifest it returns (so :func:`~pulumi_lws.disaggregatedset.observe.ds_scope`
  reads them all back), manifests and dependencies concatenated (refs stay valid: every object
  name is prefixed by its child's unique name; a cross-child name collision raises);
* **a child of an old revision is re-rendered on its own template**: the covered fields
  (``leaderWorkerTemplate``, ``networkConfig``) come from the child's observed LWS
  ControllerRevision (the one its leader workload's ``template-revision-hash`` names, else the
  highest-numbered), so draining an old revision never rolls its groups to the new template; its
  uncovered fields (rolloutStrategy, startupPolicy, ...) and metadata come from the live role,
  as for the target child; its groupIdentity is the observed one (a Deployment leader = Hash).
  A removed role's child keeps only its recorded template;
* :func:`services`: upstream ``ServiceManager.buildService`` — headless ``<lws>-prv`` per (slice,
  revision, role), **no** publishNotReadyAddresses, selector ``{name, role, revision, slice}``,
  labels = the selector (plus pulumi-lws's ownership labels, on every object it renders). Which
  revisions qualify is the caller's decision (upstream: the target once every spec role has
  ``readyReplicas >= 1``; an old revision's services stay while it is still ready on all roles).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple, Protocol

from pulumi_lws.core.contract.dependencies import Ref, ref_of
from pulumi_lws.core.contract.snapshot import Snapshot, labels_of
from pulumi_lws.core.contract.stage import Stage
from pulumi_lws.core.contract.workload import Reconciled
from pulumi_lws.core.k8s.manifests import merged, metadata
from pulumi_lws.core.k8s.objectmeta import ObjectMeta
from pulumi_lws.disaggregatedset import labels as DL
from pulumi_lws.disaggregatedset import names
from pulumi_lws.disaggregatedset.api import DisaggregatedRole, DisaggregatedSet
from pulumi_lws.disaggregatedset.api.disaggregatedset import (
    EXCLUSIVE_SLICE,
    EXCLUSIVE_TOPOLOGY,
)
from pulumi_lws.disaggregatedset.observe import NODE, split_by_child
from pulumi_lws.disaggregatedset.revision import compute_revision
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.reconcile import ReconcileOptions, reconcile
from pulumi_lws.lws.render.pod import prepend_env, value_env
from pulumi_lws.lws.revision import apply_revision, is_lws_revision_data

#: the LWS reconcile options of every child (upstream's choices)
DEFAULT_OPTIONS = ReconcileOptions()


class ChildSpec(Protocol):
    """What the renderer reads of one planned child: the stage planner's ``ChildPlan``
    (``rollout.stage_planner.ChildPlan``) fits; a plan with ``declared`` False is not rendered."""

    @property
    def role(self) -> str: ...
    @property
    def slice(self) -> int: ...
    @property
    def revision(self) -> str: ...
    @property
    def replicas(self) -> int: ...
    @property
    def initial_replicas(self) -> int | None: ...
    @property
    def replaces(self) -> str | None: ...


class RenderedChildren(NamedTuple):
    """Every declared child's objects in plan order, their apply order, and each child's LWS stage
    (``{child LWS name: Stage}``; the stage's ``actions`` are the child's imperative actions)
    without its per-group detail (``groups``, ``group_revisions`` empty: the DS plans from its own
    observation, and a child's 10,000 group views would otherwise live until the reconcile returns)."""

    manifests: tuple[Mapping[str, Any], ...]
    dependencies: dict[Ref, tuple[Ref, ...]]
    stages: dict[str, Stage]


# ---- labels, env, placement ----------------------------------------------------------------


def ds_labels(ds_name: str, slice_index: int, revision: str, role: str) -> dict[str, str]:
    """The four ``disaggregatedset.x-k8s.io/*`` labels (stamped on every rendered object)."""
    return {DL.NAME: ds_name, DL.ROLE: role, DL.SLICE: str(slice_index), DL.REVISION: revision}


def child_labels(ds_name: str, slice_index: int, revision: str, role: str) -> dict[str, str]:
    """Upstream ``GenerateLabels``: ``app=<ds>-<slice>-<role>`` + the four DS labels."""
    return {DL.APP: names.app_label(ds_name, slice_index, role), **ds_labels(ds_name, slice_index, revision, role)}


def ds_env(ds_name: str, slice_index: int, revision: str, role: str) -> list[dict[str, Any]]:
    """``DISAGGREGATEDSET_{NAME,ROLE,SLICE,REVISION}`` (the seeds' LWS page), in that order."""
    return [
        value_env(DL.ENV_NAME, ds_name),
        value_env(DL.ENV_ROLE, role),
        value_env(DL.ENV_SLICE, str(slice_index)),
        value_env(DL.ENV_REVISION, revision),
    ]


def _term(exprs: list[dict[str, Any]], topology: str) -> dict[str, Any]:
    return {"labelSelector": {"matchExpressions": exprs}, "topologyKey": topology}


def _append(spec: dict[str, Any], kind: str, term: dict[str, Any]) -> None:
    section = spec.setdefault("affinity", {}).setdefault(kind, {})
    section.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(term)


def add_placement_affinities(
    spec: dict[str, Any], ds_name: str, slice_index: int, placement_type: str, topology: str
) -> None:
    """Upstream ``SetPlacementAffinities`` on one pod spec (in place; existing affinity kept, terms
    appended in upstream's order). No-op for ``None`` or an empty topology (upstream's guard)."""
    if placement_type not in (EXCLUSIVE_SLICE, EXCLUSIVE_TOPOLOGY) or not topology:
        return
    s = str(slice_index)
    _append(
        spec,
        "podAffinity",
        _term(
            [
                {"key": DL.NAME, "operator": "In", "values": [ds_name]},
                {"key": DL.SLICE, "operator": "In", "values": [s]},
            ],
            topology,
        ),
    )
    spread: list[dict[str, Any]] = [{"key": DL.NAME, "operator": "In", "values": [ds_name]}]
    if slice_index == 0:  # a label-less legacy pod is slice 0, not another slice
        spread.append({"key": DL.SLICE, "operator": "Exists"})
    spread.append({"key": DL.SLICE, "operator": "NotIn", "values": [s]})
    _append(spec, "podAntiAffinity", _term(spread, topology))
    if placement_type == EXCLUSIVE_TOPOLOGY:
        _append(
            spec,
            "podAntiAffinity",
            _term(
                [
                    {"key": DL.NAME, "operator": "Exists"},
                    {"key": DL.NAME, "operator": "NotIn", "values": [ds_name]},
                    {"key": DL.SLICE, "operator": "Exists"},
                ],
                topology,
            ),
        )


def _decorate_template(
    template: Mapping[str, Any],
    labels: Mapping[str, str],
    env: list[dict[str, Any]],
    ds: DisaggregatedSet,
    slice_index: int,
) -> dict[str, Any]:
    out = copy.deepcopy(dict(template))
    meta = dict(out.get("metadata") or {})
    meta["labels"] = merged(meta.get("labels"), labels)
    out["metadata"] = meta
    spec = dict(out.get("spec") or {})
    prepend_env(spec, env)
    add_placement_affinities(spec, ds.name, slice_index, ds.placement_type, ds.placement_topology)
    out["spec"] = spec
    return out


# ---- the child LWS -------------------------------------------------------------------------


def _role(ds: DisaggregatedSet, role: DisaggregatedRole | str) -> DisaggregatedRole:
    return ds.role(role) if isinstance(role, str) else role


def _with_child_metadata(
    lws: LeaderWorkerSet, labels: Mapping[str, str], initial_replicas: int | None, replaces: str | None = None
) -> None:
    lws.metadata.labels = merged(lws.metadata.labels, labels)
    annotations = {k: v for k, v in lws.metadata.annotations.items() if k not in (DL.INITIAL_REPLICAS, DL.REPLACES)}
    if initial_replicas is not None:
        annotations[DL.INITIAL_REPLICAS] = str(int(initial_replicas))
    if replaces:
        annotations[DL.REPLACES] = replaces
    lws.metadata.annotations = annotations


def child_lws(
    ds: DisaggregatedSet,
    role: DisaggregatedRole | str,
    slice_index: int,
    revision: str,
    replicas: int,
    *,
    initial_replicas: int | None = None,
    replaces: str | None = None,
) -> LeaderWorkerSet:
    """The child LeaderWorkerSet of ``role`` in ``slice_index`` at DS ``revision`` (module docstring)."""
    r = _role(ds, role)
    lws = ds.role_spec_as_lws(r, name=names.child_lws(ds.name, slice_index, revision, r.name))
    lws.spec.replicas = int(replicas)
    labels = child_labels(ds.name, slice_index, revision, r.name)
    _with_child_metadata(lws, labels, initial_replicas, replaces)
    env = ds_env(ds.name, slice_index, revision, r.name)
    lwt = lws.spec.leader_worker_template
    lwt.worker_template = _decorate_template(lwt.worker_template, labels, env, ds, slice_index)
    if lwt.leader_template is not None:
        lwt.leader_template = _decorate_template(lwt.leader_template, labels, env, ds, slice_index)
    return lws


def recorded_revision_data(part: Snapshot, name: str) -> Mapping[str, Any] | None:
    """The LWS ControllerRevision data child ``name`` last rendered: the revision its leader
    StatefulSet/Deployment names (``template-revision-hash``), else the highest-numbered one."""
    workload = part.get("StatefulSet", name) or part.get("Deployment", name)
    key = labels_of(workload).get(L.TEMPLATE_REVISION_HASH) if workload is not None else None
    crs = [cr for cr in part.list("ControllerRevision", **{L.NAME: name}) if is_lws_revision_data(cr.get("data"))]
    keyed = [cr for cr in crs if key and labels_of(cr).get(L.TEMPLATE_REVISION_HASH) == key]
    pool = keyed or crs
    if not pool:
        return None
    data: Mapping[str, Any] = max(pool, key=lambda cr: int(cr.get("revision") or 0))["data"]
    return data


def recorded_child_lws(
    ds: DisaggregatedSet,
    role: str,
    slice_index: int,
    revision: str,
    replicas: int,
    part: Snapshot,
    *,
    initial_replicas: int | None = None,
) -> LeaderWorkerSet:
    """A child of a revision other than the target (or of a removed role), on the template it was
    rendered with (module docstring). Falls back to :func:`child_lws` when no LWS
    ControllerRevision of it is observed and the role is still in the spec; raises ``ValueError``
    when the role was removed and nothing of its template is recorded."""
    name = names.child_lws(ds.name, slice_index, revision, role)
    data = recorded_revision_data(part, name)
    in_spec = role in ds.role_names
    if data is None:
        if in_spec:
            return child_lws(ds, role, slice_index, revision, replicas, initial_replicas=initial_replicas)
        raise ValueError(
            f"child LeaderWorkerSet {name!r} of removed role {role!r}: no ControllerRevision "
            "observed, its template cannot be rendered"
        )
    if in_spec:
        base = ds.role_spec_as_lws(role, name=name)
    else:
        base = LeaderWorkerSet(metadata=ObjectMeta(name=name, namespace=ds.namespace))
    base.spec.replicas = int(replicas)
    _with_child_metadata(base, child_labels(ds.name, slice_index, revision, role), initial_replicas)
    if part.get("Deployment", name) is not None:
        base.spec.group_identity = "Hash"
    elif part.get("StatefulSet", name) is not None:
        base.spec.group_identity = "Ordinal"
    return apply_revision(base, data)


# ---- children -> manifests -----------------------------------------------------------------


def _stamped(manifest: Mapping[str, Any], labels: Mapping[str, str]) -> Mapping[str, Any]:
    """``manifest`` with ``labels`` merged over its metadata labels (a copy; the manifest itself
    when it carries them already — a child's workloads do, from the child LWS's labels)."""
    present = labels_of(manifest)
    if all(present.get(k) == v for k, v in labels.items()):
        return manifest
    out = dict(manifest)
    meta = dict(out.get("metadata") or {})
    meta["labels"] = merged(meta.get("labels"), labels)
    out["metadata"] = meta
    return out


def _nodes_only(snapshot: Snapshot) -> Snapshot:
    return Snapshot({k: o for k, o in snapshot.objects.items() if k[0] == NODE}, snapshot.now)


def reconcile_child(
    ds: DisaggregatedSet,
    child: ChildSpec,
    part: Snapshot,
    *,
    target_revision: str | None = None,
    options: ReconcileOptions = DEFAULT_OPTIONS,
) -> tuple[LeaderWorkerSet, Reconciled]:
    """One child's LWS model and its LWS reconcile against ``part`` (its objects + Nodes); the
    manifests carry the four DS labels on their metadata."""
    target = target_revision if target_revision is not None else compute_revision(ds)
    if child.revision == target and child.role in ds.role_names:
        lws = child_lws(
            ds,
            child.role,
            child.slice,
            child.revision,
            child.replicas,
            initial_replicas=child.initial_replicas,
            replaces=getattr(child, "replaces", None),
        )
    else:
        lws = recorded_child_lws(
            ds, child.role, child.slice, child.revision, child.replicas, part, initial_replicas=child.initial_replicas
        )
    rec = reconcile(lws, part, options)
    stamp = ds_labels(ds.name, child.slice, child.revision, child.role)
    manifests = tuple(_stamped(m, stamp) for m in rec.manifests)
    return lws, Reconciled(stage=rec.stage, manifests=manifests, catalog=rec.catalog, dependencies=rec.dependencies)


def render_children(
    ds: DisaggregatedSet,
    children: Sequence[ChildSpec],
    snapshot: Snapshot,
    *,
    options: ReconcileOptions = DEFAULT_OPTIONS,
    parts: Mapping[str, Snapshot] | None = None,
) -> RenderedChildren:
    """Every declared child (``declared`` not False) reconciled by the LWS pipeline against its
    part of ``snapshot`` (a :func:`~pulumi_lws.disaggregatedset.observe.ds_scope` read).
    ``parts``: ``split_by_child(snapshot)`` when the caller has it."""
    parts = split_by_child(snapshot) if parts is None else parts
    empty = _nodes_only(snapshot)
    target = compute_revision(ds)
    manifests: list[Mapping[str, Any]] = []
    dependencies: dict[Ref, tuple[Ref, ...]] = {}
    stages: dict[str, Stage] = {}
    owner: dict[Ref, str] = {}
    for child in children:
        if getattr(child, "declared", True) is False:
            continue
        name = names.child_lws(ds.name, child.slice, child.revision, child.role)
        if name in stages:
            raise ValueError(f"child LeaderWorkerSet {name!r} is planned twice")
        _, rec = reconcile_child(ds, child, parts.get(name, empty), target_revision=target, options=options)
        for m in rec.manifests:
            ref = ref_of(m)
            if ref in owner:
                raise ValueError(f"{ref} is rendered by both child {owner[ref]!r} and child {name!r}")
            owner[ref] = name
        manifests.extend(rec.manifests)
        dependencies.update(rec.dependencies)
        stages[name] = dataclasses.replace(rec.stage, groups=(), group_revisions={})
    # no order check of the whole here: each child's LWS reconcile checked its own order, its
    # dependencies name only its own manifests (merge_dependencies) and the children's refs are
    # disjoint (above), so every dependency still precedes its dependent in the concatenation
    return RenderedChildren(tuple(manifests), dependencies, stages)


# ---- Services ------------------------------------------------------------------------------


def service(ds: DisaggregatedSet, slice_index: int, revision: str, role: str) -> dict[str, Any]:
    """Upstream ``buildService``: headless ``<lws>-prv`` selecting that child's pods."""
    selector = {DL.NAME: ds.name, DL.ROLE: role, DL.REVISION: revision, DL.SLICE: str(slice_index)}
    name = names.service(names.child_lws(ds.name, slice_index, revision, role))
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(name, ds.namespace, selector),
        "spec": {"clusterIP": "None", "selector": dict(selector)},
    }


def services(
    ds: DisaggregatedSet, revisions: Iterable[str], slices: Iterable[int], *, roles: Iterable[str] | None = None
) -> list[dict[str, Any]]:
    """The Services of ``revisions`` (those the caller found ready on all roles, the target
    first when it qualifies) in every slice of ``slices``: one per spec role (or ``roles``), in
    slice, then given revision, then role order."""
    role_names = list(roles) if roles is not None else ds.role_names
    revs = list(dict.fromkeys(revisions))
    return [service(ds, s, rev, role) for s in slices for rev in revs for role in role_names]
