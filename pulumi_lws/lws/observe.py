"""What a LeaderWorkerSet reconcile reads from the cluster, and the LWS readers over it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_lws.core.contract.ports import Scope
from pulumi_lws.core.contract.snapshot import labels_of
from pulumi_lws.lws import labels as L

#: Kinds an LWS reconcile reads, selected by the ``leaderworkerset.sigs.k8s.io/name`` label
#: (Nodes are cluster-scoped and listed whole, only when a feature needs them).
LWS_KINDS: tuple[str, ...] = (
    "StatefulSet",
    "Deployment",
    "Pod",
    "ControllerRevision",
    "Service",
    "PodGroup",
    "Workload",
)


def revision_of(obj: Mapping[str, Any] | None) -> str | None:
    """The ``template-revision-hash`` label of an object (None when absent)."""
    return None if obj is None else labels_of(obj).get(L.TEMPLATE_REVISION_HASH)


def lws_scope(namespace: str, name: str, *, nodes: bool = False) -> Scope:
    """What one reconcile of LeaderWorkerSet ``namespace/name`` reads: every object of
    :data:`LWS_KINDS` labelled ``leaderworkerset.sigs.k8s.io/name=<name>``, plus Nodes if asked."""
    return Scope(namespace, {L.NAME: name}, LWS_KINDS, nodes)
