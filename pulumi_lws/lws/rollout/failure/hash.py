"""Hash-mode failure handling: restart policies, restart budget with transfer, retention (pure).

``plan_hash_failure(lws, snapshot, stage) -> FailurePlan`` runs after ``plan_hash`` on the same
snapshot and decides per group key (docs/failure-handling.md "Hash mode"):

* every **admitted** leader (ungated, not deleting) goes through the mode-agnostic
  :func:`pulumi_lws.lws.rollout.failure.ordinal.plan_group_failure`: a restarted or deleted pod of its
  incarnation recreates the group = ``delete`` the leader (Foreground; the ReplicaSet creates a
  replacement, gated and admitted by the group-replacement rules; the garbage collector removes
  the worker StatefulSet the leader owns) + the worker part per ``podTerminationPolicy``;
  AfterStart, backoff and exhaustion as in Ordinal mode. Gated leaders have no group yet;
* counts ``"<rev>/<group key>"`` live on the leader **Deployment** ``<lws>`` (annotation
  ``group-restart-counts``, written by an ``annotate`` action placed *first* in the stage's
  action list, and carried by the rendered Deployment: :func:`with_hash_failure_state`);
* **budget transfer**: a recreated group gets a new key. When a gated leader is admitted (an
  ``ungate`` action of this stage), the count of a group of the same (target) revision that is
  being recreated moves to the new key. "Being recreated" = a count key whose group has no
  live leader (deleting or gone, not exhausted) while the revision still has a free slot
  (``replicas - admitted - exhausted`` leaders); such orphan counts are kept (highest first)
  until a replacement takes them, the rest are pruned (scale-down, rollout: other revisions);
* **exhaustion**: leader annotated exhausted, every pod retained (finalizer + delete); the
  retained leader holds back one gated replacement (the gate counts exhausted leaders under
  both policies); its worker objects are no longer declared (``render_hash`` skips
  ``exhausted`` groups); ``recover=true`` clears the count and removes the finalizers, and the
  held-back replacement is admitted with a fresh budget. A retained group on a revision other
  than the target (rollout) or beyond ``replicas - admitted`` (scale-down) is released;
* ``podTerminationPolicy: Parallel``: the workers of any deleting leader are deleted at once;
  Sequential needs nothing (the worker StatefulSet is owned by the leader pod);
* **terminal leader** (phase ``Failed``/``Succeeded``, not deleting, not exhausted: the
  ReplicaSet has already created its replacement, :func:`terminal_leader_outcome`): the group is
  torn down at once = ``delete`` the leader (Foreground, uid-guarded) + the worker part per
  ``podTerminationPolicy``. Recreate policies count it against ``maxGroupRestarts`` (at the limit
  the group is exhausted and retained instead); ``restartPolicy: None`` deletes it too, without a
  count (a dead leader would otherwise hold its group's slot and workers forever). No
  AfterStart wait (the group cannot start again) and no restartBackoff (the replacement already
  exists; waiting would only hold it back under PostTermination). Its count key is not live, so
  the count moves to the replacement when that one is admitted.

Invariants: pure; every action uid-guarded; the counts action precedes the ``ungate`` it pays
for, so a crash between them never loses a transferred count; re-planning after the actions
ran adds no second recreation and no second transfer (the new key already has a count).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_lws.core.contract.snapshot import Snapshot, annotations_of, is_deleting, labels_of
from pulumi_lws.core.contract.stage import Action, Stage
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.observe import revision_of
from pulumi_lws.lws.rollout.failure import restart_budget as B
from pulumi_lws.lws.rollout.failure.ordinal import (
    RECREATE_GROUP,
    FailureEvent,
    FailurePlan,
    GroupOutcome,
    current_workers,
    effective_policy,
    exhaust_outcome,
    plan_group_failure,
    release_outcome,
)
from pulumi_lws.lws.rollout.failure.retention import release_actions
from pulumi_lws.lws.rollout.failure.termination import (
    FOREGROUND,
    follow_actions,
    group_termination_actions,
    name_of,
    uid_of,
    worker_teardown_actions,
)
from pulumi_lws.lws.rollout.hash.admission import (
    creation_order,
    group_index,
    group_key,
    is_exhausted,
    is_gated,
    is_terminal,
    short_id,
)
from pulumi_lws.lws.rollout.hash.planner import leader_pods, lws_pods

Pod = Mapping[str, Any]


def workers_by_group(lws: LeaderWorkerSet, pods: Sequence[Pod]) -> dict[str, list[Pod]]:
    """Worker pods (``worker-index`` != 0) by their ``group-index`` (= the group key)."""
    out: dict[str, list[Pod]] = {}
    for p in pods:
        gi = group_index(lws.namespace, p)
        if gi is not None and labels_of(p).get(L.WORKER_INDEX) != "0":
            out.setdefault(gi, []).append(p)
    return out


def count_key_of(lws: LeaderWorkerSet, leader: Pod) -> str:
    return B.count_key(revision_of(leader), group_key(lws.namespace, leader))


def admitted_live(leader: Pod) -> bool:
    """Holds an admitted slot: ungated, not deleting, not exhausted, not terminal."""
    return not is_gated(leader) and not is_deleting(leader) and not is_exhausted(leader) and not is_terminal(leader)


def holds_count_key(leader: Pod) -> bool:
    """The leader's count key stays with it: a live (not deleting, not terminal) or exhausted
    leader. Other keys are orphans: their groups are being recreated."""
    return (not is_deleting(leader) and not is_terminal(leader)) or is_exhausted(leader)


# ---- which exhausted groups are released (rollout, scale-down) --------------------------------


def released_leaders(lws: LeaderWorkerSet, leaders: Sequence[Pod], target: str) -> dict[str, str]:
    """``{leader name: why}`` for exhausted leaders to release: on another revision than the
    target (the rollout replaces them), or the newest beyond ``replicas - admitted`` on the
    target revision (scaled down)."""
    out: dict[str, str] = {}
    on_target = sorted((p for p in leaders if is_exhausted(p) and revision_of(p) == target), key=creation_order)
    keep = max(0, lws.replicas - sum(1 for p in leaders if revision_of(p) == target and admitted_live(p)))
    for p in on_target[keep:]:
        out[str(p["metadata"]["name"])] = "is scaled away"
    for p in leaders:
        if is_exhausted(p) and revision_of(p) != target:
            out[str(p["metadata"]["name"])] = "is replaced by the rollout"
    return out


# ---- counts: consume, reset, transfer, prune ----------------------------------------------------


def applied_outcomes(counts: Mapping[str, int], outcomes: Mapping[str, GroupOutcome]) -> dict[str, int]:
    out = dict(counts)
    for key, outcome in outcomes.items():
        if outcome.reset:
            out.pop(key, None)
        elif outcome.consumed:
            out[key] = out.get(key, 0) + 1
    return out


def transfer_counts(
    lws: LeaderWorkerSet, counts: Mapping[str, int], leaders: Sequence[Pod], target: str, admitted_now: Sequence[Pod]
) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """Counts after transfers and pruning, and the ``(from key, to key)`` transfers made.

    Kept: keys of groups with a live (not deleting, not terminal) or exhausted leader
    (:func:`holds_count_key`); orphan keys of the
    target revision up to the free slots (highest counts first), each moved to a leader
    admitted by this stage (oldest first) that has no count yet. Everything else is pruned."""
    live = {count_key_of(lws, p) for p in leaders if holds_count_key(p)}
    orphans = sorted(
        (k for k in counts if k not in live and k.split("/", 1)[0] == target), key=lambda k: (-counts[k], k)
    )
    occupied = sum(1 for p in leaders if revision_of(p) == target and (admitted_live(p) or is_exhausted(p)))
    kept = orphans[: max(0, lws.replicas - occupied)]
    receivers = [
        count_key_of(lws, p)
        for p in sorted(admitted_now, key=creation_order)
        if revision_of(p) == target and count_key_of(lws, p) not in counts
    ]
    transfers = list(zip(kept, receivers))
    out = {k: v for k, v in counts.items() if k in live or k in kept}
    for src, dst in transfers:
        out[dst] = out.pop(src)
    return out, transfers


def counts_action(
    snapshot: Snapshot, lws: LeaderWorkerSet, value: str, transfers: Sequence[tuple[str, str]]
) -> Action | None:
    deploy = snapshot.get("Deployment", lws.name)
    if deploy is None:
        return None
    why = (
        "; ".join(f"transfer {src} -> {dst}" for src, dst in transfers) or "consumed before the recreation it pays for"
    )
    return Action(
        "annotate",
        "Deployment",
        lws.name,
        {"annotations": {L.GROUP_RESTART_COUNTS: value}},
        uid=uid_of(deploy),
        reason=f"group restart counts ({why})",
    )


# ---- the plan -------------------------------------------------------------------------------------

TERMINAL_LEADER = "TerminalLeaderRemoved"


def terminal_leader_outcome(
    lws: LeaderWorkerSet, gid: str, leader: Pod, workers: Sequence[Pod], count: int
) -> GroupOutcome:
    """A terminal (Failed/Succeeded) leader that is neither deleting nor exhausted: tear its group
    down now (see module docstring). Recreate policies consume one count (or exhaust the group at
    the limit); ``restartPolicy: None`` deletes without counting."""
    phase = (leader.get("status") or {}).get("phase")
    signal = f"Leader pod {name_of(leader)} is {phase}"
    members = current_workers(leader, workers)
    counted = effective_policy(lws) != "None"
    if counted and B.budget_exhausted(lws, count):
        return exhaust_outcome(lws, gid, leader, members, signal, count)
    why = (
        f"{signal}, deleted it and its workers to recreate group {gid}"
        if counted
        else f"{signal}, deleted it and its workers so its replacement takes group {gid}'s slot (restartPolicy None)"
    )
    actions = (
        Action("delete", "Pod", name_of(leader), {"propagation": FOREGROUND}, uid=uid_of(leader), reason=why),
        *worker_teardown_actions(lws, leader, members, why),
    )
    event = FailureEvent(RECREATE_GROUP if counted else TERMINAL_LEADER, gid, why)
    return GroupOutcome(actions=actions, events=(event,), consumed=counted)


def group_outcome(
    lws: LeaderWorkerSet,
    leader: Pod,
    workers: Sequence[Pod],
    counts: Mapping[str, int],
    released: Mapping[str, str],
    now: float,
) -> GroupOutcome | None:
    """The failure decision for one leader (None: not a group failure handling acts on).
    Order: exhausted (release / retain / recover), deleting (nothing), terminal (tear down, gated
    or not), gated (no group yet), else the restart policy's decision."""
    gid = short_id(group_key(lws.namespace, leader))
    name = str(leader["metadata"]["name"])
    count = counts.get(count_key_of(lws, leader), 0)
    if is_exhausted(leader) and name in released:
        return release_outcome(gid, leader, workers, released[name])
    if not is_exhausted(leader) and is_deleting(leader):
        return None
    if not is_exhausted(leader) and is_terminal(leader):
        return terminal_leader_outcome(lws, gid, leader, workers, count)
    if not is_exhausted(leader) and is_gated(leader):
        return None
    return plan_group_failure(lws, gid, leader, workers, count=count, now=now)


def termination_actions(lws: LeaderWorkerSet, leaders: Sequence[Pod], workers: Mapping[str, list[Pod]]) -> list[Action]:
    """Parallel: workers of a deleting leader go at once; marked workers follow a gone leader."""
    by_key = {group_key(lws.namespace, p): p for p in leaders}
    out: list[Action] = []
    for key in sorted(set(by_key) | set(workers)):
        leader, members = by_key.get(key), workers.get(key, [])
        if lws.spec.pod_termination_policy == "Parallel":
            out += group_termination_actions(lws, leader, members, None)
        else:
            out += follow_actions(leader, members)
    return out


def plan_hash_failure(lws: LeaderWorkerSet, snapshot: Snapshot, stage: Stage) -> FailurePlan:
    """Failure handling for a Hash LWS (see module docstring)."""
    pods = lws_pods(snapshot, lws)
    leaders = leader_pods(pods)
    workers = workers_by_group(lws, pods)
    deploy = snapshot.get("Deployment", lws.name)
    if deploy is not None and is_deleting(deploy):
        return FailurePlan(actions=release_actions(pods, "the LeaderWorkerSet is deleted"))
    raw = None if deploy is None else annotations_of(deploy).get(L.GROUP_RESTART_COUNTS)
    counts = B.parse_counts(raw)
    released = released_leaders(lws, leaders, stage.target_revision)
    outcomes: dict[str, GroupOutcome] = {}
    for leader in leaders:
        outcome = group_outcome(
            lws, leader, workers.get(group_key(lws.namespace, leader), []), counts, released, snapshot.now
        )
        if outcome is not None:
            outcomes[count_key_of(lws, leader)] = outcome
    ungated = {a.name for a in stage.actions if a.verb == "ungate"}
    new_counts, transfers = transfer_counts(
        lws,
        applied_outcomes(counts, outcomes),
        leaders,
        stage.target_revision,
        [p for p in leaders if p["metadata"]["name"] in ungated],
    )
    value = B.dump_counts(new_counts) if (B.tracks_counts(lws) or raw is not None) else None
    first = counts_action(snapshot, lws, value, transfers) if value is not None and new_counts != counts else None
    actions = [a for o in outcomes.values() for a in o.actions]
    seen = {(a.verb, a.name) for a in actions}
    actions += [a for a in termination_actions(lws, leaders, workers) if (a.verb, a.name) not in seen]
    degraded = tuple(
        short_id(group_key(lws.namespace, p))
        for p in leaders
        if is_exhausted(p) and p["metadata"]["name"] not in released
    )
    return FailurePlan(
        actions=tuple(actions),
        events=tuple(e for o in outcomes.values() for e in o.events),
        degraded_groups=degraded,
        restart_counts=value,
        first_actions=(first,) if first else (),
        deferred=any(o.deferred for o in outcomes.values()),
    )


def with_hash_failure_state(
    manifests: Sequence[Mapping[str, Any]], lws: LeaderWorkerSet, plan: FailurePlan
) -> list[dict[str, Any]]:
    """Rendered objects with the leader Deployment carrying ``plan.restart_counts`` (so
    ``pulumi up`` keeps what the actions wrote). Pure: inputs are not mutated."""
    out: list[dict[str, Any]] = []
    for m in manifests:
        if (
            m.get("kind") == "Deployment"
            and (m.get("metadata") or {}).get("name") == lws.name
            and plan.restart_counts is not None
        ):
            meta = dict(m.get("metadata") or {})
            meta["annotations"] = {**(meta.get("annotations") or {}), L.GROUP_RESTART_COUNTS: plan.restart_counts}
            m = {**m, "metadata": meta}
        out.append(dict(m))
    return out
