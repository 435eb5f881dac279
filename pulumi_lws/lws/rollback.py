"""LeaderWorkerSet rollback: its revisions as its ControllerRevisions record them (pure).

The covered part of the spec (:mod:`pulumi_lws.lws.revision`): ``spec.leaderWorkerTemplate`` and
``spec.networkConfig``; a ControllerRevision's ``data`` stores both as a replace-patch, its
``revision`` number orders them (upstream's history numbering).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_lws.core.contract.snapshot import Snapshot, labels_of
from pulumi_lws.core.features.rollback import Path, RecordedRevision, without_patch_markers
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.revision import is_lws_revision_data, revision_data

FIELDS = ("leaderWorkerTemplate", "networkConfig")


def covered_of_data(data: Mapping[str, Any]) -> dict[Path, Any]:
    spec = data.get("spec") or {}
    return {("spec", f): without_patch_markers(spec.get(f)) for f in FIELDS}


def covered(lws: LeaderWorkerSet) -> dict[Path, Any]:
    return covered_of_data(revision_data(lws))


def recorded_revisions(lws: LeaderWorkerSet, snapshot: Snapshot) -> list[RecordedRevision]:
    out = []
    for cr in snapshot.list("ControllerRevision", **{L.NAME: lws.name}):
        key = labels_of(cr).get(L.TEMPLATE_REVISION_HASH)
        if key and is_lws_revision_data(cr.get("data")):
            out.append(
                RecordedRevision(
                    key,
                    float(cr.get("revision") or 0),
                    f"ControllerRevision/{cr['metadata']['name']}",
                    covered_of_data(cr["data"]),
                )
            )
    return out
