"""The simulator's budget invariants, checked on every trace row (:mod:`pulumi_lws.sim.driver.runner`).

Whole workload (:class:`WorkloadBudget`, every API): ``live <= replicas + maxSurge`` and, once
armed, ``available >= replicas - maxUnavailable``, in the API's own unit (groups, ServingGroups).

Per role (:class:`RoleBudgets`, multi-role APIs): the same two bounds for each role the API
budgets (``Workload.budgets(spec)`` keys other than ``""``), read from the row's lanes — an
independent reading of the cluster (``Workload.trace_view``):

* DisaggregatedSet (lanes of unit ``groups``, ``<slice>/<role>``): a role's live and available
  groups over every slice, against its budget (which already sums the slices);
* ModelServing RoleRollingUpdate (lanes of unit ``replicas``): a role's live (not deleting) and
  ready replicas over every ServingGroup, against ServingGroups x the role's per-group budget
  (each group's bounds hold, so their sums do).

A row without lanes (LeaderWorkerSet, ModelServing ServingGroupRollingUpdate) has no role bound to
check. The floors re-arm after a replica change, a fault or a pod-deleting event, as the
workload's does.
"""

from __future__ import annotations

from collections.abc import Mapping

from pulumi_lws.core.contract.trace import TraceRow
from pulumi_lws.core.contract.workload import Budgets


class WorkloadBudget:
    """Tracks the budgets in effect and whether the availability floor is armed.

    The ceiling ``live <= replicas + maxSurge`` is a rollout's. A scale-down is not a rollout: the
    groups above the new replica count go away over several reconciles, so while ``live`` exceeds
    the new ceiling the bound is the live count when the scale-down began, lowered as groups go
    (a scale-down never adds a group); its own invariant is the floor of the new replicas,
    ``available >= replicas - maxUnavailable``, armed (as after any replica change) from the first
    row where at least the new replica count is available.
    """

    def __init__(self) -> None:
        self.budgets: Budgets | None = None
        self.armed = False
        self.scale_down_live: int | None = None  # the held ceiling while a scale-down drains
        self._last_live = 0

    def use(self, budgets: Budgets) -> None:
        if self.budgets is not None and budgets.replicas < self.budgets.replicas:
            held = max(self._last_live, self.scale_down_live or 0)
            self.scale_down_live = held if held > budgets.replicas + budgets.max_surge else None
            self.armed = False
        elif self.budgets is None or self.budgets.replicas != budgets.replicas:
            self.armed = False
            self.scale_down_live = None
        self.budgets = budgets

    def ceiling(self) -> int:
        assert self.budgets is not None
        rollout = self.budgets.replicas + self.budgets.max_surge
        return max(rollout, self.scale_down_live) if self.scale_down_live is not None else rollout

    def check(self, row: TraceRow) -> list[str]:
        if self.budgets is None:
            return []
        r, ms, mu = self.budgets.replicas, self.budgets.max_surge, self.budgets.max_unavailable
        out = []
        if row.live > self.ceiling():
            if self.scale_down_live is not None:
                out.append(
                    f"t={row.time:g}: {row.live} live groups > {self.scale_down_live} live when the scale-down "
                    f"to {r} began (a scale-down never adds groups)"
                )
            else:
                out.append(f"t={row.time:g}: {row.live} live groups > replicas {r} + maxSurge {ms}")
        if self.armed and row.available < r - mu:
            what = "the scale-down's floor: " if self.scale_down_live is not None else ""
            out.append(f"t={row.time:g}: {what}{row.available} available groups < replicas {r} - maxUnavailable {mu}")
        if row.available >= r:
            self.armed = True
        if self.scale_down_live is not None:  # lowered as the extra groups go
            self.scale_down_live = row.live if row.live > r + ms else None
        self._last_live = row.live
        return out


class RoleBudgets:
    """One :class:`WorkloadBudget` per budgeted role, fed from the rows' lanes (module docstring)."""

    def __init__(self) -> None:
        self.roles: dict[str, WorkloadBudget] = {}
        self._budgets: Mapping[str, Budgets] = {}

    def use(self, budgets: Mapping[str, Budgets]) -> None:
        self._budgets = budgets
        for role in list(self.roles):
            if role not in budgets:
                del self.roles[role]

    def disarm(self) -> None:
        for tracker in self.roles.values():
            tracker.armed = False

    def check(self, row: TraceRow) -> list[str]:
        if not row.lanes:
            return []
        per_group = row.lanes[0].unit == "replicas"
        groups = self._budgets[""].replicas if per_group and "" in self._budgets else 1
        live: dict[str, int] = {}
        available: dict[str, int] = {}
        for lane in row.lanes:
            role = lane.name.rsplit("/", 1)[-1]
            live[role] = live.get(role, 0) + lane.old + lane.new
            available[role] = available.get(role, 0) + lane.old_ready + lane.new_ready
        out = []
        for role, b in self._budgets.items():
            if not role or role not in live:
                continue
            tracker = self.roles.setdefault(role, WorkloadBudget())
            tracker.use(Budgets(b.replicas * groups, b.max_surge * groups, b.max_unavailable * groups))
            unit = "role replicas" if per_group else "groups"
            view = TraceRow(
                time=row.time,
                replicas=row.replicas,
                partition=row.partition,
                groups=(),
                live=live[role],
                available=available[role],
            )
            out += [
                line.replace(": ", f": role {role}: ", 1).replace(" groups ", f" {unit} ")
                for line in tracker.check(view)
            ]
        return out


def held_at_role_partitions(row: TraceRow, budgets: Mapping[str, Budgets]) -> dict[str, int] | None:
    """The role partitions ``{role: P}`` a ModelServing RoleRollingUpdate stopped at as asked, read
    from the row's lanes (unit ``replicas``), or None: every ServingGroup live, and in each of them
    every budgeted role at exactly its replicas (no surge left) with the replicas at or above its
    partition updated and ready and those below ready on their revision — summed over the groups,
    ``new == new ready == groups x (replicas - P)`` and ``old == old ready == groups x P`` — with
    at least one protected replica still on its old revision (else the rollout simply converged)."""
    whole = budgets.get("")
    if whole is None or not row.lanes or row.lanes[0].unit != "replicas" or row.live != whole.replicas:
        return None
    roles = {r: b for r, b in budgets.items() if r}
    if not any(b.partition > 0 for b in roles.values()):
        return None
    lanes = {lane.name: lane for lane in row.lanes}
    groups = whole.replicas
    for role, b in roles.items():
        lane = lanes.get(role)
        if lane is None:
            return None
        kept, rolled = groups * b.partition, groups * (b.replicas - b.partition)
        if (lane.old, lane.old_ready, lane.new, lane.new_ready) != (kept, kept, rolled, rolled):
            return None
    if not any(lanes[r].old for r, b in roles.items() if b.partition > 0):
        return None
    return {r: b.partition for r, b in roles.items() if b.partition > 0}
