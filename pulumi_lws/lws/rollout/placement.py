"""Which groups get their worker StatefulSet this reconcile, and in which topology domain (pure).

Upstream's pod controller creates a group's worker StatefulSet only when (reference §3.2) the
leader is not being deleted, ``startupPolicy: LeaderReady`` sees the leader Ready, and exclusive
topology sees the leader scheduled (workers are then pinned with ``nodeSelector {<key>: <leader
node's value>}``). Without an operator, :func:`place_groups` reads the same facts from the
:class:`Snapshot` and returns ``worker_groups`` / ``group_domains`` for ``render_ordinal``.

Invariants:
* pure: a function of the spec, the stage, the catalog and the snapshot (Nodes included when
  :func:`needs_nodes` is true); re-running it on the same snapshot gives the same placement;
* with neither LeaderReady nor exclusive topology, ``worker_groups`` is ``None`` (no restriction)
  and ``group_domains`` is empty: LeaderCreated LWSs render exactly as without this module;
* workers belong to a leader *incarnation*: a leader pod on a revision other than the one its
  group is rendered on (a group being replaced by a rollout) or a leader being deleted never
  releases workers, so a replaced group waits for its new leader again;
* LeaderReady keeps an existing worker StatefulSet of the group's revision while its leader
  (same incarnation: the StatefulSet is not older than the leader pod) turns unready;
* exclusive topology declares workers only with a known domain for their leader's node.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from pulumi_lws.core.contract.snapshot import Snapshot, is_deleting, labels_of, pod_condition, pod_running_and_ready
from pulumi_lws.core.contract.stage import Blocker, Stage
from pulumi_lws.lws import labels as L
from pulumi_lws.lws import names
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.observe import revision_of
from pulumi_lws.lws.revision import RevisionCatalog

LABEL_MISSING = "topology-label-missing"
NODE_NOT_OBSERVED = "topology-node-not-observed"
DOMAIN_UNAVAILABLE = "topology-domain-unavailable"
#: Most actionable first: the first code present becomes the stage's blocker.
BLOCKER_ORDER = (LABEL_MISSING, NODE_NOT_OBSERVED, DOMAIN_UNAVAILABLE)
#: Planner blockers that only say "waiting"; a placement blocker explains them better.
GENERIC_BLOCKERS = ("waiting-for-groups",)


@dataclass(frozen=True)
class Hold:
    """Why group ``group``'s workers are not declared this reconcile (``code`` "" = just waiting)."""

    group: int
    message: str
    code: str = ""


@dataclass(frozen=True)
class Placement:
    """``worker_groups``/``group_domains`` for ``render_ordinal`` plus the reasons behind them."""

    worker_groups: frozenset[int] | None = None
    group_domains: Mapping[int, str] = field(default_factory=dict)
    holds: tuple[Hold, ...] = ()

    @property
    def blocker(self) -> Blocker | None:
        """The most actionable hold with a code, as a stage :class:`Blocker` (messages joined)."""
        for code in BLOCKER_ORDER:
            hits = [h for h in self.holds if h.code == code]
            if hits:
                messages = list(dict.fromkeys(h.message for h in hits))
                return Blocker(code, "; ".join(messages), tuple(str(h.group) for h in hits), _REMEDIES[code])
        return None


_REMEDIES = {
    LABEL_MISSING: ("label the node with the exclusive-topology key", "or change the annotation's topology key"),
    NODE_NOT_OBSERVED: ("observe Nodes (observer.observe(..., nodes=True)); see placement.needs_nodes",),
    DOMAIN_UNAVAILABLE: ("add a free topology domain", "or reduce replicas"),
}


def exclusive_topology(lws: LeaderWorkerSet) -> str | None:
    """The group-level exclusive-topology key (annotation), or None."""
    return lws.metadata.annotations.get(L.EXCLUSIVE_TOPOLOGY) or None


def needs_nodes(lws: LeaderWorkerSet) -> bool:
    """Whether a reconcile of ``lws`` must observe Nodes (one extra LIST): group-level exclusive
    topology reads the leader node's label. Subgroup exclusive topology is pure affinity (no Nodes)."""
    return exclusive_topology(lws) is not None


def is_active(lws: LeaderWorkerSet) -> bool:
    """Whether placement restricts anything for ``lws`` (LeaderReady or exclusive topology)."""
    return lws.spec.startup_policy == "LeaderReady" or exclusive_topology(lws) is not None


# ---- per-group facts ------------------------------------------------------------------------


def _created(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("creationTimestamp") or "")


def leader_of_revision(leader: Mapping[str, Any] | None, key: str) -> TypeGuard[Mapping[str, Any]]:
    """The leader exists, is not being deleted and is on revision ``key`` (unlabelled: accepted);
    True narrows ``leader`` to the pod."""
    if leader is None or is_deleting(leader):
        return False
    rev = revision_of(leader)
    return rev is None or rev == key


def workers_kept(leader: Mapping[str, Any] | None, worker_sts: Mapping[str, Any] | None, key: str) -> bool:
    """An existing worker StatefulSet of this leader incarnation on revision ``key``.

    Same incarnation = the StatefulSet was not created strictly before the leader pod (RFC 3339
    timestamps compare as strings; a missing timestamp counts as "same").
    """
    if worker_sts is None or is_deleting(worker_sts) or revision_of(worker_sts) != key:
        return False
    if not leader_of_revision(leader, key):
        return False
    sts_at, leader_at = _created(worker_sts), _created(leader)
    return not (sts_at and leader_at and sts_at < leader_at)


def leader_ready_hold(
    lws: LeaderWorkerSet, i: int, leader: Mapping[str, Any] | None, worker_sts: Mapping[str, Any] | None, key: str
) -> Hold | None:
    """startupPolicy LeaderReady: workers wait for a Ready leader of the group's revision."""
    if lws.spec.startup_policy != "LeaderReady":
        return None
    if (leader_of_revision(leader, key) and pod_running_and_ready(leader)) or workers_kept(leader, worker_sts, key):
        return None
    pod = names.leader_pod(lws.name, i)
    why = "being replaced" if leader is not None and not leader_of_revision(leader, key) else "not Ready yet"
    return Hold(i, f"workers of group {i} wait for leader {pod} (startupPolicy LeaderReady): leader {why}")


def _unschedulable_message(leader: Mapping[str, Any]) -> str | None:
    cond = pod_condition(leader, "PodScheduled")
    if cond and cond.get("status") == "False" and cond.get("reason") == "Unschedulable":
        return str(cond.get("message") or "Unschedulable")
    return None


def _existing_domain(worker_sts: Mapping[str, Any] | None, key: str, topology: str) -> str | None:
    """The domain an existing worker StatefulSet of revision ``key`` is already pinned to."""
    if worker_sts is None or is_deleting(worker_sts) or revision_of(worker_sts) != key:
        return None
    spec = ((worker_sts.get("spec") or {}).get("template") or {}).get("spec") or {}
    return (spec.get("nodeSelector") or {}).get(topology)


def leader_domain(
    lws: LeaderWorkerSet,
    snapshot: Snapshot,
    i: int,
    leader: Mapping[str, Any] | None,
    worker_sts: Mapping[str, Any] | None,
    key: str,
    topology: str,
) -> tuple[str | None, Hold | None]:
    """Exclusive topology: ``(domain, None)`` when workers may be declared pinned to ``domain``,
    else ``(None, hold)`` (upstream precondition 7: the leader must be scheduled first)."""
    pod = names.leader_pod(lws.name, i)
    if not leader_of_revision(leader, key):
        return None, Hold(i, f"workers of group {i} wait for leader {pod} of revision {key} (exclusive topology)")
    node_name = (leader.get("spec") or {}).get("nodeName")
    if not node_name:
        msg = _unschedulable_message(leader)
        if msg is not None:
            return None, Hold(
                i,
                f"leader {pod} cannot be scheduled (exclusive topology {topology}: one group "
                f"per domain; its workers wait): {msg}",
                DOMAIN_UNAVAILABLE,
            )
        return None, Hold(i, f"workers of group {i} wait for leader {pod} to be scheduled (exclusive topology)")
    node = snapshot.get("Node", node_name)
    if node is None:
        kept = _existing_domain(worker_sts, key, topology)
        if kept is not None:
            return kept, None
        return None, Hold(
            i,
            f"node {node_name} of leader {pod} was not observed; cannot read its topology label {topology}",
            NODE_NOT_OBSERVED,
        )
    value = labels_of(node).get(topology)
    if value is None:
        return None, Hold(i, f"node {node_name} does not have topology label: {topology}", LABEL_MISSING)
    return str(value), None


# ---- the whole LWS ----------------------------------------------------------------------------


def group_size_at(lws: LeaderWorkerSet, catalog: RevisionCatalog, key: str) -> int:
    return lws.size if key == catalog.target.key else catalog.lws_at(lws, key).size


def place_groups(lws: LeaderWorkerSet, snapshot: Snapshot, stage: Stage, catalog: RevisionCatalog) -> Placement:
    """Placement of every ordinal in ``[0, stage.replicas)`` (Ordinal mode)."""
    if not is_active(lws):
        return Placement()
    topology = exclusive_topology(lws)
    allowed: set[int] = set()
    domains: dict[int, str] = {}
    holds: list[Hold] = []
    for i in range(stage.replicas):
        key = stage.group_revisions.get(str(i), catalog.target.key)
        if group_size_at(lws, catalog, key) <= 1:
            continue
        leader = snapshot.get("Pod", names.leader_pod(lws.name, i))
        worker_sts = snapshot.get("StatefulSet", names.worker_sts(lws.name, i))
        hold = leader_ready_hold(lws, i, leader, worker_sts, key)
        if hold is None and topology is not None:
            domain, hold = leader_domain(lws, snapshot, i, leader, worker_sts, key, topology)
            if domain is not None:
                domains[i] = domain
        if hold is None:
            allowed.add(i)
        else:
            holds.append(hold)
    return Placement(frozenset(allowed), domains, tuple(holds))


def with_placement(stage: Stage, placement: Placement) -> Stage:
    """The stage with the placement's blocker (replacing a generic "waiting" one) and hold notes."""
    if not placement.holds:
        return stage
    notes = stage.notes + tuple(h.message for h in placement.holds)
    blocker = placement.blocker
    if blocker is None or (stage.blocker is not None and stage.blocker.code not in GENERIC_BLOCKERS):
        return dataclasses.replace(stage, notes=notes)
    return dataclasses.replace(stage, blocker=blocker, notes=notes, complete=False)
