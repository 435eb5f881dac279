"""upstream ``scaleUpServingGroups`` (l.724, PR #1626): hole-filling, protected ordinals rebuilt
from their historical ControllerRevision, the update revision persisted before first use.

Pure: ``controller_revisions`` is the set of stored ControllerRevisions (revision -> its stored
roles, opaque here; a plain collection of names works too); ``controller_revision_create_fails``
models ``CreateControllerRevision`` returning an error.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pulumi_lws.modelserving.rollout.ordinals import for_each_missing_ordinal

TEMPLATE_SPEC = "spec"
TEMPLATE_CONTROLLER_REVISION = "ControllerRevision"


def missing_protected_revision_error(revision: str, ordinal: int) -> str:
    """upstream PR #1626's exact error text for a protected ordinal with no stored template."""
    return f"ControllerRevision {revision} for protected ordinal {ordinal} was not found"


def create_revision_error(revision: str) -> str:
    return f"failed to create ControllerRevision for new revision {revision}"


@dataclass(frozen=True)
class Creation:
    """One ServingGroup to create: its ordinal, revision, and where its roles come from."""

    ordinal: int
    revision: str
    template_source: str = TEMPLATE_SPEC  # "spec" | "ControllerRevision"
    template: Any = None  # the stored roles when template_source == "ControllerRevision"


@dataclass(frozen=True)
class ScaleUpResult:
    created: tuple[Creation, ...] = ()
    error: str | None = None
    #: ControllerRevisions written by this call (in order)
    written_revisions: tuple[str, ...] = ()

    @property
    def created_ordinals(self) -> list[int]:
        return [c.ordinal for c in self.created]


def _stored(controller_revisions: Collection[str] | Mapping[str, Any], rev: str) -> tuple[bool, Any]:
    if isinstance(controller_revisions, Mapping):
        return (rev in controller_revisions), controller_revisions.get(rev)
    return (rev in controller_revisions), None


def scale_up_servinggroups(
    existing_ordinals: Iterable[int],
    expected_count: int,
    update_revision: str,
    *,
    partition: int = 0,
    current_revision: str | None = None,
    controller_revisions: Collection[str] | Mapping[str, Any] = (),
    controller_revision_create_fails: bool = False,
) -> ScaleUpResult:
    """Create ``max(0, expected - len(existing))`` groups at the lowest missing ordinals of ``[0, expected)``.

    ``existing_ordinals`` counts every datastore group (Deleting and out-of-range ones too).
    A protected ordinal (``0 < P`` and ordinal ``< P``; ordinal-based, as upstream here) takes
    ``current_revision or update_revision`` and its stored template; if it is not stored and is not
    the update revision, the call stops with :func:`missing_protected_revision_error`. Every other
    ordinal takes the update revision, whose ControllerRevision is written once per call first; a
    failed write stops the call with nothing created for that ordinal. Creations before an error
    stand (upstream creates group by group).
    """
    existing = list(existing_ordinals)
    to_create = max(0, expected_count - len(existing))
    created: list[Creation] = []
    written: list[str] = []
    stored = set(controller_revisions)
    for o in for_each_missing_ordinal(expected_count, existing, to_create):
        if partition > 0 and o < partition:
            rev = current_revision or update_revision
            found, template = _stored(controller_revisions, rev)
            if rev in stored:
                created.append(Creation(o, rev, TEMPLATE_CONTROLLER_REVISION if found else TEMPLATE_SPEC, template))
                continue
            if rev == update_revision:  # first startup: write it now
                if controller_revision_create_fails:
                    return ScaleUpResult(tuple(created), create_revision_error(rev), tuple(written))
                written.append(rev)
                stored.add(rev)
                created.append(Creation(o, rev))
                continue
            return ScaleUpResult(tuple(created), missing_protected_revision_error(rev, o), tuple(written))
        if update_revision not in written:
            if controller_revision_create_fails:
                return ScaleUpResult(tuple(created), create_revision_error(update_revision), tuple(written))
            written.append(update_revision)
            stored.add(update_revision)
        created.append(Creation(o, update_revision))
    return ScaleUpResult(tuple(created), None, tuple(written))
