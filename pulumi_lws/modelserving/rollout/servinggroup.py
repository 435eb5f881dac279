"""The ServingGroupRollingUpdate stage planner: the fixed point of upstream's loop on one observation.

Upstream runs ``syncServingGroupReplicas`` and ``manageRollingUpdate`` within milliseconds of each
other; one ``pulumi up`` applies their fixed point for the observed readiness (readiness held
constant: observed statuses stay, new groups are ``Creating``):

    repeat: sync replicas (scale up / binpack down to replicas [+ maxSurge]) -> rolling deletion
    until neither changes anything (bounded).

**Fusion.** When the rolling deletion picks an outdated group at ordinal ``o`` and the next sync
would recreate exactly ``o`` (hole-filling: ``o`` is among the lowest missing ordinals it fills),
the planner declares ``o`` on the recreated revision in the same stage ("replace": the group's
StatefulSets are updated in place). Otherwise the group is no longer declared and counts as
``Deleting`` (it keeps its ordinal and counts in ``len(groups)``) until it is observed gone — as
upstream's datastore does — so nothing is created in its place before it has terminated.

Observed ``Deleting`` groups are never declared; they count as live until they disappear.

The prediction (:func:`walk`) is shown stage by stage up to 200 stages, past that in waves within
a bound on its work (:mod:`.waves`, "Waves").
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import ClassVar, cast

from pulumi_lws.core.contract.stage import Blocker, PredictedStage
from pulumi_lws.modelserving.groups import (
    CREATING,
    DELETING,
    RUNNING,
    GroupState,
    by_ordinal,
    group_name,
)
from pulumi_lws.modelserving.rollout.budgets import (
    PULUMI_LWS,
    Choices,
    ServingGroupBudget,
    split_protected,
)
from pulumi_lws.modelserving.rollout.deletion import (
    SyncResult,
    servinggroup_rolling_deletion,
    sync_servinggroup_replicas,
)
from pulumi_lws.modelserving.rollout.resync import ResyncIndex
from pulumi_lws.modelserving.rollout.waves import Step, prediction

POLICY = "modelserving/servinggroup"
SURGE_NOT_READY = "surge-not-ready"
WAITING = "waiting-for-groups"
WAITING_DELETION = "waiting-for-deletion"
REVISION_MISSING = "controller-revision-missing"
NO_BUDGET = "no-availability-budget"
MAX_LOOP = 1000

CREATE, REPLACE, DELETE = "create", "replace", "delete"


@dataclass(frozen=True)
class PlannedGroup:
    """One ServingGroup after the stage: its revision, modelled status and what the stage does to it."""

    ordinal: int
    revision: str
    status: str  # observed status, CREATING for created/replaced, DELETING for removed
    change: str = ""  # "" | "create" | "replace" | "delete"
    observed: bool = True  # the group exists in the observation
    #: Σ pod-deletion-cost of the observed group's pods, kept while its pods are (unchanged or being
    #: deleted); 0 for a group this stage creates or replaces (new pods carry no cost). The binpack
    #: scale-down orders Running groups by it: dropping it would delete the highest ordinal where
    #: Kthena deletes the cheapest (tests/modelserving/rollout/test_ms_deletion_cost.py)
    deletion_cost: int = 0
    #: read by the decision functions, which take a PlannedGroup as the GroupState it models
    #: (ordinal, revision, status, deletion cost; no roles): no copy per group and pass
    roles: ClassVar[tuple[()]] = ()

    @property
    def declared(self) -> bool:
        return self.status != DELETING

    def state(self) -> GroupState:
        """As the decision functions take it (cached: the fixed point reads it on every pass)."""
        cached = self.__dict__.get("_state")
        if cached is None:
            cached = GroupState(self.ordinal, self.revision, self.status, self.deletion_cost)
            object.__setattr__(self, "_state", cached)
        return cached


@dataclass(frozen=True)
class ServingGroupPlan:
    """What one reconcile declares for ServingGroupRollingUpdate."""

    budget: ServingGroupBudget
    update_revision: str
    groups: tuple[PlannedGroup, ...]
    blocker: Blocker | None = None
    complete: bool = False
    error: str | None = None
    remaining: tuple[PredictedStage, ...] = ()
    trace: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())

    @cached_property
    def desired(self) -> dict[int, str]:
        """ordinal -> revision of every group declared this stage (computed once: do not mutate)."""
        return {g.ordinal: g.revision for g in self.groups if g.declared}

    @property
    def deleted(self) -> tuple[int, ...]:
        """Groups no longer declared (being deleted, by this stage or already)."""
        return tuple(g.ordinal for g in self.groups if not g.declared)

    @property
    def changed(self) -> bool:
        return any(g.change for g in self.groups)

    @property
    def live(self) -> int:
        return len(self.groups)

    @property
    def available(self) -> int:
        return sum(1 for g in self.groups if g.declared and g.status == RUNNING)

    def chars(self) -> str:
        return group_chars(self.groups, self.update_revision)


def group_chars(groups: Sequence[PlannedGroup], update_revision: str) -> str:
    """Legend characters (core.stage) of the declared groups in ordinal order."""
    out = []
    for g in sorted(groups, key=lambda g: g.ordinal):
        if not g.declared:
            continue
        upd, ready = g.revision == update_revision, g.status == RUNNING
        out.append(("U" if ready else "u") if upd else ("o" if ready else "x"))
    return "".join(out)


def _names(ms: str, ordinals: Sequence[int]) -> str:
    return "[" + ", ".join(group_name(ms, o) for o in ordinals) + "]"


def fixed_point(
    budget: ServingGroupBudget,
    update_revision: str,
    observed: Sequence[GroupState],
    *,
    current_revision: str | None = None,
    known_revisions: Collection[str] | Mapping[str, object] = (),
    choices: Choices = PULUMI_LWS,
) -> tuple[dict[int, PlannedGroup], str | None, list[str]]:
    """Run sync -> rolling deletion until nothing changes; returns (groups by ordinal, error, trace).

    Each pass is O(n log n): one sync and one rolling deletion over the planned state, and for each
    group the deletion picks, "would the sync recreate it?" answered by :class:`ResyncIndex` in
    O(log n) instead of a sync over every other group (identical answers: tests/modelserving/rollout
    compares this with the per-pick sync on random observations)."""
    state = {
        g.ordinal: g
        if isinstance(g, PlannedGroup) and not g.change and g.observed
        else PlannedGroup(g.ordinal, g.revision, g.status, deletion_cost=g.deletion_cost)
        for g in by_ordinal(observed)
    }
    stored = set(known_revisions) | {update_revision}
    trace: list[str] = []

    def snapshot() -> list[GroupState]:
        # each PlannedGroup stands in for the GroupState (ordinal, revision, status, cost; no roles)
        # it models: duck-typed, no copy per group and pass
        return cast("list[GroupState]", [state[o] for o in sorted(state)])

    def sync(groups: list[GroupState]) -> SyncResult:
        return sync_servinggroup_replicas(
            groups,
            budget,
            update_revision,
            current_revision=current_revision,
            controller_revisions=stored,
            choices=choices,
        )

    for _ in range(MAX_LOOP):
        changed = False
        r = sync(snapshot())
        for c in r.created:
            state[c.ordinal] = PlannedGroup(c.ordinal, c.revision, CREATING, CREATE, observed=False)
            trace.append(f"sync: create {c.ordinal}:{c.revision}")
            changed = True
        for o in r.deleted:
            changed |= _delete(state, o, trace, "sync: delete")
        if r.error:
            trace.append(f"sync: error {r.error}")
            return state, r.error, trace
        d = servinggroup_rolling_deletion(snapshot(), budget, update_revision, choices)
        resync = (
            ResyncIndex(
                {o: g.revision for o, g in state.items()}, budget, update_revision, current_revision, stored, choices
            )
            if d.deleted
            else None
        )
        for o in d.deleted:
            prev = state[o]
            if prev.status == DELETING:
                continue
            assert resync is not None
            revision = resync.recreated_revision(o)  # = sync(state without o) recreates o, on this revision
            if revision is not None:
                state[o] = PlannedGroup(
                    o, revision, CREATING, CREATE if prev.change == CREATE else REPLACE, prev.observed
                )
                resync.set_revision(o, revision)
                trace.append(f"rolling update: replace {o}:{prev.revision} -> {revision}")
            else:
                if prev.change == CREATE:
                    resync.remove(o)  # _delete forgets a group created this stage
                _delete(state, o, trace, "rolling update: delete")
            changed = True
        if not changed:
            return state, None, trace
    raise RuntimeError("ServingGroup fixed point did not converge")  # pragma: no cover


def _delete(state: dict[int, PlannedGroup], o: int, trace: list[str], label: str) -> bool:
    g = state[o]
    if g.status == DELETING:
        return False
    trace.append(f"{label} {o}:{g.revision}")
    if g.change == CREATE:
        del state[o]
    else:
        state[o] = replace(g, status=DELETING, change=DELETE)
    return True


def is_complete(
    groups: Sequence[PlannedGroup], budget: ServingGroupBudget, update_revision: str, mode: str = "ordinal"
) -> bool:
    """Nothing left to do: exactly ``replicas`` groups, all Running, none Deleting, every
    unprotected group on the update revision."""
    if any(not g.declared or g.change for g in groups) or len(groups) != budget.replicas:
        return False
    ordered = sorted(groups, key=lambda g: g.ordinal)
    eligible = split_protected(ordered, [g.ordinal for g in ordered], budget.partition, mode)[1]
    return all(g.status == RUNNING for g in ordered) and all(g.revision == update_revision for g in eligible)


def blocker_for(groups: Sequence[PlannedGroup], budget: ServingGroupBudget, update_revision: str, ms: str) -> Blocker:
    """Why an unchanged, incomplete stage cannot advance."""
    declared = [g for g in groups if g.declared]
    unready = [g.ordinal for g in declared if g.status != RUNNING]
    new_unready = [g.ordinal for g in declared if g.status != RUNNING and g.revision == update_revision]
    if new_unready and len(groups) > budget.replicas:
        # name what waits: a surge group (an ordinal beyond replicas, the extra capacity) or an
        # in-place replacement (an outdated group deleted and recreated at its ordinal)
        surge = [o for o in new_unready if o >= budget.replicas]
        in_place = [o for o in new_unready if o < budget.replicas]
        if not surge:
            return Blocker(
                WAITING,
                f"waiting for {_waiting_words('in-place replacement', ms, in_place)} to become ready",
                tuple(str(o) for o in in_place),
            )
        message = f"{_waiting_words('surge group', ms, surge)} {'is' if len(surge) == 1 else 'are'} not ready (unschedulable?)"
        if in_place:
            message += (
                f"; {_waiting_words('in-place replacement', ms, in_place)} "
                f"{'is' if len(in_place) == 1 else 'are'} not ready"
            )
        return Blocker(
            SURGE_NOT_READY,
            message,
            tuple(str(o) for o in surge + in_place),
            ("check the new pods' events (scheduling, image pull)", "add capacity for one more ServingGroup"),
        )
    if unready:
        return Blocker(
            WAITING, f"waiting for groups {_names(ms, unready)} to become ready", tuple(str(o) for o in unready)
        )
    gone = [g.ordinal for g in groups if not g.declared]
    if gone:
        return Blocker(
            WAITING_DELETION, f"waiting for groups {_names(ms, gone)} to be deleted", tuple(str(o) for o in gone)
        )
    return Blocker(
        NO_BUDGET,
        f"maxUnavailable={budget.max_unavailable} and maxSurge={budget.max_surge} leave no budget "
        "to replace an outdated group",
        (),
    )


def _waiting_words(what: str, ms: str, ordinals: Sequence[int]) -> str:
    """``surge group ms-4`` / ``in-place replacements [ms-1, ms-2]``."""
    if len(ordinals) == 1:
        return f"{what} {group_name(ms, ordinals[0])}"
    return f"{what}s {_names(ms, ordinals)}"


def plan_servinggroup_rollout(
    budget: ServingGroupBudget,
    update_revision: str,
    observed: Sequence[GroupState],
    *,
    current_revision: str | None = None,
    known_revisions: Collection[str] | Mapping[str, object] = (),
    choices: Choices = PULUMI_LWS,
    ms: str = "ms",
    predict: bool = True,
) -> ServingGroupPlan:
    """One stage: the fixed point for ``observed``, its blocker (when it changes nothing and is not
    complete) and the predicted remaining stages (groups becoming ready, deletions finishing)."""
    state, error, trace = fixed_point(
        budget,
        update_revision,
        observed,
        current_revision=current_revision,
        known_revisions=known_revisions,
        choices=choices,
    )
    groups = tuple(state[o] for o in sorted(state))
    complete = error is None and is_complete(groups, budget, update_revision)
    blocker = None
    if error is not None:
        blocker = Blocker(
            REVISION_MISSING,
            error,
            (),
            ("restore the ControllerRevision of the current revision", "or lower the partition"),
        )
    elif not complete and not any(g.change for g in groups):
        blocker = blocker_for(groups, budget, update_revision, ms)
    plan = ServingGroupPlan(budget, update_revision, groups, blocker, complete, error, trace=tuple(trace))
    if predict and not complete and error is None:
        predicted = prediction(
            walk(plan, current_revision=current_revision, known_revisions=known_revisions, choices=choices)
        )
        plan = replace(plan, remaining=predicted.stages, notes=plan.notes + predicted.notes())
    return plan


def settle(groups: Sequence[PlannedGroup]) -> list[GroupState]:
    """The next observation if every declared group becomes ready and every deletion finishes."""
    return [GroupState(g.ordinal, g.revision, RUNNING, g.deletion_cost) for g in groups if g.declared]


def _settled(groups: Sequence[PlannedGroup]) -> list[PlannedGroup]:
    """:func:`settle` as the unchanged, observed PlannedGroups the next fixed point starts from
    (it takes them as they are: one object per group and predicted stage, not three)."""
    return [
        g
        if g.status == RUNNING and not g.change and g.observed
        else PlannedGroup(g.ordinal, g.revision, RUNNING, deletion_cost=g.deletion_cost)
        for g in groups
        if g.declared
    ]  # an unchanged Running group is already its settled self (frozen)


def walk(
    plan: ServingGroupPlan,
    *,
    current_revision: str | None = None,
    known_revisions: Collection[str] | Mapping[str, object] = (),
    choices: Choices = PULUMI_LWS,
) -> Iterator[Step]:
    """Future stages assuming the groups this stage waits for become ready together, in order,
    unbounded (:func:`~pulumi_lws.modelserving.rollout.waves.prediction` bounds and shows them)."""
    obs = _settled(plan.groups)
    while True:
        nxt = plan_servinggroup_rollout(
            plan.budget,
            plan.update_revision,
            cast("list[GroupState]", obs),
            current_revision=current_revision,
            known_revisions=known_revisions,
            choices=choices,
            predict=False,
        )
        stage = PredictedStage(
            len(nxt.desired),
            plan.budget.partition,
            nxt.chars(),
            ids=tuple(str(o) for o in sorted(nxt.desired)),
            complete=nxt.complete,
        )
        if nxt.complete or nxt.error or nxt.blocker is not None:
            yield stage, len(obs), True
            return
        nobs = _settled(nxt.groups)
        if nobs == obs:
            yield stage, len(obs), True
            return
        yield stage, len(obs), False
        obs = nobs


def predict_remaining(
    plan: ServingGroupPlan,
    *,
    current_revision: str | None = None,
    known_revisions: Collection[str] | Mapping[str, object] = (),
    choices: Choices = PULUMI_LWS,
) -> tuple[PredictedStage, ...]:
    """The stages shown after ``plan`` (:func:`walk`, bounded and in waves as
    :func:`~pulumi_lws.modelserving.rollout.waves.prediction` says)."""
    walked = walk(plan, current_revision=current_revision, known_revisions=known_revisions, choices=choices)
    return prediction(walked).stages


def observe_after(
    plan: ServingGroupPlan, ready: Collection[int] = (), gone: Collection[int] | bool = ()
) -> list[GroupState]:
    """Test/simulation helper: the observation after applying ``plan``: declared groups keep their
    modelled status unless in ``ready`` (-> Running); removed groups stay Deleting unless in ``gone``
    (``True`` = all gone)."""
    out = []
    for g in plan.groups:
        if not g.declared:
            if gone is True or (not isinstance(gone, bool) and g.ordinal in gone):
                continue
            out.append(GroupState(g.ordinal, g.revision, DELETING))
        else:
            out.append(GroupState(g.ordinal, g.revision, RUNNING if g.ordinal in ready else g.status))
    return out
