"""Rollback: the spec change that brings a manifest back to a revision recorded in the cluster (pure).

Every API records the revision-covered part of its spec in objects it keeps in the cluster
(LeaderWorkerSet and ModelServing: their ControllerRevisions; DisaggregatedSet: the
ControllerRevisions of its old-revision child LeaderWorkerSets). An API that supports rollback
implements :class:`Revertible`: ``covered(spec)`` is the current spec's covered part, and
``recorded_revisions(spec, snapshot)`` the revisions the snapshot records, each as the same paths
with the recorded values. :func:`previous_revision` picks the newest recorded revision other than
the target, and :func:`rollback_manifest` rebases the difference onto the user's manifest
(:func:`rebase`): only the leaves that differ between the current and the recorded values are
written, so defaults the API filled in never appear in the user's file; both are compared
without nulls and empty values (:func:`pulumi_lws.core.features.adoption.pruned`: an adopted revision
upstream serialised carries ``creationTimestamp: null``).

Invariants: ``rollback_manifest`` never changes a path outside the covered paths (replicas,
budgets, metadata stay as the user wrote them); parsing its result gives a spec whose covered
part equals the recorded one, hence the recorded revision key.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.core.features.adoption import pruned

Path = tuple[Any, ...]  # keys and list indices from the manifest's root


@dataclass(frozen=True)
class RecordedRevision:
    """A revision the cluster records: its key, how new it is (larger = newer: the revision
    number or a creation time), the object that records it, and its covered values by path."""

    key: str
    order: float
    source: str
    covered: Mapping[Path, Any]


@runtime_checkable
class Revertible(Protocol):
    def covered(self, spec: Any, snapshot: Snapshot | None = None) -> Mapping[Path, Any]:
        """The revision-covered values of ``spec`` by manifest path, in the form
        ``recorded_revisions`` reads them (wire form, defaults applied)."""
        ...

    def recorded_revisions(self, spec: Any, snapshot: Snapshot) -> Sequence[RecordedRevision]:
        """Every revision of the workload the snapshot records (the target's included, if recorded)."""
        ...


class NoPreviousRevision(LookupError):
    """The cluster records no revision other than the target (first rollout, or the old
    revision's objects were pruned once the rollout completed)."""


def previous_revision(target: str, recorded: Sequence[RecordedRevision]) -> RecordedRevision:
    """The newest recorded revision that is not ``target``; :class:`NoPreviousRevision` otherwise."""
    others = [r for r in recorded if r.key != target]
    if not others:
        known = ", ".join(sorted({r.key for r in recorded})) or "none"
        raise NoPreviousRevision(
            f"the cluster records no revision other than the target {target} (recorded: {known}); "
            "a completed rollout prunes the old revision's objects"
        )
    return max(others, key=lambda r: (r.order, r.key))


def without_patch_markers(value: Any) -> Any:
    """``value`` without strategic-merge ``$patch`` keys (ControllerRevision data carries them)."""
    if isinstance(value, Mapping):
        return {k: without_patch_markers(v) for k, v in value.items() if k != "$patch"}
    if isinstance(value, list):
        return [without_patch_markers(v) for v in value]
    return value


def rebase(mine: Any, current: Any, recorded: Any) -> Any:
    """``mine`` (the user's sparse value) changed exactly where ``current`` (its defaulted form)
    differs from ``recorded``: differing leaves are set, keys only ``current`` has are removed,
    lists of unequal length are replaced whole. Inputs are not mutated."""
    if current == recorded:
        return copy.deepcopy(mine)
    if isinstance(current, Mapping) and isinstance(recorded, Mapping) and (mine is None or isinstance(mine, Mapping)):
        out = copy.deepcopy(dict(mine or {}))
        for key, value in recorded.items():
            if key not in current:
                out[key] = copy.deepcopy(value)
            elif current[key] != value:
                out[key] = rebase(out.get(key), current[key], value)
        for key in current:
            if key not in recorded:
                out.pop(key, None)
        return out
    if (
        isinstance(current, list)
        and isinstance(recorded, list)
        and isinstance(mine, list)
        and len(current) == len(recorded) == len(mine)
    ):
        return [rebase(m, c, r) for m, c, r in zip(mine, current, recorded)]
    return copy.deepcopy(recorded)


def _get(doc: Any, path: Path) -> Any:
    for part in path:
        if isinstance(doc, Mapping):
            doc = doc.get(part)
        elif isinstance(doc, list) and isinstance(part, int) and 0 <= part < len(doc):
            doc = doc[part]
        else:
            return None
    return doc


def _set(doc: dict[str, Any], path: Path, value: Any) -> None:
    node: Any = doc
    for part, nxt in itertools.pairwise(path):
        child = node[part] if isinstance(node, list) else node.get(part)
        if child is None:
            child = [] if isinstance(nxt, int) else {}
            node[part] = child
        node = child
    node[path[-1]] = value


def rollback_manifest(
    manifest: Mapping[str, Any], current: Mapping[Path, Any], recorded: Mapping[Path, Any]
) -> dict[str, Any]:
    """``manifest`` with every covered path rebased from ``current`` to ``recorded``."""
    out = copy.deepcopy(dict(manifest))
    for path in sorted(set(current) | set(recorded), key=lambda p: tuple(map(str, p))):
        # pruned: a revision upstream serialised (``metadata: {creationTimestamp: null}``, ``env: []``)
        # differs from the spec's only in empty values that mean nothing, and must not be written
        cur, rec = pruned(without_patch_markers(current.get(path))), pruned(without_patch_markers(recorded.get(path)))
        if cur == rec:
            continue
        _set(out, path, rebase(_get(out, path), cur, rec))
    return out
