"""Hash mode: why a rollout cannot advance now, as a named :class:`Blocker` (pure).

``plan_hash`` (:mod:`pulumi_lws.lws.rollout.hash.planner`) calls :func:`hash_blocker` with the stage's group
views and the observed pods. The codes (stable, for alerts) and when each is reported, most
actionable first:

* ``resource-deadlock-717`` (:data:`DEADLOCK_717`, shared with Ordinal): a group on the target
  revision is unschedulable (:func:`unschedulable_groups`) while ready old groups hold capacity
  and the leader Deployment's budget forbids terminating one of them
  (:func:`deployment_forbids_termination`): upstream #717 in Hash mode. Remedies from the
  seeds' Hash paragraph: update in two steps, or ``maxUnavailable >= (new - old) + 1``;
* ``unschedulable``: a group on the target revision is unschedulable (leader or worker pod with
  ``PodScheduled=False`` and a reason other than ``SchedulingGated``) and the 717 pattern does
  not hold; the message names the groups and the scheduler's message;
* ``group-replacement-deferred``: a gated leader waits for tearing-down groups (PostTermination
  pacing, or an exhausted group under either policy). Revision-cap deferrals are not blockers
  (a surplus surge leader the Deployment will delete);
* ``waiting-for-groups`` (:data:`WAITING`, shared with Ordinal): the reconcile is at rest (no
  planner action, the Deployment observed on the target revision and caught up) and simply
  waits: for groups to become ready, for groups to be removed, for old groups to be replaced.

Invariants: pure (views, pods, spec); a complete stage never has a blocker; an unschedulable
group is reported whatever else the stage does (it does not go away by waiting), the waiting
blocker only at rest (otherwise the stage itself is the progress).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pulumi_lws.core.contract.snapshot import is_deleting, labels_of, pod_condition, pod_unschedulable
from pulumi_lws.core.contract.stage import Blocker, GroupView
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.observe import revision_of
from pulumi_lws.lws.rollout.budget import DEADLOCK_717, REMEDIES_717
from pulumi_lws.lws.rollout.hash.admission import group_index
from pulumi_lws.lws.rollout.hash.predict import deployment_budgets
from pulumi_lws.lws.rollout.ordinal.planner import WAITING

UNSCHEDULABLE = "unschedulable"
DEFERRED = "group-replacement-deferred"

#: GroupView phases of groups that no longer count as the Deployment's active pods.
GONE_PHASES = ("terminating", "exhausted")

TWO_STEPS = REMEDIES_717[0]  # the same first remedy as Ordinal mode's
UNSCHEDULABLE_REMEDIES = (
    "Add capacity the new template can use (nodes with the resources it requests), or lower its resource "
    "requests or relax its nodeSelector, affinity or tolerations.",
    "Or roll back spec.leaderWorkerTemplate: the old groups keep serving meanwhile (the Deployment "
    "terminates at most maxUnavailable of them).",
)
DEFERRED_REMEDIES = (
    "wait for the old group's pods to be removed",
    "set spec.groupReplacementPolicy: Immediate to schedule replacements without waiting",
)


@dataclass(frozen=True)
class StuckGroup:
    """A group on the target revision the scheduler cannot place: its first unschedulable pod
    (leader first, then workers by name) and the scheduler's message for it."""

    id: str
    pod: str
    message: str


# ---- group predicates ---------------------------------------------------------------------------


def is_active_group(view: GroupView) -> bool:
    """A group whose leader is an active Deployment pod (gated leaders included)."""
    return bool(view.leader) and view.phase not in GONE_PHASES


def is_admitted_group(view: GroupView) -> bool:
    """An active group whose leader is past the group-replacement gate."""
    return is_active_group(view) and view.phase != "gated"


def _names(ids: Sequence[str]) -> str:
    return ", ".join(f"G-{i}" for i in ids)


def _groups_word(ids: Sequence[str]) -> str:
    return f"group {_names(ids)}" if len(ids) == 1 else f"groups {_names(ids)}"


# ---- unschedulable groups -----------------------------------------------------------------------


def scheduler_message(pod: Mapping[str, Any]) -> str:
    """The scheduler's message on the pod's ``PodScheduled`` condition (its reason if none)."""
    cond = pod_condition(pod, "PodScheduled") or {}
    return str(cond.get("message") or cond.get("reason") or "unschedulable")


def _pod_name(pod: Mapping[str, Any]) -> str:
    return str((pod.get("metadata") or {}).get("name") or "")


def group_pods(namespace: str, pods: Sequence[Mapping[str, Any]], view: GroupView) -> list[Mapping[str, Any]]:
    """The group's pods that are not deleting: its leader first, then its workers of the group's
    revision (by ``group-index`` = the group key), by name."""
    leader = [p for p in pods if _pod_name(p) == view.leader and not is_deleting(p)]
    workers = sorted(
        (
            p
            for p in pods
            if labels_of(p).get(L.WORKER_INDEX) != "0"
            and not is_deleting(p)
            and group_index(namespace, p) == view.key
            and revision_of(p) == view.revision
        ),
        key=_pod_name,
    )
    return leader + workers


def unschedulable_groups(
    namespace: str, views: Sequence[GroupView], pods: Sequence[Mapping[str, Any]]
) -> list[StuckGroup]:
    """Admitted groups on the target revision with a leader or worker pod the scheduler could not
    place (``PodScheduled=False``, reason not ``SchedulingGated``), in view order."""
    out = []
    for v in views:
        if not (v.updated and is_admitted_group(v)):
            continue
        stuck = [p for p in group_pods(namespace, pods, v) if pod_unschedulable(p)]
        if stuck:
            out.append(StuckGroup(v.id, _pod_name(stuck[0]), scheduler_message(stuck[0])))
    return out


# ---- #717 -------------------------------------------------------------------------------------


def capacity_holders(views: Sequence[GroupView]) -> list[str]:
    """Ready old-revision groups: they hold the capacity the new groups would need."""
    return [v.id for v in views if not v.updated and v.ready and is_admitted_group(v)]


def deployment_forbids_termination(lws: LeaderWorkerSet, views: Sequence[GroupView]) -> bool:
    """The Deployment controller will not terminate a ready old group now: with
    ``minAvailable = R - maxUnavailable`` (budgets as ``ResolveFenceposts``), either the available
    groups are at most ``minAvailable`` or ``active - minAvailable - new unavailable <= 0``
    (``reconcileOldReplicaSets``' ``maxScaledDown``)."""
    cfg = lws.spec.rollout_strategy.rolling_update_configuration
    _, unavailable = deployment_budgets(cfg.max_surge, cfg.max_unavailable, lws.replicas)
    min_available = lws.replicas - unavailable
    active = [v for v in views if is_active_group(v)]
    available = sum(1 for v in active if v.ready)
    new_unavailable = sum(1 for v in active if v.updated and not v.ready)
    return available - min_available <= 0 or len(active) - min_available - new_unavailable <= 0


def remedies_717(lws: LeaderWorkerSet, views: Sequence[GroupView]) -> tuple[str, ...]:
    """The seeds' Hash-mode remedies; the maxUnavailable figure uses the live old groups as the
    old replica count (none has been terminated since the deadlock began)."""
    cfg = lws.spec.rollout_strategy.rolling_update_configuration
    _, unavailable = deployment_budgets(cfg.max_surge, cfg.max_unavailable, lws.replicas)
    old = sum(1 for v in views if not v.updated and is_active_group(v))
    need = max(unavailable + 1, lws.replicas - old + 1)
    raise_mu = (
        f"Raise maxUnavailable to at least (newReplicas - oldReplicas) + 1 (here {need}): the Deployment "
        "then terminates an old group at once, new groups fit into the freed capacity and, because any "
        "ready group raises the Deployment's availability, the remaining old groups cascade through the "
        "rollout."
    )
    return (TWO_STEPS, raise_mu)


def deadlock_717(lws: LeaderWorkerSet, stuck: Sequence[StuckGroup], views: Sequence[GroupView]) -> Blocker | None:
    """#717 in Hash mode: unschedulable new groups, ready old groups holding capacity, and a
    Deployment budget that forbids terminating one of them (None when any part is missing)."""
    holders = capacity_holders(views)
    if not stuck or not holders or not deployment_forbids_termination(lws, views):
        return None
    ids = [s.id for s in stuck]
    cfg = lws.spec.rollout_strategy.rolling_update_configuration
    verb = "is" if len(ids) == 1 else "are"
    old = f"old {_groups_word(holders)} {'holds' if len(holders) == 1 else 'hold'}"
    msg = (
        f"{_groups_word(ids)} on the new revision {verb} unschedulable ({stuck[0].pod}: {stuck[0].message}) "
        f"while {old} the capacity it needs; the leader Deployment's maxUnavailable={cfg.max_unavailable} "
        f"forbids terminating an old group until a new one is ready (resource deadlock, upstream #717)"
    )
    return Blocker(DEADLOCK_717, msg, tuple(ids), remedies_717(lws, views))


def unschedulable_blocker(stuck: Sequence[StuckGroup]) -> Blocker:
    """New-revision groups the scheduler cannot place, each with its pod and scheduler message."""
    ids = [s.id for s in stuck]
    detail = "; ".join(f"G-{s.id} pod {s.pod}: {s.message}" for s in stuck)
    verb = "is" if len(ids) == 1 else "are"
    return Blocker(
        UNSCHEDULABLE,
        f"{_groups_word(ids)} on the new revision {verb} unschedulable: {detail}",
        tuple(ids),
        UNSCHEDULABLE_REMEDIES,
    )


# ---- deferred and waiting -----------------------------------------------------------------------


def deferred_blocker(deferred: Sequence[str], tearing: int) -> Blocker | None:
    """Gated leaders (ids) held back by ``tearing`` tearing-down groups (None: none deferred)."""
    if not deferred:
        return None
    return Blocker(
        code=DEFERRED,
        message=f"waiting for {tearing} terminating group{'s' if tearing != 1 else ''} to be removed before "
        f"admitting {_names(deferred)}",
        groups=tuple(deferred),
        remedies=DEFERRED_REMEDIES,
    )


def waiting_blocker(lws: LeaderWorkerSet, views: Sequence[GroupView]) -> Blocker:
    """The rollout is at rest and waits; names what for, in this order: admitted new groups to
    become ready, groups to be removed, old groups to be replaced, exhausted groups to be
    recovered, the Deployment to create the missing groups."""
    pending = [v.id for v in views if v.updated and is_admitted_group(v) and not v.ready]
    if pending:
        return Blocker(WAITING, f"waiting for {_groups_word(pending)} to become ready", tuple(pending))
    removing = [v.id for v in views if v.phase == "terminating"]
    if removing:
        return Blocker(WAITING, f"waiting for {_groups_word(removing)} to be removed", tuple(removing))
    old = [v.id for v in views if not v.updated and is_active_group(v)]
    if old:
        return Blocker(
            WAITING, f"waiting for old {_groups_word(old)} to be replaced by the leader Deployment", tuple(old)
        )
    exhausted = [v.id for v in views if v.phase == "exhausted"]
    if exhausted:
        return Blocker(
            WAITING,
            f"waiting for {_groups_word(exhausted)} to be recovered (restart budget exhausted: "
            f"annotate the leader {L.RECOVER}=true)",
            tuple(exhausted),
        )
    active = sum(1 for v in views if is_admitted_group(v))
    return Blocker(
        WAITING,
        f"waiting for the leader Deployment to create {max(0, lws.replicas - active)} more "
        f"group(s) ({active} of {lws.replicas} admitted)",
    )


def hash_blocker(
    lws: LeaderWorkerSet,
    views: Sequence[GroupView],
    pods: Sequence[Mapping[str, Any]],
    deferred: Sequence[str],
    tearing: int,
    *,
    complete: bool,
    at_rest: bool,
) -> Blocker | None:
    """The stage's blocker (see module docstring for the order). ``deferred``: ids of gated
    leaders held back by tearing-down groups; ``at_rest``: the reconcile changes nothing."""
    if complete:
        return None
    stuck = unschedulable_groups(lws.namespace, views, pods)
    if stuck:
        return deadlock_717(lws, stuck, views) or unschedulable_blocker(stuck)
    blocker = deferred_blocker(deferred, tearing)
    if blocker is not None:
        return blocker
    return waiting_blocker(lws, views) if at_rest else None
