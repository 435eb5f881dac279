"""What the SVG timeline needs beyond the trace rows: when a reconcile changed something, and the
budgets (availability floor and ceiling) in effect over time.

:class:`TimelineRunner` is the :class:`~pulumi_lws.sim.driver.runner.Runner` that records them while it
runs; the run itself (rows, stages, verdict) is exactly the plain runner's. Invariants:

* warm-up reconciles (``start: converged``, untraced) are never recorded; a warm-up that never
  converges raises :class:`WarmUpBlocked` naming the last warm-up stage's blocker (the set
  never reached the state the scenario starts from: a blocked rollout, not a crash);
* a reconcile "changed something" when its apply created, updated, replaced or deleted an
  object, or it executed an action other than webhook-equivalent labels (those are bookkeeping,
  as in the trace: :func:`~pulumi_lws.sim.driver.runner.split_executed`);
* budgets are recorded after every traced reconcile, from the spec that reconcile used, and after
  every traced row, and kept as segments: a new :class:`Budget` starts only when replicas,
  maxUnavailable, maxSurge or the held ceiling change. The ceiling is the one the runner checks
  at that moment: replicas + maxSurge, except while a scale-down drains, when it is the live count
  when the scale-down began, lowered as groups go (``held``; the runner's ``_Budget``);
* ``armed`` records when the runner's availability check is armed (the set fully available at the
  current replica count) and disarmed (replicas changed): the floor holds only while armed, so a
  plot draws it as checked only there;
* ``deadline_passed`` is the first traced time a stage reported its progress deadline exceeded.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field

from pulumi_lws.core.contract.stage import Blocker, Stage
from pulumi_lws.core.contract.trace import GroupsView, TraceRow
from pulumi_lws.core.contract.workload import Budgets as WorkloadBudgets
from pulumi_lws.sim.driver.engines import EngineStep
from pulumi_lws.sim.driver.rows import split_executed
from pulumi_lws.sim.driver.runner import Runner


@dataclass(frozen=True)
class Budget:
    """The budgets from ``start`` on (until the next segment or the end of the run)."""

    start: float
    replicas: int
    max_unavailable: int
    max_surge: int
    #: while a scale-down drains: the live groups when it began, lowered as they go (else None)
    held: int | None = None

    @property
    def floor(self) -> int:
        """Fewest available groups the rollout may leave: replicas - maxUnavailable (at least 0)."""
        return max(0, self.replicas - self.max_unavailable)

    @property
    def ceiling(self) -> int:
        """Most live groups the rollout may run: replicas + maxSurge, or the held ceiling of a
        draining scale-down when that is higher."""
        rollout = self.replicas + self.max_surge
        return rollout if self.held is None else max(rollout, self.held)

    def key(self) -> tuple[int, int, int, int | None]:
        return (self.replicas, self.max_unavailable, self.max_surge, self.held)


@dataclass
class Timeline:
    """``changes``: times of the traced reconciles that changed something; ``budgets``: segments."""

    changes: list[float] = field(default_factory=list)
    budgets: list[Budget] = field(default_factory=list)
    #: ``(time, armed)`` at each change of the availability check's state (module doc)
    armed: list[tuple[float, bool]] = field(default_factory=list)
    deadline_passed: float | None = None
    #: ``(time, {lane: budgets})`` whenever a traced reconcile's per-role budgets changed (a
    #: multi-role API whose lanes count the role's groups; empty otherwise): the role panels' pieces
    lane_budgets: list[tuple[float, dict[str, WorkloadBudgets]]] = field(default_factory=list)

    def record_lanes(self, now: float, budgets: dict[str, WorkloadBudgets]) -> None:
        if not self.lane_budgets or self.lane_budgets[-1][1] != budgets:
            if self.lane_budgets and self.lane_budgets[-1][0] == now:
                self.lane_budgets[-1] = (now, budgets)
            else:
                self.lane_budgets.append((now, budgets))

    def record_armed(self, now: float, armed: bool) -> None:
        if (self.armed[-1][1] if self.armed else False) != armed:
            self.armed.append((now, armed))

    def armed_intervals(self, end: float) -> list[tuple[float, float]]:
        """``(start, end)`` of every interval the availability floor was checked."""
        out: list[tuple[float, float]] = []
        for i, (t, on) in enumerate(self.armed):
            stop = self.armed[i + 1][0] if i + 1 < len(self.armed) else end
            if on and stop > t:  # armed and disarmed at one instant (the t=0 row before an update): never checked
                out.append((t, stop))
        return out

    def record(self, now: float, step: EngineStep, budget: Budget | None) -> None:
        applied, (actions, _) = step.applied, split_executed(step)
        if actions or applied.created or applied.updated or applied.replaced or applied.deleted:
            self.changes.append(now)
        self.record_budget(budget)

    def record_budget(self, budget: Budget | None) -> None:
        """A new segment when ``budget`` differs from the one in force (at the same instant it
        replaces it: only the last one recorded at a time was in force after that time)."""
        last = self.budgets[-1] if self.budgets else None
        if budget is None or (last is not None and last.key() == budget.key()):
            return
        if last is not None and last.start == budget.start:
            self.budgets[-1] = budget
            if len(self.budgets) > 1 and self.budgets[-2].key() == budget.key():
                self.budgets.pop()
        else:
            self.budgets.append(budget)


class WarmUpBlocked(RuntimeError):
    """The initial spec never converged during warm-up; ``blocker`` is the last stage's (or None)."""

    def __init__(self, message: str, blocker: Blocker | None) -> None:
        super().__init__(message if blocker is None else f"{message}: {blocker.code}: {blocker.message}")
        self.blocker = blocker


class TimelineRunner(Runner):
    """A Runner that fills :attr:`timeline` as it runs (module doc)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.timeline = Timeline()
        self._tracing = True
        self._last: Stage | None = None

    def warm_up(self) -> None:
        """The untraced warm-up: its reconciles are not recorded."""
        self._tracing = False
        try:
            super().warm_up()
        except RuntimeError as exc:
            raise WarmUpBlocked(str(exc), self._last.blocker if self._last else None) from None
        finally:
            self._tracing = True

    def _reconcile(self) -> EngineStep:
        step = super()._reconcile()
        self._last = step.stage or self._last
        if self._tracing:
            now = self.cluster.clock.now
            self.timeline.record(now, step, self._budget_now(now))
            self.timeline.record_armed(now, self.budget.armed)
            self._record_lanes(now)
            control = step.stage.control if step.stage is not None else None
            if control is not None and control.exceeded and self.timeline.deadline_passed is None:
                self.timeline.deadline_passed = now
        return step

    def _record_lanes(self, now: float) -> None:
        """The per-role budgets of the spec this reconcile used, when its lanes count role groups."""
        from pulumi_lws.core.contract.stagetable import Lanes
        from pulumi_lws.sim.driver.lane_bounds import lane_budgets

        spec = self._parsed()
        workload = self.spec.workload
        if spec is not None and workload.stage_lanes(spec) is Lanes.ROLES:
            self.timeline.record_lanes(now, lane_budgets(workload, spec))

    def _budget_now(self, now: float) -> Budget | None:
        """The budgets the invariants check now (the held ceiling of a draining scale-down too)."""
        b = self.budget.budgets
        return (
            None if b is None else Budget(now, b.replicas, b.max_unavailable, b.max_surge, self.budget.scale_down_live)
        )

    def _row(self, note: str = "", step: EngineStep | None = None, view: GroupsView | None = None) -> TraceRow | None:
        row = super()._row(note, step, view)
        if self._tracing and row is not None:
            self.timeline.record_armed(row.time, self.budget.armed)
            self.timeline.record_budget(self._budget_now(row.time))  # a held ceiling lowered as groups went
        return row


def stage_numbers(times: Sequence[float], table: Sequence[TraceRow]) -> list[int]:
    """The stage-table number (1-based) in effect at each of ``times``: the last row at or before it."""
    starts = [r.time for r in table]
    return [max(1, bisect_right(starts, t)) for t in times]
