"""The reconcile loop: scenario -> cluster -> (observe, program, apply, act) every interval.

One tick (``reconcile.tick`` seconds): advance the clock (kubelet transitions fire), apply the
scenario's due spec updates and faults, run one reconcile if the interval is due, then record
what the cluster shows as a :class:`TraceRow` (rows identical to their predecessor are dropped).

Invariants checked on every row (budgets from the LWS spec the last reconcile used):
- live groups <= replicas + maxSurge;
- available groups >= replicas - maxUnavailable, once the set has been fully available at the
  current replica count (a fault or a change of ``spec.replicas`` re-arms this check).
The run fails (exit 1) on a violation, when it ends blocked, or (``requireConverged``) when it
has not converged by ``maxTime``.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from pulumi_lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.revision import revision_key
from pulumi_lws.rollout.stage import Stage
from pulumi_lws.sim.cluster import SimCluster
from pulumi_lws.sim.engines import Engine, EngineStep, make_engine
from pulumi_lws.sim.groups import GroupsView, read_groups
from pulumi_lws.sim.scenario import Scenario
from pulumi_lws.trace import Trace, TraceRow, rows_changed

WARMUP_ROUNDS = 50


@dataclass
class RunResult:
    scenario: Scenario
    trace: Trace
    stages: list[Stage]
    cluster: SimCluster
    end_time: float
    reason: str | None = None  # why the run failed (None = success)
    raw_rows: list[TraceRow] = field(default_factory=list, repr=False)

    @property
    def exit_code(self) -> int:
        return 0 if self.reason is None else 1


class _Budget:
    """Tracks the spec in effect and whether the availability floor is armed."""

    def __init__(self) -> None:
        self.lws: LeaderWorkerSet | None = None
        self.armed = False

    def use(self, lws: LeaderWorkerSet) -> None:
        if self.lws is None or self.lws.replicas != lws.replicas:
            self.armed = False
        self.lws = lws

    def check(self, row: TraceRow) -> list[str]:
        if self.lws is None:
            return []
        r, ms, mu = self.lws.replicas, self.lws.max_surge(), self.lws.max_unavailable()
        out = []
        if row.live > r + ms:
            out.append(f"t={row.time:g}: {row.live} live groups > replicas {r} + maxSurge {ms}")
        if self.armed and row.available < r - mu:
            out.append(f"t={row.time:g}: {row.available} available groups < replicas {r} - maxUnavailable {mu}")
        if row.available >= r:
            self.armed = True
        return out


class Runner:
    def __init__(self, scenario: Scenario, engine: str | Engine | None = None) -> None:
        self.sc = scenario
        name = engine if isinstance(engine, str) or engine is None else None
        self.engine: Engine = engine if name is None and engine is not None else make_engine(  # type: ignore[assignment]
            name or scenario.default_engine, namespace=scenario.namespace, program=scenario.program,
            update_order=scenario.update_order, gang_provider=scenario.gang_provider)
        self.cluster = SimCluster(seed=scenario.seed, nodes=scenario.nodes, kubelet=scenario.kubelet,
                                  statefulset_history=scenario.statefulset_history)
        self.desired: dict[str, Any] | None = copy.deepcopy(scenario.manifest)
        self.budget = _Budget()
        self.stages: list[Stage] = []
        self.rows: list[TraceRow] = []
        self.violations: list[str] = []
        self._updates = sorted(scenario.updates, key=lambda u: u.at)
        self._faults = sorted(scenario.faults, key=lambda f: f.at)

    # ---- helpers -------------------------------------------------------------------------
    def _lws(self) -> LeaderWorkerSet | None:
        if self.desired is None:
            return None
        return LeaderWorkerSet.from_manifest(self.desired, namespace=self.sc.namespace)

    def _reconcile(self) -> EngineStep:
        step = self.engine.step(self.cluster, self.desired, keep=self.sc.apply_keep)
        self.stages += step.stages
        lws = self._lws()
        if lws is not None:
            self.budget.use(lws)
        return step

    def _view(self) -> GroupsView | None:
        lws = self._lws()
        if lws is None:
            return None
        snap = self.cluster.observe(lws.namespace, lws.name)
        return read_groups(snap, lws.name, lws.replicas, lws.size, revision_key(lws), lws.spec.group_identity == "Hash")

    def _row(self, note: str = "", step: EngineStep | None = None) -> TraceRow | None:
        view = self._view()
        if view is None:
            return None
        stage = step.stage if step else (self.stages[-1] if self.stages else None)  # latest verdict
        actions = tuple(step.executed) if step else ()
        row = TraceRow(time=self.cluster.clock.now, replicas=view.replicas, partition=view.partition, groups=view.cells,
                       live=view.live, available=view.available, revision=revision_key(self._lws()),  # type: ignore[arg-type]
                       actions=actions, blocker=str(stage.blocker) if stage and stage.blocker else None, note=note,
                       case=stage.case if stage else None)
        self.rows.append(row)
        self.violations += self.budget.check(row)
        return row

    def _converged(self, row: TraceRow | None, t: float | None) -> bool:
        """Stage complete, no blocker, exactly ``replicas`` groups all updated+ready, nothing scheduled."""
        lws = self._lws()
        if row is None or lws is None:
            return False
        if t is not None and (any(u.at > t for u in self._updates) or any(f.at > t for f in self._faults)):
            return False
        last = self.stages[-1] if self.stages else None
        if last is not None and (not last.complete or last.blocker is not None):
            return False
        wanted = [g for g in row.groups if g.state != "-"]
        return len(wanted) == lws.replicas and all(g.state == "U" and not g.surge for g in wanted) and row.live == lws.replicas

    # ---- scenario events -----------------------------------------------------------------
    def _due_updates(self, t: float) -> list[str]:
        notes = []
        while self._updates and self._updates[0].at <= t:
            upd = self._updates.pop(0)
            self.desired = upd.apply_to(self.desired or {})
            notes.append("spec updated" if upd.manifest is not None else "spec patched")
        return notes

    def _due_faults(self, t: float) -> list[str]:
        notes = []
        while self._faults and self._faults[0].at <= t:
            f = self._faults.pop(0)
            try:
                if f.type == "node-loss":
                    self.cluster.lose_node(f.target)
                elif f.type == "pod-crash":
                    self.cluster.crash_pod(self.sc.namespace, f.target)
                else:
                    self.cluster.restart_container(self.sc.namespace, f.target)
                notes.append(f"fault: {f.type} {f.target}")
            except Exception as exc:  # a fault on a missing target is reported, not fatal
                notes.append(f"fault {f.type} {f.target} skipped: {exc}")
            self.budget.armed = False
        return notes

    # ---- the loop ------------------------------------------------------------------------
    def warm_up(self) -> None:
        """``start: converged``: roll the initial spec out instantly at t=0 (not traced)."""
        self.cluster.kubelet.config.instant = True
        try:
            for _ in range(WARMUP_ROUNDS):
                self._reconcile()
                row = self._row()
                if self._converged(row, None):
                    break
            else:
                raise RuntimeError("warm-up did not converge: the initial spec never became fully ready")
        finally:
            self.cluster.kubelet.config.instant = False
            self.rows.clear()
            self.violations.clear()
            self.stages.clear()

    def run(self) -> RunResult:
        for obj in self.sc.objects:
            self.cluster.create(obj)
        if self.sc.start == "converged":
            self.warm_up()
        ticks_per_reconcile = max(1, round(self.sc.interval / self.sc.tick))
        k, converged, t = 0, False, 0.0
        while True:
            t = k * self.sc.tick
            self.cluster.step(t)
            notes = self._due_updates(t) + self._due_faults(t)
            if k == 0:
                self._row("; ".join(notes))
                notes = []
            step = self._reconcile() if k % ticks_per_reconcile == 0 else None
            row = self._row("; ".join(notes), step)
            converged = self._converged(row, t) if step is not None else converged and not notes
            if (converged and self.sc.when_converged) or t >= self.sc.max_time:
                break
            k += 1
        return self._result(t, converged)

    def _result(self, t: float, converged: bool) -> RunResult:
        trace = Trace(rows=rows_changed(coalesce(self.rows)), violations=list(self.violations), converged=converged)
        last = self.stages[-1] if self.stages else None
        reason = None
        if self.violations:
            reason = f"invariant violated: {self.violations[0]}"
        elif not converged and last is not None and last.blocker is not None:
            trace.blocked = f"{last.blocker.code}: {last.blocker.message}"
            reason = f"rollout ended blocked: {trace.blocked}"
        elif not converged and self.sc.require_converged:
            reason = f"did not converge by t={t:g}s"
        return RunResult(self.sc, trace, self.stages, self.cluster, t, reason, self.rows)


def _state(row: TraceRow) -> tuple:
    return (row.replicas, row.partition, row.groups, row.live, row.available)


def coalesce(rows: list[TraceRow]) -> list[TraceRow]:
    """Merge runs of rows with the same observed state (no actions): one row per state change,
    keeping the first row's time and note and the run's latest blocker."""
    out: list[TraceRow] = []
    for row in rows:
        if out and not row.actions and _state(out[-1]) == _state(row):
            prev = out[-1]
            out[-1] = TraceRow(prev.time, prev.replicas, prev.partition, prev.groups, prev.live, prev.available,
                               prev.revision, prev.actions, row.blocker, prev.note or row.note, prev.case or row.case)
            continue
        out.append(row)
    return out


def simulate(scenario: Scenario, engine: str | None = None) -> RunResult:
    """Run ``scenario`` to completion (the runner API used by the CLI, tests and the bench)."""
    return Runner(scenario, engine).run()
