"""What one simulator run hands back: the scenario, its trace and stages, the final cluster, the verdict.

Apart from :mod:`~pulumi_lws.sim.driver.runner` because its readers (the CLI, tests, the bench)
only read a finished run: nothing here runs anything. ``reason`` is None exactly when the run
succeeded (:attr:`RunResult.exit_code` 0); ``raw_rows`` are every recorded row before coalescing
and narration, ``demand`` one entry per raw row (the warm-up's dropped).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pulumi_lws.core.contract.stage import Stage
from pulumi_lws.core.contract.trace import Trace, TraceRow
from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.sim.driver.scenario import Scenario


@dataclass
class RunResult:
    scenario: Scenario
    trace: Trace
    stages: list[Stage]
    cluster: SimCluster
    end_time: float
    reason: str | None = None  # why the run failed (None = success)
    raw_rows: list[TraceRow] = field(default_factory=list, repr=False)
    engine: str = ""
    #: (time, what the workload's non-terminal pods request then) at every raw row (core.capacity)
    demand: list[tuple[float, dict]] = field(default_factory=list, repr=False)

    def stage_demand(self) -> list[tuple[str, dict]]:
        """Each stage row's peak demand: per resource, the most its pods requested at once between
        that stage's time and the next stage's (``(label, Demand)``, in stage order)."""
        from pulumi_lws.core.features.capacity import peak

        rows = self.trace.rows
        out = []
        for i, row in enumerate(rows):
            end = rows[i + 1].time if i + 1 < len(rows) else float("inf")
            window = [d for t, d in self.demand if row.time <= t < end]
            # a stage that ends at the instant it starts (the state before a reconcile at t=0) is
            # the first observation at its time
            out.append((f"Stage {i + 1}", peak(window or [d for t, d in self.demand if t == row.time][:1])))
        return out

    @property
    def final_blocker(self):
        """The latest stage's Blocker (code, message, remedies) when the run ended blocked."""
        return self.stages[-1].blocker if self.trace.blocked and self.stages else None

    @property
    def exit_code(self) -> int:
        return 0 if self.reason is None else 1
