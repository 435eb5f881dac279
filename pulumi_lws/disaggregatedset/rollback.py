"""DisaggregatedSet rollback: the revisions its old-revision children still record (pure).

A DisaggregatedSet revision covers each role's ``leaderWorkerTemplate`` (and the role names). It
keeps no ControllerRevision of its own: each child LeaderWorkerSet ``<ds>-<slice>-<rev>-<role>``
keeps the LWS ControllerRevision of the template it was rendered with. So a revision is recorded
while its children exist — mid-rollout, or during a rollback — and gone once a rollout completed
and drained them. Revisions are ordered by their children's creation (upstream's order); only
roles of the current spec are patched (by position of the role in ``spec.roles``).

A child's recorded template is the child as rendered (the DS labels, ``DISAGGREGATEDSET_*`` env,
placement affinities added), so both sides of the comparison are read that way: the current
revision's children as recorded, the revision key replaced by a placeholder in every string
(:func:`normalised`). What then differs is exactly what the user changed.
"""
from __future__ import annotations

from typing import Any

from pulumi_lws.core.rollback import Path, RecordedRevision, without_patch_markers
from pulumi_lws.core.snapshot import Snapshot
from pulumi_lws.disaggregatedset.api.disaggregatedset import DisaggregatedSet
from pulumi_lws.disaggregatedset.observe import observe_children, split_by_child
from pulumi_lws.disaggregatedset.render import recorded_revision_data
from pulumi_lws.disaggregatedset.revision import compute_revision
from pulumi_lws.lws.revision import revision_data


def _path(index: int) -> Path:
    return ("spec", "roles", index, "spec", "leaderWorkerTemplate")


PLACEHOLDER = "{revision}"


def normalised(value: Any, revision: str) -> Any:
    if isinstance(value, str):
        return value.replace(revision, PLACEHOLDER)
    if isinstance(value, dict):
        return {k: normalised(v, revision) for k, v in value.items()}
    if isinstance(value, list):
        return [normalised(v, revision) for v in value]
    return value


def covered(ds: DisaggregatedSet, snapshot: Snapshot | None = None) -> dict[Path, Any]:
    """The current revision's templates as its children record them (normalised), else as the
    spec gives them (no child of the current revision yet)."""
    own = {_path(i): without_patch_markers(revision_data(ds.role_spec_as_lws(r))["spec"]["leaderWorkerTemplate"])
           for i, r in enumerate(ds.roles)}
    if snapshot is None:
        return own
    target = compute_revision(ds)
    recorded = [r for r in recorded_revisions(ds, snapshot) if r.key == target]
    return {**own, **(recorded[0].covered if recorded else {})}


def recorded_revisions(ds: DisaggregatedSet, snapshot: Snapshot) -> list[RecordedRevision]:
    parts = split_by_child(snapshot)
    index = {name: i for i, name in enumerate(ds.role_names)}
    found: dict[str, dict[Path, Any]] = {}
    order: dict[str, float] = {}
    for child in observe_children(ds, snapshot):
        if child.slice != 0 or child.role not in index or child.being_deleted:
            continue
        data = recorded_revision_data(parts.get(child.name, snapshot), child.name)
        if data is None:
            continue
        found.setdefault(child.revision, {})[_path(index[child.role])] = normalised(without_patch_markers(
            (data.get("spec") or {}).get("leaderWorkerTemplate")), child.revision)
        order[child.revision] = max(order.get(child.revision, 0.0), child.created or 0.0)
    return [RecordedRevision(rev, order[rev], f"child LeaderWorkerSets of revision {rev}", paths)
            for rev, paths in found.items()]
