"""ModelServing recovery (upstream ``handleErrorPod`` / ``handleDeletedPod``) at reconcile time, pure.

``plan_recovery(ms, snapshot, groups) -> RecoveryPlan`` reads the pods of every live role replica
and decides, per ``spec.recoveryPolicy``, which pods to delete (uid-guarded ``delete`` actions,
``Background``, listed in preview, executed on update only). The StatefulSets recreate the pods
they lose, so a delete is a restart. Nothing is remembered between reconciles: every decision is a
function of the pods' own status timestamps and ``snapshot.now`` (docs/modelserving.md, "Recovery").

Rules (``spec.template.restartGracePeriodSeconds`` = G):

* **failed pod** (``handleErrorPod``): a non-deleting pod that is not Running+Ready and is either
  ``Failed`` or has a container / init container with ``restartCount > 0`` while ``Running`` or
  ``Pending``. Its failure time is the latest of its containers' ``lastState.terminated.finishedAt``,
  ``state.terminated.finishedAt``, ``state.running.startedAt`` (restarted containers) and the
  ``Ready`` condition's ``lastTransitionTime`` (when not Ready); else its ``creationTimestamp``;
  unknown: no wait. It is recovered once ``now - failure time >= G``; until then the stage waits
  (blocker ``recovery-grace-period``, "waiting 17s restartGracePeriodSeconds before recreating
  role prefill-0 of pd-2").
* **mixed generations** (``handleDeletedPod``): a deleted or evicted pod comes back by itself (its
  StatefulSet), younger than its siblings. Two non-deleting pods of one role replica with the same
  ``revision`` and ``role-template-hash`` labels are of different generations when the younger was
  created more than ``terminationGracePeriodSeconds`` (the younger pod's, default 30) +
  :data:`GENERATION_SLACK_SECONDS` after the older: its predecessor was deleted after the older pod
  existed, so the older pod ran with it. No wait (as upstream, deletions act at once).
* **what is recreated**: ``RoleRecreate`` (default) — every non-deleting pod of the role replica
  (entry + workers, the young one too); ``ServingGroupRecreate`` — every non-deleting pod of the
  ServingGroup; ``None`` — only the failed pod, and mixed generations are left alone.

Invariants: never acts on a deleting pod, a Deleting role replica or a Deleting group (so the
snapshot taken after the actions ran plans no second delete for the same failure); after a role
replica restart every pod of it is created within ``grace + slack`` of the deletion, so the
generation rule is silent (no loop); every action carries the pod's uid.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pulumi_lws.core.contract.snapshot import (
    Snapshot,
    is_deleting,
    pod_condition,
    pod_running_and_ready,
)
from pulumi_lws.core.contract.stage import Action, Blocker, Stage
from pulumi_lws.core.k8s.timestamps import parse_timestamp
from pulumi_lws.modelserving import labels as L
from pulumi_lws.modelserving.api.modelserving import (
    RECOVERY_NONE,
    SERVING_GROUP_RECREATE,
    ModelServing,
)
from pulumi_lws.modelserving.groups import (
    CREATING,
    DELETING,
    GroupState,
    group_name,
    role_id,
)
from pulumi_lws.modelserving.recovery_memo import look_memo
from pulumi_lws.modelserving.replicas import ObservedReplicas, observed_replicas

Pod = Mapping[str, Any]

#: Blocker code while a failed pod waits for ``restartGracePeriodSeconds``.
GRACE_PERIOD = "recovery-grace-period"
#: Added to ``terminationGracePeriodSeconds`` in the generation rule: kubelet grace extensions and
#: StatefulSet controller lag between a pod's disappearance and its replacement's creation.
GENERATION_SLACK_SECONDS = 10.0
DEFAULT_TERMINATION_GRACE = 30.0
#: Stage codes of the planners' "waiting for readiness" blockers, which a recovery replaces.
WAITING_CODES = ("waiting-for-groups", "waiting-for-roles")
PHASE = "recovering"
POD, ROLE, GROUP = "pod", "role", "group"


@dataclass(frozen=True)
class Recovery:
    """One recreation: the pods deleted, for the role replica ``(group, role, ordinal)`` or the
    whole group (``role is None``)."""

    group: int
    role: str | None
    ordinal: int | None
    scope: str  # "pod" | "role" | "group"
    cause: str
    actions: tuple[Action, ...]


@dataclass(frozen=True)
class Wait:
    """A failed pod inside ``restartGracePeriodSeconds``: recreated ``seconds`` from now."""

    group: int
    role: str
    ordinal: int
    seconds: int
    message: str


@dataclass(frozen=True)
class RecoveryPlan:
    """Everything recovery adds to one reconcile."""

    recoveries: tuple[Recovery, ...] = ()
    waits: tuple[Wait, ...] = ()
    #: role replicas ``(group, role, ordinal)`` being recovered (counted as not Running)
    replicas: frozenset[tuple[int, str, int]] = field(default_factory=frozenset)

    @property
    def actions(self) -> tuple[Action, ...]:
        return tuple(a for r in self.recoveries for a in r.actions)

    @property
    def groups(self) -> tuple[int, ...]:
        return tuple(sorted({g for g, _, _ in self.replicas}))

    @property
    def busy(self) -> bool:
        return bool(self.recoveries or self.waits)

    def notes(self) -> tuple[str, ...]:
        return tuple(r.cause for r in self.recoveries) + tuple(w.message for w in self.waits)

    def mark(self, groups: Sequence[GroupState]) -> tuple[GroupState, ...]:
        """``groups`` with every role replica being recovered (and its group) ``Creating``, as
        upstream sets them back to Creating: no rollout budget is spent on top of a recovery."""
        if not self.replicas:
            return tuple(groups)
        out = []
        for g in groups:
            roles = tuple(
                dataclasses.replace(r, status=CREATING)
                if (g.ordinal, r.role, r.ordinal) in self.replicas and r.status != DELETING
                else r
                for r in g.roles
            )
            hit = g.ordinal in self.groups and g.status != DELETING
            out.append(dataclasses.replace(g, roles=roles, status=CREATING if hit else g.status))
        return tuple(out)

    def declared_in(self, stage: Stage) -> RecoveryPlan:
        """Only what the stage still declares: a group (or role replica) the stage deletes goes
        away with its StatefulSets."""
        revs = stage.group_revisions
        role_keys = any("/" in k for k in revs)

        def keep(g: int, role: str | None, r: int | None) -> bool:
            if str(g) not in revs:
                return False
            return not (role_keys and role is not None and f"{g}/{role}/{r}" not in revs)

        return RecoveryPlan(
            tuple(x for x in self.recoveries if keep(x.group, x.role, x.ordinal)),
            tuple(w for w in self.waits if keep(w.group, w.role, w.ordinal)),
            frozenset(k for k in self.replicas if keep(*k)),
        )

    def apply_to(self, stage: Stage) -> Stage:
        """The stage with the recovery actions appended, recovering groups' phase ``recovering``,
        the causes as notes, the planner's "waiting for readiness" blocker replaced (by the grace
        period wait, or dropped when the stage recreates something); never ``complete`` while
        busy."""
        plan = self.declared_in(stage)
        if not plan.busy:
            return stage
        ids = {str(g) for g in plan.groups}
        views = tuple(dataclasses.replace(v, phase=PHASE) if v.id in ids and not v.phase else v for v in stage.groups)
        blocker = stage.blocker
        if blocker is not None and blocker.code in WAITING_CODES:
            if plan.recoveries:
                blocker = None
            else:
                blocker = Blocker(
                    GRACE_PERIOD,
                    "; ".join(w.message for w in plan.waits),
                    tuple(dict.fromkeys(str(w.group) for w in plan.waits)),
                    (
                        "run pulumi up again once the grace period has elapsed",
                        "or lower spec.template.restartGracePeriodSeconds",
                    ),
                )
        return dataclasses.replace(
            stage,
            actions=stage.actions + plan.actions,
            groups=views,
            blocker=blocker,
            notes=stage.notes + plan.notes(),
            complete=stage.complete and not plan.busy,
        )


# ---- pod status ------------------------------------------------------------------------------


def created_at(pod: Pod) -> float | None:
    return _timestamp((pod.get("metadata") or {}).get("creationTimestamp"))


@functools.lru_cache(maxsize=4096)
def _parsed_timestamp(value: str) -> float | None:
    return parse_timestamp(value)


def _timestamp(value: Any) -> float | None:
    """``parse_timestamp(value)``, memoised for strings: every pod's creationTimestamp is read
    each reconcile, and a fleet's pods share few distinct ones (a pure function of the string)."""
    if type(value) is str:
        return _parsed_timestamp(value)
    return parse_timestamp(value)


def name_of(pod: Pod) -> str:
    return str((pod.get("metadata") or {}).get("name") or "")


def uid_of(pod: Pod) -> str | None:
    return (pod.get("metadata") or {}).get("uid")


def _container_statuses(pod: Pod) -> list[Mapping[str, Any]]:
    st = pod.get("status") or {}
    return [*(st.get("initContainerStatuses") or []), *(st.get("containerStatuses") or [])]


def restart_count(pod: Pod) -> int:
    """Restarts of containers and init containers."""
    return sum(int(s.get("restartCount") or 0) for s in _container_statuses(pod))


def failure_time(pod: Pod) -> float | None:
    """When the pod last failed (module docstring); None when no timestamp says."""
    times: list[float | None] = []
    for s in _container_statuses(pod):
        times.append(parse_timestamp(((s.get("lastState") or {}).get("terminated") or {}).get("finishedAt")))
        state = s.get("state") or {}
        times.append(parse_timestamp((state.get("terminated") or {}).get("finishedAt")))
        if int(s.get("restartCount") or 0) > 0:
            times.append(parse_timestamp((state.get("running") or {}).get("startedAt")))
    ready = pod_condition(pod, "Ready")
    if ready is not None and ready.get("status") != "True":
        times.append(parse_timestamp(ready.get("lastTransitionTime")))
    known = [t for t in times if t is not None]
    return max(known) if known else created_at(pod)


def pod_failure(pod: Pod) -> str | None:
    """Why ``pod`` needs ``handleErrorPod`` (None: healthy, deleting, or simply not ready yet)."""
    if pod_running_and_ready(pod) or is_deleting(pod):  # the common case (ready) first: one call
        return None
    st = pod.get("status") or {}
    phase = st.get("phase") or "Pending"
    if phase == "Failed":
        reason = st.get("reason")
        return f"pod {name_of(pod)} failed" + (f" ({reason})" if reason else "")
    n = restart_count(pod)
    if phase in ("Running", "Pending") and n > 0:
        return f"pod {name_of(pod)} restarted ({n} restart{'s' if n != 1 else ''}) and is not ready"
    return None


def termination_grace(pod: Pod) -> float:
    raw = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
    try:
        return float(raw) if raw is not None else DEFAULT_TERMINATION_GRACE
    except (TypeError, ValueError):
        return DEFAULT_TERMINATION_GRACE


def mixed_generations(pods: Iterable[Pod]) -> str | None:
    """The generation rule (module docstring): why the pods of one role replica are not one
    generation, None when they are (or timestamps are missing)."""
    by_template: dict[tuple[str, str], list[tuple[float, str, Pod]]] = defaultdict(list)
    for p in pods:
        # created_at, is_deleting, labels_of and name_of over one read of the metadata
        meta = p.get("metadata") or {}
        born = _timestamp(meta.get("creationTimestamp"))
        if born is None or meta.get("deletionTimestamp"):
            continue
        lbl = meta.get("labels") or {}
        by_template[(str(lbl.get(L.REVISION, "")), str(lbl.get(L.ROLE_TEMPLATE_HASH, "")))].append(
            (born, str(meta.get("name") or ""), p)
        )
    for key in sorted(by_template):
        members = sorted(by_template[key], key=lambda m: (m[0], m[1]))
        (old_t, old, _), (young_t, young, young_pod) = members[0], members[-1]
        limit = termination_grace(young_pod) + GENERATION_SLACK_SECONDS
        if young_t - old_t > limit:
            return (
                f"pod {young} was recreated {young_t - old_t:g}s after {old} was created (more than "
                f"terminationGracePeriodSeconds + {GENERATION_SLACK_SECONDS:g}s): its siblings ran with the pod it replaced"
            )
    return None


# ---- the plan --------------------------------------------------------------------------------


def _needs_a_look(pods: Sequence[Pod], policy: str) -> bool:
    """Whether a live replica's ``pods`` can make :func:`plan_recovery` act or wait: a pod that
    failed (:func:`pod_failure`) or, unless the policy is None, two generations."""
    if any(pod_failure(p) is not None for p in pods):
        return True
    return policy != RECOVERY_NONE and mixed_generations(pods) is not None


def _delete(pods: Iterable[Pod], reason: str) -> tuple[Action, ...]:
    return tuple(
        Action("delete", "Pod", name_of(p), {"propagation": "Background"}, uid=uid_of(p), reason=reason)
        for p in sorted(pods, key=name_of)
        if not is_deleting(p)
    )


def plan_recovery(
    ms: ModelServing, snapshot: Snapshot, groups: Sequence[GroupState], observed: ObservedReplicas | None = None
) -> RecoveryPlan:
    """Recovery for every live role replica of ``groups`` (observed, not yet marked). ``observed``:
    the reconcile's index of ``snapshot`` when the caller has it (same answer)."""
    policy = ms.spec.recovery_policy
    grace = int(ms.spec.template.restart_grace_period_seconds or 0)
    observed = observed or observed_replicas(ms.name, snapshot)
    recoveries: list[Recovery] = []
    waits: list[Wait] = []
    replicas: set[tuple[int, str, int]] = set()
    memo = look_memo(snapshot, (ms.namespace, ms.name), policy)  # the same answers (recovery_memo.py)
    for g in sorted(groups, key=lambda x: x.ordinal):
        if g.status == DELETING or not any(
            _needs_a_look(observed.pods_of(key), policy)
            if memo is None
            else memo.needs(key, observed.pods_of(key), _needs_a_look)
            for key in ((g.ordinal, r.role, r.ordinal) for r in g.roles if r.status != DELETING)
        ):
            continue  # no pod of a live replica failed or is of another generation: nothing to do
        gname = group_name(ms.name, g.ordinal)
        live = [r for r in sorted(g.roles, key=lambda r: (r.role, r.ordinal)) if r.status != DELETING]
        group_causes: list[str] = []
        group_waits: list[Wait] = []
        for rep in live:
            pods = observed.pods_of((g.ordinal, rep.role, rep.ordinal))
            rid = role_id(rep.role, rep.ordinal)
            due: list[tuple[Pod, str]] = []
            pending: list[tuple[Pod, int]] = []
            for p in sorted(pods, key=name_of):
                why = pod_failure(p)
                if why is None:
                    continue
                since = failure_time(p)
                left = 0.0 if since is None else since + grace - snapshot.now
                if left > 0:
                    pending.append((p, max(1, math.ceil(left))))
                else:
                    due.append((p, why + (f" for {grace}s restartGracePeriodSeconds" if grace else "")))
            generation = mixed_generations(pods) if policy != RECOVERY_NONE else None
            key = (g.ordinal, rep.role, rep.ordinal)
            if policy == RECOVERY_NONE:
                for p, why in due:
                    msg = f"{why}; recoveryPolicy None: recreating pod {name_of(p)}"
                    recoveries.append(Recovery(g.ordinal, rep.role, rep.ordinal, POD, msg, _delete([p], msg)))
                    replicas.add(key)
                for p, s in pending:
                    waits.append(
                        Wait(
                            g.ordinal,
                            rep.role,
                            rep.ordinal,
                            s,
                            f"waiting {s}s restartGracePeriodSeconds before recreating pod {name_of(p)} of {gname}",
                        )
                    )
                    replicas.add(key)
                continue
            causes = [why for _, why in due] + ([generation] if generation else [])
            if policy == SERVING_GROUP_RECREATE:
                group_causes += causes
                group_waits += [Wait(g.ordinal, rep.role, rep.ordinal, s, "") for _, s in pending]
                continue
            if causes:  # RoleRecreate
                msg = f"{'; '.join(causes)}; RoleRecreate: recreating role {rid} of {gname}"
                recoveries.append(Recovery(g.ordinal, rep.role, rep.ordinal, ROLE, msg, _delete(pods, msg)))
                replicas.add(key)
            elif pending:
                s = min(s for _, s in pending)
                waits.append(
                    Wait(
                        g.ordinal,
                        rep.role,
                        rep.ordinal,
                        s,
                        f"waiting {s}s restartGracePeriodSeconds before recreating role {rid} of {gname}",
                    )
                )
                replicas.add(key)
        if group_causes:
            msg = f"{'; '.join(group_causes)}; ServingGroupRecreate: recreating ServingGroup {gname}"
            pods = observed.group_pods(g.ordinal)
            recoveries.append(Recovery(g.ordinal, None, None, GROUP, msg, _delete(pods, msg)))
            replicas |= {(g.ordinal, r.role, r.ordinal) for r in live}
        elif group_waits:
            s = min(w.seconds for w in group_waits)
            first = group_waits[0]
            waits.append(
                Wait(
                    g.ordinal,
                    first.role,
                    first.ordinal,
                    s,
                    f"waiting {s}s restartGracePeriodSeconds before recreating ServingGroup {gname}",
                )
            )
            replicas |= {(g.ordinal, r.role, r.ordinal) for r in live}
    if memo is not None:
        memo.close()
    return RecoveryPlan(tuple(recoveries), tuple(waits), frozenset(replicas))
