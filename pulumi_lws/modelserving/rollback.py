"""ModelServing rollback: its revisions as its ControllerRevisions record them (pure).

The covered part of the spec is ``spec.template.roles`` without the fields upstream clears before
hashing (replicas and the role budgets: :data:`~pulumi_lws.modelserving.revision.CLEARED_ROLE_FIELDS`),
so a rollback never changes replicas or budgets. Revisions are ordered by creation time (every
ModelServing ControllerRevision has ``revision: 1``, as upstream). Roles are matched by position:
a rollback across a change of the number of roles replaces the whole list (then check replicas).

Rollback starts from the revision the reconcile converges to (``observed_target_revision``, the
catalog's target): on an adopted fleet Kthena's key. Unlike a DisaggregatedSet's children, a
ControllerRevision records the user's roles as they are (no renderer labels or env: those go
onto the StatefulSets and pods), so the recorded roles need no user-form stripping — only the
nulls and empty values of Go's serialisation (``creationTimestamp: null``, ``resources: {}``),
which :func:`pulumi_lws.core.features.rollback.rollback_manifest` prunes on both sides.
"""

from __future__ import annotations

from typing import Any

from pulumi_lws.core.contract.snapshot import Snapshot, labels_of
from pulumi_lws.core.features.rollback import Path, RecordedRevision
from pulumi_lws.core.k8s.timestamps import parse_timestamp as timestamp
from pulumi_lws.modelserving import labels as L
from pulumi_lws.modelserving.api.modelserving import ModelServing
from pulumi_lws.modelserving.revision import revision_data, role_data, roles_of_data

ROLES: Path = ("spec", "template", "roles")


def covered(ms: ModelServing) -> dict[Path, Any]:
    return {ROLES: list(revision_data(ms)["data"])}


def recorded_revisions(ms: ModelServing, snapshot: Snapshot) -> list[RecordedRevision]:
    out = []
    for cr in snapshot.list("ControllerRevision", **{L.NAME: ms.name}):
        key, roles = labels_of(cr).get(L.REVISION), roles_of_data(cr.get("data"))
        if key and roles is not None:
            created = timestamp((cr.get("metadata") or {}).get("creationTimestamp")) or 0.0
            out.append(
                RecordedRevision(
                    key, created, f"ControllerRevision/{cr['metadata']['name']}", {ROLES: [role_data(r) for r in roles]}
                )
            )
    return out
