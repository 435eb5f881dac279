"""Revisions: a stable key over exactly the fields upstream covers, and ControllerRevision data.

Covered: ``spec.leaderWorkerTemplate`` (both pod templates, size, restartPolicy, subGroupPolicy,
volumeClaimTemplates, PVC retention, restart budget) and ``spec.networkConfig``. Not covered:
replicas, rolloutStrategy, startupPolicy, groupIdentity, groupReplacementPolicy, metadata.

Invariants:
* the key is a pure function of the covered fields' *values* (after upstream defaulting):
  canonical JSON (sorted keys, no whitespace, integral floats written as ints) hashed with FNV-32a
  and encoded with apimachinery's SafeEncodeString alphabet, so the same spec gives the same key
  in every process (any ``PYTHONHASHSEED``), for any dict key order and in every Python version;
* a nil ``networkConfig`` hashes like ``{subdomainPolicy: Shared}`` (upgrades do not roll);
* ``revision_key(apply_revision(x, revision_data(y))) == revision_key(y)`` for any x, y.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pulumi_lws.core.features.adoption import pruned
from pulumi_lws.core.k8s.hashing import stable_key
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet, LeaderWorkerSetSpec


def revision_data(lws: LeaderWorkerSet) -> dict[str, Any]:
    """The ControllerRevision ``data``: the covered fields as a replace-patch (upstream getPatch)."""
    wire = lws.spec.to_wire()
    lwt = dict(wire["leaderWorkerTemplate"])
    net = dict(wire.get("networkConfig") or {"subdomainPolicy": "Shared"})
    lwt["$patch"] = "replace"
    net["$patch"] = "replace"
    return {"spec": {"leaderWorkerTemplate": lwt, "networkConfig": net}}


def revision_key(lws: LeaderWorkerSet) -> str:
    """Stable revision key (≤ 10 chars) of the covered fields."""
    return key_of_data(revision_data(lws))


def key_of_data(data: Mapping[str, Any]) -> str:
    """The key of ControllerRevision ``data``: SafeEncodeString(decimal FNV-32a of canonical JSON)."""
    return stable_key(data)


def apply_revision(lws: LeaderWorkerSet, data: Mapping[str, Any]) -> LeaderWorkerSet:
    """The LWS as it was at a revision: live spec with the covered fields taken from ``data``.

    Metadata and uncovered fields (replicas, rollout strategy, ...) stay live, as upstream's
    ``ApplyRevision`` does.
    """
    spec = lws.spec.to_wire()
    covered = copy.deepcopy(dict(data["spec"]))
    for field in ("leaderWorkerTemplate", "networkConfig"):
        value = {k: v for k, v in dict(covered.get(field) or {}).items() if k != "$patch"}
        if field == "networkConfig" and not value.get("subdomainPolicy"):
            value["subdomainPolicy"] = "Shared"  # as revision_data wrote it for a nil networkConfig
        spec[field] = value
    out = lws.model_copy(deep=True)
    out.spec = LeaderWorkerSetSpec.model_validate(spec)
    return out


@dataclass(frozen=True)
class Revision:
    """One stored revision: its key, monotonically increasing number and covered data."""

    key: str
    number: int
    data: Mapping[str, Any]

    def controller_revision_name(self, lws_name: str) -> str:
        return f"{lws_name[:220]}-{self.key}-{self.number}"


@dataclass(frozen=True)
class RevisionCatalog:
    """Every revision a reconcile may render: the target plus those observed in the cluster.

    Observed revisions come from the LWS's ControllerRevision objects, so an old group can be
    rebuilt on its own revision after the spec has moved on (upstream #280/#963).
    """

    target: Revision
    known: Mapping[str, Revision]

    def get(self, key: str) -> Revision | None:
        return self.known.get(key)

    def lws_at(self, lws: LeaderWorkerSet, key: str) -> LeaderWorkerSet:
        """The LWS as of revision ``key`` (the live spec for the target revision)."""
        if key == self.target.key:
            return lws
        rev = self.known.get(key)
        if rev is None:
            raise KeyError(f"revision {key!r} of LeaderWorkerSet {lws.name!r} is not stored in any ControllerRevision")
        return apply_revision(lws, rev.data)


def is_lws_revision_data(data: Any) -> bool:
    """True for the data of an LWS ControllerRevision (see :func:`revision_data`)."""
    spec = data.get("spec") if isinstance(data, Mapping) else None
    return isinstance(spec, Mapping) and isinstance(spec.get("leaderWorkerTemplate"), Mapping)


def build_catalog(lws: LeaderWorkerSet, observed_revisions: list[Mapping[str, Any]]) -> RevisionCatalog:
    """Catalog from the desired spec and the observed ControllerRevision objects of this LWS.

    Only LWS revisions count: a StatefulSet's own history revisions carry the same labels (they
    copy the pod template's), so anything whose data is not an LWS revision patch is ignored.
    """
    from pulumi_lws.lws import labels as L

    known: dict[str, Revision] = {}
    for cr in observed_revisions:
        key = ((cr.get("metadata") or {}).get("labels") or {}).get(L.TEMPLATE_REVISION_HASH)
        if not key or not is_lws_revision_data(cr.get("data")):
            continue
        rev = Revision(key=key, number=int(cr.get("revision") or 0), data=cr.get("data") or {})
        if key not in known or rev.number > known[key].number:  # upstream GetRevision: highest wins
            known[key] = rev
    data = revision_data(lws)
    key = key_of_data(data)
    adopted = None if key in known else matching_revision(lws, known.values(), key)
    if adopted is not None:  # adoption: keep upstream's key and its (immutable) object as they are
        return RevisionCatalog(target=adopted, known=known)
    if key in known:
        target = Revision(key, known[key].number, data)
    else:
        target = Revision(key, max((r.number for r in known.values()), default=0) + 1, data)
    known[key] = target
    return RevisionCatalog(target=target, known=known)


def matching_revision(lws: LeaderWorkerSet, observed: Iterable[Revision], key: str) -> Revision | None:
    """The observed revision (highest number first) whose covered fields equal ``lws``'s although
    its key is not ``key`` — one the upstream controller wrote with its own hash (Go's JSON
    bytes, not canonical JSON) — or None. Equality is upstream's ``SetMatchesRevision``: apply
    the stored data to the spec and compare the result (docs/modes.md, "Adoption")."""
    want = pruned(revision_data(lws))
    for rev in sorted(observed, key=lambda r: -r.number):
        try:
            if pruned(revision_data(apply_revision(lws, rev.data))) == want:
                return rev
        except (ValueError, TypeError, KeyError):  # unreadable data (pydantic errors are ValueErrors)
            continue
    return None
