"""The RoleRollingUpdate stage planner: per (ServingGroup, role), the fixed point of upstream's
``manageRoleReplicasPerGroup`` (role replica sync with the role's maxSurge) and
``rolesToDeleteForRoleRollingUpdate`` (per-role budget), readiness held constant, with
delete-then-recreate at the same role ordinal fused into one declaration (as for ServingGroups,
:mod:`.servinggroup`).

Upstream rolls every ServingGroup at once, each with its own per-role budget (the seed's
contract and this planner's default). ``max_groups_in_flight`` (opt-in) caps how many
ServingGroups may have a role below ready at once: groups already below ready always continue;
others start, highest ordinal first, only while the cap allows. ``warnings`` says when a stage
takes every ServingGroup below ready (kthena#1344, #1429).

A ServingGroup is *ready* when, for every spec role, at least ``role.replicas`` declared replicas
are Running (pulumi-lws counts a group unavailable while any of its roles is below ready).

The plan's types, its change values and the readiness and lane derivations are :mod:`.role_plan`'s.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from pulumi_lws.core.contract.stage import Blocker, PredictedStage
from pulumi_lws.modelserving.groups import (
    CREATING,
    DELETING,
    RUNNING,
    GroupState,
    RoleReplicaState,
    group_name,
    is_running,
)
from pulumi_lws.modelserving.rollout.budgets import (
    PULUMI_LWS,
    Choices,
    ServingGroupBudget,
)
from pulumi_lws.modelserving.rollout.deletion import sync_servinggroup_replicas
from pulumi_lws.modelserving.rollout.role import (
    RoleReplicaSync,
    RoleSpec,
    known_hash,
    manage_role_replicas_per_group,
    role_replicas_to_delete,
)
from pulumi_lws.modelserving.rollout.role_plan import (
    CREATE,
    DELETE,
    REPLACE,
    PlannedReplica,
    RolePlan,
    group_updated_declared,
)
from pulumi_lws.modelserving.rollout.waves import Step, prediction

POLICY = "modelserving/role"
WAITING = "waiting-for-roles"
CAPPED = "groups-in-flight-cap"
NO_BUDGET = "no-role-budget"
MAX_LOOP = 1000


def _role_fixed_point(
    g: int,
    reps: dict[int, PlannedReplica],
    spec: RoleSpec,
    update_revision: str,
    legacy: str | None,
    choices: Choices,
    protected_revision: str | None,
    protected_hash: str | None,
) -> None:
    def snap() -> list[RoleReplicaState]:
        return [reps[o].state() for o in sorted(reps)]

    def sync(states: Sequence[RoleReplicaState]) -> RoleReplicaSync:
        return manage_role_replicas_per_group(
            states,
            spec,
            update_revision,
            legacy_hash=legacy,
            choices=choices,
            protected_revision=protected_revision,
            protected_hash=protected_hash,
        )

    for _ in range(MAX_LOOP):
        changed = False
        s = sync(snap())
        for c in s.created:
            reps[c.ordinal] = PlannedReplica(g, spec.name, c.ordinal, c.template_hash, CREATING, CREATE, False)
            changed = True
        for rid in s.deleted:
            changed |= _delete(reps, int(rid.rsplit("-", 1)[1]))
        d = role_replicas_to_delete(snap(), spec.template_hash, spec.budget, legacy_hash=legacy, choices=choices)
        for rid in d.to_delete:
            o = int(rid.rsplit("-", 1)[1])
            if reps[o].status == DELETING:
                continue
            again = {c.ordinal: c for c in sync([x for x in snap() if x.ordinal != o]).created}
            prev = reps[o]
            if o in again:
                reps[o] = PlannedReplica(
                    g,
                    spec.name,
                    o,
                    again[o].template_hash,
                    CREATING,
                    CREATE if prev.change == CREATE else REPLACE,
                    prev.observed,
                )
            else:
                _delete(reps, o)
            changed = True
        if not changed:
            return
    raise RuntimeError("role fixed point did not converge")  # pragma: no cover


def _delete(reps: dict[int, PlannedReplica], o: int) -> bool:
    r = reps[o]
    if r.status == DELETING:
        return False
    if r.change == CREATE:
        del reps[o]
    else:
        reps[o] = replace(r, status=DELETING, change=DELETE)
    return True


def _outdated_group(g: GroupState, specs: Sequence[RoleSpec], legacy: Mapping[str, str]) -> bool:
    by = {s.name: s.template_hash for s in specs}
    for r in g.roles:
        if r.status == DELETING:
            continue
        if r.role not in by:
            return True
        h = known_hash(r, legacy.get(r.role))
        if h and h != by[r.role]:
            return True
    return False


def _below_ready(g: GroupState, specs: Sequence[RoleSpec]) -> bool:
    return any(sum(1 for r in g.roles if r.role == s.name and is_running(r)) < s.replicas for s in specs)


def plan_role_rollout(
    specs: Sequence[RoleSpec],
    update_revision: str,
    observed: Sequence[GroupState],
    *,
    replicas: int,
    legacy_hashes: Mapping[int, Mapping[str, str]] | None = None,
    current_revision: str | None = None,
    current_role_hashes: Mapping[str, str] | None = None,
    max_groups_in_flight: int | None = None,
    choices: Choices = PULUMI_LWS,
    ms: str = "ms",
    predict: bool = True,
) -> RolePlan:
    """One RoleRollingUpdate stage over every ServingGroup (see the module docstring)."""
    specs = tuple(specs)
    legacy_hashes = legacy_hashes or {}
    current_role_hashes = current_role_hashes or {}
    by_ord = {g.ordinal: g for g in observed}
    # ServingGroup count: plain sync to `replicas` (no ServingGroup surge under RoleRollingUpdate)
    sync = sync_servinggroup_replicas(
        list(observed), ServingGroupBudget(replicas), update_revision, strategy_is_servinggroup=False, choices=choices
    )
    new_groups = tuple(c.ordinal for c in sync.created)
    deleted_groups = tuple(o for o in sync.deleted if by_ord[o].status != DELETING)
    gone = set(sync.deleted) | {o for o, g in by_ord.items() if g.status == DELETING}
    roles: list[PlannedReplica] = []
    group_revisions: dict[int, str] = {}
    for o in new_groups:
        group_revisions[o] = update_revision
        roles += [
            PlannedReplica(o, s.name, r, s.template_hash, CREATING, CREATE, False)
            for s in specs
            for r in range(s.replicas)
        ]
    # which groups may move this stage
    candidates = [g for g in sorted(observed, key=lambda g: (is_running(g), -g.ordinal)) if g.ordinal not in gone]
    in_flight = {g.ordinal for g in candidates if _below_ready(g, specs) or any(r.status != RUNNING for r in g.roles)}
    admitted = set(in_flight)
    deferred = []
    for g in candidates:
        if g.ordinal in admitted or not _outdated_group(g, specs, legacy_hashes.get(g.ordinal, {})):
            continue
        if max_groups_in_flight is None or len(admitted) < max_groups_in_flight:
            admitted.add(g.ordinal)
        else:
            deferred.append(g.ordinal)
    for g in sorted(observed, key=lambda g: g.ordinal):
        if g.ordinal in gone:
            continue
        legacy = legacy_hashes.get(g.ordinal, {})
        obs_roles = [
            PlannedReplica(
                g.ordinal,
                r.role,
                r.ordinal,
                r.template_hash or legacy.get(r.role, ""),
                r.status,
                deletion_cost=r.deletion_cost,
            )
            for r in g.roles
        ]
        if g.ordinal not in admitted:
            roles += obs_roles
            group_revisions[g.ordinal] = g.revision
            continue
        names = {s.name for s in specs}
        mine: list[PlannedReplica] = [
            replace(r, status=DELETING, change=DELETE) if r.role not in names and r.declared else r
            for r in obs_roles
            if r.role not in names
        ]
        for s in specs:
            reps = {r.ordinal: r for r in obs_roles if r.role == s.name}
            _role_fixed_point(
                g.ordinal,
                reps,
                s,
                update_revision,
                legacy.get(s.name),
                choices,
                current_revision,
                current_role_hashes.get(s.name),
            )
            mine += [reps[o] for o in sorted(reps)]
        roles += mine
        group_revisions[g.ordinal] = update_revision if group_updated_declared(mine, specs) else g.revision
    roles.sort(key=lambda r: (r.group, r.role, r.ordinal))
    plan = RolePlan(
        update_revision,
        specs,
        replicas,
        dict(sorted(group_revisions.items())),
        {g.ordinal: g.revision for g in observed},
        tuple(roles),
        deferred=tuple(deferred),
        new_groups=new_groups,
        deleted_groups=deleted_groups,
    )
    complete = _complete(plan, observed)
    warnings: tuple[str, ...] = ()
    if (
        plan.changed
        and plan.group_revisions
        and not any(plan.group_ready(g) for g in plan.group_revisions)
        and any(not _below_ready(g, specs) for g in observed)
    ):
        n = len(plan.group_revisions)
        warnings = (
            (
                f"RoleRollingUpdate: per-role budgets take every ServingGroup ({n}) below ready in this stage; "
                "set max_groups_in_flight to keep some ServingGroups serving"
            ),
        )
    blocker = None
    if not complete and not plan.changed:
        blocker = _blocker(plan, ms)
    plan = replace(plan, complete=complete, blocker=blocker, warnings=warnings)
    if predict and not complete:
        predicted = prediction(
            walk(
                plan,
                legacy_hashes=legacy_hashes,
                current_revision=current_revision,
                current_role_hashes=current_role_hashes,
                max_groups_in_flight=max_groups_in_flight,
                choices=choices,
            )
        )
        plan = replace(plan, remaining=predicted.stages, warnings=plan.warnings + predicted.notes())
    return plan


def _complete(plan: RolePlan, observed: Sequence[GroupState]) -> bool:
    if plan.changed or len(plan.group_revisions) != plan.replicas or any(g.status == DELETING for g in observed):
        return False
    for g in plan.group_revisions:
        mine = [r for r in plan.roles if r.group == g]
        if any(not r.declared or r.status != RUNNING for r in mine):
            return False
        for s in plan.specs:
            reps = [r for r in mine if r.role == s.name]
            if len(reps) != s.replicas:
                return False
            ordered = sorted(reps, key=lambda r: r.ordinal)
            eligible = [r for r in ordered if not 0 <= r.ordinal < s.budget.partition]
            if any(r.template_hash not in ("", s.template_hash) for r in eligible):
                return False
    return True


def _blocker(plan: RolePlan, ms: str) -> Blocker:
    unready = [
        f"{group_name(ms, r.group)}/{r.role}-{r.ordinal}" for r in plan.roles if r.declared and r.status != RUNNING
    ]
    if unready:
        return Blocker(WAITING, f"waiting for role replicas [{', '.join(unready)}] to become ready", tuple(unready))
    gone = [f"{group_name(ms, r.group)}/{r.role}-{r.ordinal}" for r in plan.roles if not r.declared]
    if gone:
        return Blocker(WAITING, f"waiting for role replicas [{', '.join(gone)}] to be deleted", tuple(gone))
    if plan.deferred:
        return Blocker(CAPPED, f"groups {[group_name(ms, g) for g in plan.deferred]} wait for max_groups_in_flight", ())
    return Blocker(
        NO_BUDGET, "role maxUnavailable and maxSurge leave no budget to replace an outdated role replica", ()
    )


def settle(plan: RolePlan) -> list[GroupState]:
    """The next observation if every declared replica becomes ready and every deletion finishes."""
    out = []
    for g, rev in plan.group_revisions.items():
        reps = tuple(
            RoleReplicaState(r.role, r.ordinal, r.template_hash, RUNNING, r.deletion_cost)
            for r in plan.roles
            if r.group == g and r.declared
        )
        out.append(GroupState(g, rev, RUNNING, sum(r.deletion_cost for r in reps), reps))  # the same pods, ready
    return out


def observe_after(plan: RolePlan, ready: bool | set[str] = True, gone: bool = True) -> list[GroupState]:
    """Test/simulation helper: the observation after applying ``plan``; ``ready`` = every declared
    replica (True), none (False) or those keys ``"g/role/r"``; ``gone`` = deletions finished."""
    out = []
    for g, rev in plan.group_revisions.items():
        reps = []
        for r in plan.roles:
            if r.group != g:
                continue
            if not r.declared:
                if not gone:
                    reps.append(RoleReplicaState(r.role, r.ordinal, r.template_hash, DELETING))
                continue
            ok = ready is True or (isinstance(ready, set) and r.key in ready)
            reps.append(RoleReplicaState(r.role, r.ordinal, r.template_hash, RUNNING if ok else r.status))
        out.append(GroupState(g, rev, RUNNING, 0, tuple(reps)))
    return out


def walk(plan: RolePlan, **kw: Any) -> Iterator[Step]:
    """Future stages assuming every declared replica becomes ready, in order, unbounded
    (:func:`~pulumi_lws.modelserving.rollout.waves.prediction` bounds and shows them)."""
    obs = settle(plan)
    while True:
        nxt = plan_role_rollout(plan.specs, plan.update_revision, obs, replicas=plan.replicas, predict=False, **kw)
        stage = PredictedStage(
            len(nxt.group_revisions),
            None,
            nxt.chars(),
            ids=tuple(str(g) for g in sorted(nxt.group_revisions)),
            complete=nxt.complete,
            lanes=nxt.role_lanes(),
        )
        if nxt.complete or nxt.blocker is not None:
            yield stage, len(obs), True
            return
        nobs = settle(nxt)
        if nobs == obs:
            yield stage, len(obs), True
            return
        yield stage, len(obs), False
        obs = nobs


def predict_remaining(plan: RolePlan, **kw: Any) -> tuple[PredictedStage, ...]:
    """The stages shown after ``plan`` (:func:`walk`, bounded and in waves: :mod:`.waves`)."""
    return prediction(walk(plan, **kw)).stages
