"""Group failure handling (restart policies, restart budget, backoff), pure.

``plan_failure_actions(lws, snapshot, stage) -> FailurePlan`` decides, for every Ordinal group in
``[0, stage.replicas)``, whether a failure must recreate the whole group (upstream
``pod_controller.go::handleRestartPolicy``, reference §7.6 and the seeds' "Failure Handling");
:func:`plan_group_failure` is the mode-agnostic per-group decision that Hash mode
(:mod:`pulumi_lws.lws.rollout.failure.hash`) calls per group key:

* a **failure** is a group pod of the leader's incarnation with ``restartCount > 0`` or a
  deletionTimestamp (a worker deleted or lost with its node), or the leader's pending-recreation
  marker (a deferred failure, see backoff). Ignored: workers on another revision than the leader
  (about to be replaced), deleting workers older than the leader (leftovers of the previous
  incarnation, upstream #805), workers marked to follow a previous leader (termination.py);
* ``RecreateGroupOnPodRestart`` (default) and ``RecreateGroupAfterStart`` (or the LWS annotation
  ``experimental-recreate-group-after-start``) recreate the group: ``delete`` the leader pod
  (``Foreground``, uid-guarded; its controller recreates it) plus the worker part from
  :func:`pulumi_lws.lws.rollout.failure.termination.worker_teardown_actions` (Parallel: delete the workers
  now; Sequential: mark them so they are deleted once the leader is gone). ``None``: nothing;
* AfterStart skips while any group pod is Pending or the group is incomplete; a Pending pod the
  scheduler could not place adds a ``GroupUnschedulable`` event;
* ``maxGroupRestarts``: a recreation consumes one count of ``"<rev>/<group>"``
  (:mod:`pulumi_lws.lws.rollout.failure.restart_budget`); at the limit the group is **exhausted** instead:
  the leader is annotated ``group-restart-budget-exhausted: "true"`` and every pod of the group
  is **retained** (:mod:`pulumi_lws.lws.rollout.failure.retention`: finalizer ``pulumi-lws.io/restart-budget``
  then delete: containers stop, resources are freed, the objects stay so nothing recreates
  them); once the leader is observed retained its worker objects are no longer declared;
  Degraded=True. The user's ``recover: "true"`` on the leader clears the count and removes the
  finalizers: the controller recreates the group, whole and fresh. A rollout replacing the
  group or a scale-down removing it also removes the finalizers (cleanup, not recovery);
* ``restartBackoff``: a recreation waits until the leader is ``min(base*2^count, cap)`` s old;
  meanwhile a ``GroupRestartBackoff`` event and a marker annotation on the leader keep the
  failure (even a transient deletion) until the recreation happens.

Invariants: pure; never acts on a deleting leader (except to release a retained one), so
re-planning the snapshot taken after the actions ran produces no second delete for the same
failure (idempotence); every action is uid-guarded; a count is consumed only by an initiated
recreation; a deleted exhausted leader is never recreated before ``recover`` (its finalizer
keeps the object).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pulumi_lws.core.contract.snapshot import (
    Snapshot,
    annotations_of,
    is_deleting,
    pod_restart_count,
    pod_unschedulable,
)
from pulumi_lws.core.contract.stage import Action, Stage
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.observe import revision_of
from pulumi_lws.lws.rollout.failure import restart_budget as B
from pulumi_lws.lws.rollout.failure.quiet import RESTART_PENDING, leader_count_keys, loud_members
from pulumi_lws.lws.rollout.failure.retention import release_actions, retain_actions
from pulumi_lws.lws.rollout.failure.termination import (
    FOREGROUND,
    name_of,
    of_incarnation,
    plan_termination_actions,
    uid_of,
    worker_teardown_actions,
)
from pulumi_lws.lws.status.failure import (  # noqa: F401  (re-exported)
    BUDGET_EXCEEDED,
    UNSCHEDULABLE,
    failure_conditions,
    is_exhausted,
    merge_failure_status,
)

RECREATE_GROUP, BACKOFF, RECOVER_GROUP = "RecreateGroup", "GroupRestartBackoff", "RecoverGroup"

Pod = Mapping[str, Any]


@dataclass(frozen=True)
class FailureEvent:
    """What upstream would record as an Event on the LWS; ``code`` is stable."""

    code: str
    group: str
    message: str

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


@dataclass(frozen=True)
class GroupOutcome:
    """Decision for one group: actions, events, and its effect on the restart count."""

    actions: tuple[Action, ...] = ()
    events: tuple[FailureEvent, ...] = ()
    consumed: bool = False  # a recreation was initiated: count + 1
    reset: bool = False  # recovered: the count is cleared
    halted: bool = False  # budget exhausted (Degraded, phase "exhausted"), not yet recovered or released
    retained: bool = False  # exhausted and the leader is observed retained: worker objects not declared
    deferred: bool = False  # a recreation waits for backoff or for pods to start


@dataclass(frozen=True)
class FailurePlan:
    """Everything failure handling adds to one reconcile."""

    actions: tuple[Action, ...] = ()
    events: tuple[FailureEvent, ...] = ()
    degraded_groups: tuple[str, ...] = ()  # exhausted groups (GroupView ids): stage phase "exhausted"
    halted_groups: tuple[int, ...] = ()  # Ordinal: exhausted and retained: worker StatefulSet not declared
    restart_counts: str | None = None  # value to render on the leader StatefulSet (None: omit)
    deferred: bool = False
    first_actions: tuple[Action, ...] = ()  # go before the planner's actions (Hash: count transfer before ungate)

    def apply_to(self, stage: Stage) -> Stage:
        """The stage with ``first_actions`` prepended, these actions appended, events as notes,
        degraded groups' phase ``exhausted``; a stage with failure work pending is never
        ``complete``."""
        degraded = set(self.degraded_groups)
        groups = tuple(dataclasses.replace(g, phase="exhausted") if g.id in degraded else g for g in stage.groups)
        busy = bool(self.actions) or bool(self.first_actions) or self.deferred
        return dataclasses.replace(
            stage,
            actions=self.first_actions + stage.actions + self.actions,
            groups=groups,
            notes=stage.notes + tuple(str(e) for e in self.events),
            complete=stage.complete and not busy,
        )


# ---- one group (mode-agnostic: Hash mode calls this with its group key) ----------------------


def effective_policy(lws: LeaderWorkerSet) -> str:
    """``restartPolicy``, with the experimental LWS annotation turning OnPodRestart into AfterStart."""
    policy = lws.spec.leader_worker_template.restart_policy
    if (
        policy == "RecreateGroupOnPodRestart"
        and str(lws.metadata.annotations.get(L.EXPERIMENTAL_RECREATE_AFTER_START, "")).lower() == "true"
    ):
        return "RecreateGroupAfterStart"
    return policy


def wants_recover(leader: Pod) -> bool:
    return str(annotations_of(leader).get(L.RECOVER, "")).lower() == "true"


def pod_phase(pod: Pod) -> str:
    return str((pod.get("status") or {}).get("phase") or "Pending")


def current_workers(leader: Pod, workers: Sequence[Pod]) -> list[Pod]:
    """Workers of the leader's incarnation (not marked for another leader, not older deleting pods)."""
    born = B.created_at(leader)
    out = []
    for w in workers:
        if not of_incarnation(w, leader):
            continue
        w_born = B.created_at(w)
        if is_deleting(w) and born is not None and w_born is not None and w_born < born:
            continue  # a leftover of the previous incarnation still terminating (#805)
        out.append(w)
    return out


def failure_signal(leader: Pod, workers: Sequence[Pod]) -> str | None:
    """Why the group must be recreated (None: healthy). ``workers`` = :func:`current_workers`."""
    if annotations_of(leader).get(RESTART_PENDING):
        return str(annotations_of(leader)[RESTART_PENDING])
    if pod_restart_count(leader) > 0:
        return f"Leader pod {name_of(leader)} restarted"
    rev = revision_of(leader)
    for w in workers:
        if revision_of(w) != rev:
            continue  # the worker is about to be replaced by the rollout anyway
        if is_deleting(w):
            return f"Worker pod {name_of(w)} was deleted"
        if pod_restart_count(w) > 0:
            return f"Worker pod {name_of(w)} failed"
    return None


def group_size(lws: LeaderWorkerSet, leader: Pod) -> int:
    raw = annotations_of(leader).get(L.SIZE)
    return int(raw) if raw is not None and str(raw).isdigit() else lws.size


def after_start_wait(lws: LeaderWorkerSet, group: str, leader: Pod, workers: Sequence[Pod]) -> GroupOutcome | None:
    """AfterStart: an outcome that skips the recreation while pods are Pending or missing."""
    pods = [leader, *[w for w in workers if not is_deleting(w)]]
    pending = [p for p in pods if pod_phase(p) == "Pending"]
    if not pending and len(pods) >= group_size(lws, leader):
        return None
    unsched = [name_of(p) for p in pending if pod_unschedulable(p)]
    if unsched:
        ev = FailureEvent(
            UNSCHEDULABLE,
            group,
            f"group {group}: pods {', '.join(unsched)} cannot be scheduled; "
            "group recreation skipped (RecreateGroupAfterStart)",
        )
        return GroupOutcome(events=(ev,), deferred=True)
    return GroupOutcome(deferred=True)


def recover_outcome(lws: LeaderWorkerSet, group: str, leader: Pod, workers: Sequence[Pod]) -> GroupOutcome:
    """An exhausted group: retained (finalize + delete, repeated until every pod of the
    incarnation is retained) until ``recover=true``; then the count is cleared and the
    finalizers removed, so the objects go away and the controller recreates the group. A leader
    exhausted but never retained (not deleting) is deleted on recover instead."""
    retained = is_deleting(leader)
    if not wants_recover(leader):
        why = f"group {group} exhausted its restart budget"
        return GroupOutcome(
            actions=retain_actions([leader, *current_workers(leader, workers)], why), halted=True, retained=retained
        )
    why = f"recover requested on {name_of(leader)}"
    actions = release_actions([leader, *workers], why)
    if not retained:
        actions = (
            Action("delete", "Pod", name_of(leader), {"propagation": FOREGROUND}, uid=uid_of(leader), reason=why),
            *worker_teardown_actions(lws, leader, current_workers(leader, workers), why),
            *actions,
        )
    events = (
        (FailureEvent(RECOVER_GROUP, group, f"group {group}: restart budget cleared, group starts again ({why})"),)
        if actions
        else ()
    )
    return GroupOutcome(actions=actions, events=events, reset=True, halted=True, retained=retained)


def release_outcome(group: str, leader: Pod, workers: Sequence[Pod], why: str) -> GroupOutcome:
    """An exhausted group removed by a rollout or a scale-down: its finalizers are removed as
    lifecycle cleanup (not a recovery: the count is not cleared, it is pruned with its key)."""
    return GroupOutcome(actions=release_actions([leader, *workers], f"group {group} {why}"))


def exhaust_outcome(
    lws: LeaderWorkerSet, group: str, leader: Pod, members: Sequence[Pod], signal: str, count: int
) -> GroupOutcome:
    """The budget is used up: mark the leader exhausted, then retain every pod of the group."""
    limit = lws.spec.leader_worker_template.max_group_restarts
    ann = Action(
        "annotate",
        "Pod",
        name_of(leader),
        {"annotations": {L.RESTART_BUDGET_EXHAUSTED: "true"}},
        uid=uid_of(leader),
        reason=f"{signal}; restart budget exhausted",
    )
    ev = FailureEvent(
        BUDGET_EXCEEDED,
        group,
        f"group {group}: {signal}; restart budget exhausted "
        f"({count}/{limit}); pods stopped and retained until the leader {name_of(leader)} is "
        f"annotated {L.RECOVER}=true",
    )
    retain = retain_actions([leader, *members], f"group {group} exhausted its restart budget")
    return GroupOutcome(actions=(ann, *retain), events=(ev,), halted=True)


def plan_group_failure(
    lws: LeaderWorkerSet, group: str, leader: Pod | None, workers: Sequence[Pod], *, count: int, now: float
) -> GroupOutcome:
    """Failure decision for one group (see module docstring). ``count``: restarts consumed on
    the leader's revision; ``now``: observation time (epoch seconds)."""
    if leader is None:
        return GroupOutcome()
    if is_exhausted(leader):
        return recover_outcome(lws, group, leader, workers)
    policy = effective_policy(lws)
    if is_deleting(leader) or policy == "None":
        return GroupOutcome()
    members = current_workers(leader, workers)
    signal = failure_signal(leader, members)
    if signal is None:
        return GroupOutcome()
    if policy == "RecreateGroupAfterStart":
        wait = after_start_wait(lws, group, leader, members)
        if wait is not None:
            return wait
    if B.budget_exhausted(lws, count):
        return exhaust_outcome(lws, group, leader, members, signal, count)
    wait_s = B.backoff_remaining(lws, count, leader, now)
    if wait_s > 0:
        ev = FailureEvent(BACKOFF, group, f"group {group} recreates in {int(-(-wait_s // 1))}s (restart {count + 1})")
        mark = (
            ()
            if annotations_of(leader).get(RESTART_PENDING)
            else (
                Action(
                    "annotate",
                    "Pod",
                    name_of(leader),
                    {"annotations": {RESTART_PENDING: signal}},
                    uid=uid_of(leader),
                    reason="remember the failure until the backoff elapses",
                ),
            )
        )
        return GroupOutcome(actions=mark, events=(ev,), deferred=True)
    why = f"{signal}, deleted leader pod {name_of(leader)} to recreate group {group}"
    actions = (
        Action("delete", "Pod", name_of(leader), {"propagation": FOREGROUND}, uid=uid_of(leader), reason=why),
        *worker_teardown_actions(lws, leader, members, why),
    )
    return GroupOutcome(actions=actions, events=(FailureEvent(RECREATE_GROUP, group, why),), consumed=True)


# ---- Ordinal: every group, counts on the leader StatefulSet ----------------------------------


def replaced_by_rollout(leader: Pod, worker_sts: Pod | None, index: int, stage: Stage) -> bool:
    """The group is being replaced by the rollout: admitted but not on the target yet, or its
    worker StatefulSet is rolling its pods (template revision differs, revisions not converged)."""
    if index >= int(stage.partition or 0) and revision_of(leader) != stage.target_revision:
        return True
    if worker_sts is None:
        return False
    st = worker_sts.get("status") or {}
    rolling = bool(st.get("updateRevision")) and st.get("currentRevision") != st.get("updateRevision")
    return revision_of(worker_sts) != revision_of(leader) or rolling


def next_counts(
    counts: Mapping[str, int], keys: Mapping[int, str], outcomes: Mapping[int, GroupOutcome], live_keys: set[str]
) -> dict[str, int]:
    out = dict(counts)
    for i, outcome in outcomes.items():
        if outcome.reset:
            out.pop(keys[i], None)
        elif outcome.consumed:
            out[keys[i]] = out.get(keys[i], 0) + 1
    return B.prune_counts(out, live_keys)


def counts_action(lws: LeaderWorkerSet, snapshot: Snapshot, value: str) -> Action | None:
    sts = snapshot.get("StatefulSet", lws.name)
    if sts is None:
        return None
    return Action(
        "annotate",
        "StatefulSet",
        lws.name,
        {"annotations": {L.GROUP_RESTART_COUNTS: value}},
        uid=uid_of(sts),
        reason="group restart counts (written before the actions they account for)",
    )


def rolled_away(leader: Pod, index: int, stage: Stage) -> bool:
    """An exhausted group the rollout selected for replacement (admitted, not on the target)."""
    return index >= int(stage.partition or 0) and revision_of(leader) != stage.target_revision


def released_groups(members: Mapping[int, tuple[Pod | None, list[Pod]]], replicas: int, why: str) -> tuple[Action, ...]:
    """Release the retained pods of every group at or above ``replicas`` (scaled away)."""
    out: list[Action] = []
    for i, (leader, workers) in sorted(members.items()):
        if i >= replicas:
            out += release_actions([p for p in (leader, *workers) if p is not None], f"group {i} {why}")
    return tuple(out)


def plan_failure_actions(lws: LeaderWorkerSet, snapshot: Snapshot, stage: Stage) -> FailurePlan:
    """Failure and termination actions for an Ordinal LWS (see module docstring)."""
    sts = snapshot.get("StatefulSet", lws.name)
    if sts is None:
        return FailurePlan()
    # only groups with a pod that is not quiet can get anything (failure/quiet.py): nothing
    # failed -> no group is read; every per-group rule below is unchanged for the others
    members = loud_members(lws, snapshot)
    if is_deleting(sts):  # the LWS is being deleted: retained pods are cleaned up
        return FailurePlan(actions=released_groups(members, 0, "is deleted with the LeaderWorkerSet"))
    raw = B.observed_counts_raw(lws, snapshot)
    counts = B.parse_counts(raw)
    outcomes: dict[int, GroupOutcome] = {}
    keys: dict[int, str] = {}
    # the live keys only prune observed counts (consumed keys are live): read every leader only then
    live_keys = (
        (
            {B.count_key(rev, i) for i, rev in stage.group_revisions.items()}
            | leader_count_keys(lws, snapshot, stage.replicas)
        )
        if counts
        else set()
    )
    for i in sorted(members):
        if i >= stage.replicas:
            break
        leader, workers = members[i]
        if leader is None:
            continue
        keys[i] = B.count_key(revision_of(leader), str(i))
        live_keys.add(keys[i])
        if is_exhausted(leader) and rolled_away(leader, i, stage):
            outcomes[i] = release_outcome(str(i), leader, workers, "is replaced by the rollout")
        elif is_exhausted(leader) or not replaced_by_rollout(
            leader, snapshot.get("StatefulSet", f"{lws.name}-{i}"), i, stage
        ):
            outcomes[i] = plan_group_failure(
                lws, str(i), leader, workers, count=counts.get(keys[i], 0), now=snapshot.now
            )
    new_counts = next_counts(counts, keys, outcomes, live_keys)
    value = B.dump_counts(new_counts) if (B.tracks_counts(lws) or raw is not None) else None
    actions: list[Action] = []
    if value is not None and new_counts != counts:
        act = counts_action(lws, snapshot, value)
        actions += [act] if act else []
    for i in sorted(outcomes):
        actions += outcomes[i].actions
    actions += released_groups(members, stage.replicas, "is scaled away")
    seen = {(a.verb, a.name) for a in actions}
    actions += [a for a in plan_termination_actions(lws, snapshot, stage, members) if (a.verb, a.name) not in seen]
    return FailurePlan(
        actions=tuple(actions),
        events=tuple(e for i in sorted(outcomes) for e in outcomes[i].events),
        degraded_groups=tuple(str(i) for i in sorted(outcomes) if outcomes[i].halted),
        halted_groups=tuple(i for i in sorted(outcomes) if outcomes[i].retained),
        restart_counts=value,
        deferred=any(o.deferred for o in outcomes.values()),
    )


def with_failure_state(
    manifests: Sequence[Mapping[str, Any]], lws: LeaderWorkerSet, plan: FailurePlan
) -> list[dict[str, Any]]:
    """Rendered objects adjusted for failure handling (pure, inputs not mutated): the leader
    StatefulSet carries ``plan.restart_counts`` as its ``group-restart-counts`` annotation (so
    ``pulumi up`` keeps what the actions wrote), and halted (exhausted, leader observed
    retained) groups' worker StatefulSets are dropped: Pulumi deletes them, and they cannot
    recreate a worker whose retained object is gone before ``recover``. In the reconcile that
    exhausts a group the StatefulSet is still declared, so its pods carry the finalizer before
    anything deletes them."""
    if not plan.halted_groups and plan.restart_counts is None:  # nothing to adjust (nothing failed)
        return [m if type(m) is dict else dict(m) for m in manifests]
    halted = {f"{lws.name}-{i}" for i in plan.halted_groups}
    out: list[dict[str, Any]] = []
    for m in manifests:
        name = (m.get("metadata") or {}).get("name")
        if m.get("kind") == "StatefulSet" and name in halted:
            continue
        if m.get("kind") == "StatefulSet" and name == lws.name and plan.restart_counts is not None:
            meta = dict(m.get("metadata") or {})
            meta["annotations"] = {**(meta.get("annotations") or {}), L.GROUP_RESTART_COUNTS: plan.restart_counts}
            m = {**m, "metadata": meta}
        out.append(m if type(m) is dict else dict(m))  # a dict is passed on as it is: nothing changes it
    return out
