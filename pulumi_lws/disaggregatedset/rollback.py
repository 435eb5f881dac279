"""DisaggregatedSet rollback: the revisions its old-revision children still record (pure).

A DisaggregatedSet revision covers each role's ``leaderWorkerTemplate`` (and the role names). It
keeps no ControllerRevision of its own: each child LeaderWorkerSet ``<ds>-<slice>-<rev>-<role>``
keeps the LWS ControllerRevision of the template it was rendered with. So a revision is recorded
while its children exist — mid-rollout, or during a rollback — and gone once a rollout completed
and drained them. Revisions are ordered by their children's creation (upstream's order); only
roles of the current spec are patched (by position of the role in ``spec.roles``).

A child's recorded template is the child as rendered — by pulumi-lws (the DS labels,
``DISAGGREGATEDSET_*`` env, placement affinities) or, on an adopted fleet, by upstream's DS
controller (the same without the env, serialised by Go: ``metadata: {creationTimestamp: null}``,
``env: []``). Both sides of the comparison are therefore read in the user's form
(:func:`user_form`): what the DS renderer writes is removed from the recorded template *and* from
the spec's (a user's ``app`` label or ``DISAGGREGATEDSET_ROLE`` variable, which the renderer
overrides, is never touched by a rollback either), then both are pruned of nulls and empty
values (:func:`pulumi_lws.core.features.adoption.pruned`). What then differs is exactly what the user changed.

The target to roll back *from* is the one the reconcile converges to (the workload's
``observed_target_revision``, :func:`pulumi_lws.disaggregatedset.adoption.target_revision`): on an
adopted fleet upstream's ``rev8``, which :func:`~pulumi_lws.disaggregatedset.revision.compute_revision`
cannot reproduce, so the adopted revision is never offered as its own "previous" one.

Invariant: for a recorded revision, ``covered`` of a spec whose templates equal the revision's
(in the user's form) equals the revision's ``covered``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.core.features.adoption import pruned
from pulumi_lws.core.features.rollback import Path, RecordedRevision, without_patch_markers
from pulumi_lws.disaggregatedset import labels as DL
from pulumi_lws.disaggregatedset.api.disaggregatedset import DisaggregatedSet
from pulumi_lws.disaggregatedset.observe import observe_children, split_by_child
from pulumi_lws.disaggregatedset.render import recorded_revision_data
from pulumi_lws.lws.revision import revision_data

#: what the DS renderer stamps on a child's pod templates (``render.child_lws``): label keys, env names
RENDERED_LABELS = frozenset({DL.APP, DL.NAME, DL.ROLE, DL.SLICE, DL.REVISION})
RENDERED_ENV = frozenset({DL.ENV_NAME, DL.ENV_ROLE, DL.ENV_SLICE, DL.ENV_REVISION})
TEMPLATES = ("leaderTemplate", "workerTemplate")


def _path(index: int) -> Path:
    return ("spec", "roles", index, "spec", "leaderWorkerTemplate")


def _placement_term(term: Any) -> bool:
    """A term of upstream's ``SetPlacementAffinities``: it selects on the DS name/slice labels only."""
    exprs = ((term.get("labelSelector") or {}).get("matchExpressions") or []) if isinstance(term, Mapping) else []
    keys = {e.get("key") for e in exprs if isinstance(e, Mapping)}
    return DL.NAME in keys and keys <= {DL.NAME, DL.SLICE}


def _pod_spec_user_form(spec: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(spec)
    for field in ("containers", "initContainers"):
        if isinstance(out.get(field), list):
            out[field] = [
                {
                    **c,
                    "env": [
                        e for e in c.get("env") or [] if not (isinstance(e, Mapping) and e.get("name") in RENDERED_ENV)
                    ],
                }
                if isinstance(c, Mapping)
                else c
                for c in out[field]
            ]
    affinity = out.get("affinity")
    if isinstance(affinity, Mapping):
        affinity = dict(affinity)
        for kind in ("podAffinity", "podAntiAffinity"):
            section = affinity.get(kind)
            if isinstance(section, Mapping):
                terms = section.get("requiredDuringSchedulingIgnoredDuringExecution")
                if isinstance(terms, list):
                    affinity[kind] = {
                        **section,
                        "requiredDuringSchedulingIgnoredDuringExecution": [t for t in terms if not _placement_term(t)],
                    }
        out["affinity"] = affinity
    return out


def user_form(lwt: Any) -> Any:
    """A child's ``leaderWorkerTemplate`` without what the DS renderer writes (labels, env,
    placement terms; module docstring), nulls and empty values pruned."""
    if not isinstance(lwt, Mapping):
        return pruned(lwt)
    out = dict(lwt)
    for key in TEMPLATES:
        template = out.get(key)
        if not isinstance(template, Mapping):
            continue
        template = dict(template)
        meta = dict(template.get("metadata") or {})
        meta["labels"] = {k: v for k, v in (meta.get("labels") or {}).items() if k not in RENDERED_LABELS}
        template["metadata"] = meta
        if isinstance(template.get("spec"), Mapping):
            template["spec"] = _pod_spec_user_form(template["spec"])
        out[key] = template
    return pruned(without_patch_markers(out))


def covered(ds: DisaggregatedSet, snapshot: Snapshot | None = None) -> dict[Path, Any]:
    """Every role's template of the spec in the user's form (the snapshot is not needed: the
    recorded revisions are read in the same form)."""
    return {
        _path(i): user_form(revision_data(ds.role_spec_as_lws(r))["spec"]["leaderWorkerTemplate"])
        for i, r in enumerate(ds.roles)
    }


def recorded_revisions(ds: DisaggregatedSet, snapshot: Snapshot) -> list[RecordedRevision]:
    parts = split_by_child(snapshot)
    index = {name: i for i, name in enumerate(ds.role_names)}
    found: dict[str, dict[Path, Any]] = {}
    order: dict[str, float] = {}
    for child in observe_children(ds, snapshot, parts, counts=False):  # identity fields only
        if child.slice != 0 or child.role not in index or child.being_deleted:
            continue
        data = recorded_revision_data(parts.get(child.name, snapshot), child.name)
        if data is None:
            continue
        found.setdefault(child.revision, {})[_path(index[child.role])] = user_form(
            (data.get("spec") or {}).get("leaderWorkerTemplate")
        )
        order[child.revision] = max(order.get(child.revision, 0.0), child.created or 0.0)
    return [
        RecordedRevision(rev, order[rev], f"child LeaderWorkerSets of revision {rev}", paths)
        for rev, paths in found.items()
    ]
