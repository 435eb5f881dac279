"""What a LeaderWorkerSet reconcile reads from the cluster, and the LWS readers over it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_lws.core.contract.ports import Scope, without_labels
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
    :data:`LWS_KINDS` labelled ``leaderworkerset.sigs.k8s.io/name=<name>``, plus Nodes if asked.

    ControllerRevisions also without ``leaderworkerset.sigs.k8s.io/group-index``
    (:func:`~pulumi_lws.core.contract.ports.without_labels`): every worker StatefulSet's own history
    (its pod template carries the group's index, in both modes) is left out — up to
    ``revisionHistoryLimit`` revisions per group, the bulk of what a name selector drags along —
    while the LWS revisions (name + ``template-revision-hash``, upstream's and pulumi-lws's) and
    the leader StatefulSet's history are read: the ordinal planner reads the LWS revision of the
    leader StatefulSet's ``status.currentRevision`` from it
    (:func:`pulumi_lws.lws.rollout.ordinal.groups.leader_current_revision`; seed 12717), so
    ``!controller.kubernetes.io/hash``, which leaves out every StatefulSet's history, would blind it.
    :func:`pulumi_lws.lws.revision.build_catalog` skips any StatefulSet revision by its data, a
    second guard."""
    selector = {L.NAME: name}
    return Scope(
        namespace,
        selector,
        LWS_KINDS,
        nodes,
        kind_selectors=(("ControllerRevision", without_labels(selector, L.GROUP_INDEX)),),
    )
