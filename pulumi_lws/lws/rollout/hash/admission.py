"""Hash mode: leader identity and the group-replacement gate, as small pure functions.

Upstream does this in its pod webhook (key at admission) and pod controller
(``reconcileGroupReplacementGate``, ``countTearingDownGroups``); pulumi-lws has neither, so the
planner (:mod:`pulumi_lws.lws.rollout.hash.planner`) evaluates the same rules on every reconcile over the
observed leader pods and turns the answers into ``label`` / ``annotate`` / ``ungate`` actions.

Invariants
- Every function here is a pure function of its arguments (pod dicts and plain values).
- :func:`group_key` is stable for a pod's whole life (label first, else derived from its uid) and
  differs for a replacement pod (new uid), like upstream's random key drawn at admission.
- :func:`admission` admits at most ``spec.replicas`` leaders of one revision (counting exhausted
  groups), never a leader of a revision other than the target, and, while ``T`` groups are
  tearing down, only the oldest ``G - T`` of all ``G`` gated leaders (desired revision first).
- A **terminal** leader (phase ``Failed`` or ``Succeeded``) is neither live nor admitted nor
  awaiting admission: the ReplicaSet does not count it as active (it has already created a
  replacement), so it must not hold a slot of the per-revision cap either. Under
  PostTermination its group counts as tearing down while any of its pods (the terminal leader
  included) still exists, so the replacement is admitted once they are gone; failure handling
  (:mod:`pulumi_lws.lws.rollout.failure.hash`) deletes them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pulumi_lws.core.contract.snapshot import annotations_of, is_deleting, labels_of
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.observe import revision_of

Policy = Literal["PostTermination", "Immediate"]

#: Annotation value the ReplicaSet reads to delete gated (never scheduled) leaders first.
GATED_DELETION_COST = "-100"

#: Pod phases the ReplicaSet no longer counts as active (``controller.IsPodActive``).
TERMINAL_PHASES = ("Failed", "Succeeded")


# ---- identity -------------------------------------------------------------------------------


def derive_group_key(namespace: str, pod: Mapping[str, Any]) -> str:
    """sha1 hex (40 chars) of ``"<ns>/<pod uid>"`` (``"<ns>/<pod name>"`` if the pod has no uid).

    Upstream hashes ``"<ns>/<random16>"`` at admission; the uid is as unique and, unlike a random
    draw, the same on every reconcile, so no state has to be kept between runs.
    """
    meta = pod.get("metadata") or {}
    seed = meta.get("uid") or meta.get("name") or ""
    return hashlib.sha1(f"{namespace}/{seed}".encode()).hexdigest()


def group_key(namespace: str, pod: Mapping[str, Any]) -> str:
    """The pod's group key: its ``group-key`` label if set (a webhook or an earlier reconcile put
    it there), else the derived key that the planner is about to label it with."""
    return labels_of(pod).get(L.GROUP_KEY) or derive_group_key(namespace, pod)


def group_index(namespace: str, pod: Mapping[str, Any]) -> str | None:
    """The group a pod belongs to, by its ``group-index`` label (upstream keys groups by it).

    Leaders not yet labelled fall back to their key (the label they are about to get); workers
    always carry the label from their StatefulSet template.
    """
    lbl = labels_of(pod)
    if lbl.get(L.GROUP_INDEX):
        return lbl[L.GROUP_INDEX]
    if lbl.get(L.WORKER_INDEX) == "0":
        return group_key(namespace, pod)
    return None


def short_id(key: str) -> str:
    """Group id used in names and tables: the first 8 characters of the key (upstream hostname)."""
    return key[:8]


# ---- pod predicates -------------------------------------------------------------------------


def is_gated(pod: Mapping[str, Any]) -> bool:
    """The leader still carries the ``group-replacement`` scheduling gate."""
    gates = (pod.get("spec") or {}).get("schedulingGates") or []
    return any(g.get("name") == L.GROUP_REPLACEMENT_GATE for g in gates)


def is_exhausted(pod: Mapping[str, Any]) -> bool:
    """The leader is a retained group whose restart budget is used up."""
    return annotations_of(pod).get(L.RESTART_BUDGET_EXHAUSTED) == "true"


def is_terminal(pod: Mapping[str, Any]) -> bool:
    """The pod reached phase ``Failed`` or ``Succeeded``: its containers will never run again
    and its ReplicaSet has already replaced it (terminal pods are not active)."""
    return (pod.get("status") or {}).get("phase") in TERMINAL_PHASES


def is_live_leader(pod: Mapping[str, Any]) -> bool:
    """Upstream's "live leader": not deleting and not budget-exhausted; here also not terminal
    (a Failed leader is not an active ReplicaSet pod, so it cannot stand for its group)."""
    return not is_deleting(pod) and not is_exhausted(pod) and not is_terminal(pod)


def is_admitted(pod: Mapping[str, Any]) -> bool:
    """Ungated, not deleting and not terminal: the leader may schedule and gets its workers."""
    return not is_gated(pod) and not is_deleting(pod) and not is_terminal(pod)


def awaits_admission(pod: Mapping[str, Any]) -> bool:
    """Gated and still a candidate for admission: not deleting, not exhausted, not terminal."""
    return is_gated(pod) and not is_deleting(pod) and not is_exhausted(pod) and not is_terminal(pod)


def creation_order(pod: Mapping[str, Any]) -> tuple[str, str]:
    """Sort key: creationTimestamp (RFC 3339, so lexical = chronological), then name."""
    meta = pod.get("metadata") or {}
    return (str(meta.get("creationTimestamp") or ""), str(meta.get("name") or ""))


# ---- the gate ---------------------------------------------------------------------------------


def tearing_down_groups(namespace: str, pods: Iterable[Mapping[str, Any]], policy: Policy) -> set[str]:
    """The groups that hold back gated replacements (upstream ``countTearingDownGroups``).

    PostTermination: groups (by ``group-index``) that still have any pod but no live leader; a
    group whose leader is gone but whose worker pod lingers still counts, and so does a group
    whose leader is terminal (Failed/Succeeded) until that leader object is gone too. Immediate: only
    groups retained because their restart budget is exhausted.
    """
    pods = list(pods)
    if policy == "Immediate":
        return {
            gi
            for p in pods
            if labels_of(p).get(L.WORKER_INDEX) == "0" and is_exhausted(p)
            for gi in [group_index(namespace, p)]
            if gi
        }
    with_pods: set[str] = set()
    live: set[str] = set()
    for p in pods:
        gi = group_index(namespace, p)
        if gi is None:
            continue
        with_pods.add(gi)
        if labels_of(p).get(L.WORKER_INDEX) == "0" and is_live_leader(p):
            live.add(gi)
    return with_pods - live


def revision_cap_defers(leader: Mapping[str, Any], leaders: Sequence[Mapping[str, Any]], replicas: int) -> bool:
    """Per-revision cap: defer when ``admitted + exhausted + rank >= replicas``.

    Counted among the leaders of ``leader``'s revision: exhausted ones, admitted ones (ungated,
    not deleting, not terminal), and ``rank`` = position of ``leader`` among the ones awaiting
    admission (:func:`awaits_admission`) sorted by :func:`creation_order`. Terminal leaders count
    for nothing (the ReplicaSet has replaced them). So at most ``replicas`` groups of a revision run, even
    while maxSurge makes the Deployment create more.
    """
    rev = revision_of(leader)
    same = [p for p in leaders if revision_of(p) == rev]
    exhausted = sum(1 for p in same if is_exhausted(p))
    admitted = sum(1 for p in same if not is_exhausted(p) and is_admitted(p))
    gated = sorted((p for p in same if awaits_admission(p)), key=creation_order)
    rank = _index_of(leader, gated)
    return admitted + exhausted + rank >= replicas


def replacement_rank(leader: Mapping[str, Any], leaders: Sequence[Mapping[str, Any]], target: str) -> tuple[int, int]:
    """``(rank, G)``: position of ``leader`` among all ``G`` leaders of the set awaiting
    admission (:func:`awaits_admission`), sorted desired revision first, then
    :func:`creation_order`."""
    gated = sorted(
        (p for p in leaders if awaits_admission(p)), key=lambda p: (revision_of(p) != target, *creation_order(p))
    )
    return _index_of(leader, gated), len(gated)


@dataclass(frozen=True)
class Admission:
    """The gate's answer for one gated leader; ``reason`` is upstream's event reason/message."""

    admit: bool
    reason: str
    message: str
    waiting_for: int = 0  # T when deferred by tearing-down groups


def admission(
    leader: Mapping[str, Any], leaders: Sequence[Mapping[str, Any]], *, target: str, replicas: int, tearing_down: int
) -> Admission:
    """``reconcileGroupReplacementGate`` for one gated leader, in upstream's order:
    outdated revision, per-revision cap, then the ``G - T`` rule."""
    name = (leader.get("metadata") or {}).get("name")
    if revision_of(leader) != target:
        return Admission(False, "OutdatedRevision", f"Leader pod {name} is on an outdated revision")
    if revision_cap_defers(leader, leaders, replicas):
        return Admission(
            False,
            "RevisionCapReached",
            f"Leader pod {name} waits: {replicas} group(s) of its revision already admitted",
        )
    if tearing_down > 0:
        rank, total = replacement_rank(leader, leaders, target)
        if rank >= total - tearing_down:
            return Admission(
                False,
                "GroupReplacementDeferred",
                f"Leader pod {name} waits for {tearing_down} terminating group(s) to be removed before scheduling",
                waiting_for=tearing_down,
            )
    return Admission(True, "GroupReplacementAdmitted", f"Leader pod {name} admitted for scheduling")


def _index_of(pod: Mapping[str, Any], ordered: Sequence[Mapping[str, Any]]) -> int:
    name = (pod.get("metadata") or {}).get("name")
    for i, p in enumerate(ordered):
        if (p.get("metadata") or {}).get("name") == name:
            return i
    return len(ordered)
