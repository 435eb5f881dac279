"""The reconcile loop: scenario -> cluster -> (observe, program, apply, act) every interval.

A program scenario runs in a scratch copy of the program's directory (:mod:`workspace`): spec
updates are edits of its files (``lws.yaml``) made before the next reconcile, and the budgets
below are read from the same file (:mod:`desired`). The copy is removed when the run ends.

One tick (``reconcile.tick`` seconds): advance the clock (kubelet transitions fire), apply the
scenario's due spec updates and faults, run one reconcile if the interval is due, then record
what the cluster shows as a :class:`TraceRow` (rows identical to their predecessor are dropped).
The first row is recorded at t=0 before any update: with ``start: converged`` it is the state
"before the rolling update", its group states relative to the revision that was current then.
Every row then gets a human note derived from the change since the previous row (:mod:`narrate`).

Invariants checked on every row (budgets from the spec the last reconcile used, through the
workload's ``budgets``; per role for multi-role APIs as each API's trace view reports them):
- live groups <= replicas + maxSurge;
- available groups >= replicas - maxUnavailable, once the set has been fully available at the
  current replica count (a fault or a change of ``spec.replicas`` re-arms this check).
The run fails (exit 1) on a violation, when it ends blocked, or (``requireConverged``) when it
has not converged by ``maxTime``.

The scenario's due updates, faults and events are applied by :class:`~.scenario_events.ScenarioEvents`
(a base of :class:`Runner`); a reconcile's row actions and the merging of equal rows are
:mod:`.rows`'s; what a run hands back is a :class:`~.result.RunResult`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from pulumi_lws.core.contract.stage import Stage
from pulumi_lws.core.contract.trace import GroupsView, Trace, TraceRow, rows_changed
from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.sim.driver.budgets import RoleBudgets, held_at_role_partitions
from pulumi_lws.sim.driver.budgets import WorkloadBudget as _Budget  # the name tests import
from pulumi_lws.sim.driver.collector import FrozenBetweenReconciles
from pulumi_lws.sim.driver.desired import DesiredSpec
from pulumi_lws.sim.driver.engines import Engine, EngineStep, make_engine
from pulumi_lws.sim.driver.narrate import narrate
from pulumi_lws.sim.driver.pod_demand import PodDemand
from pulumi_lws.sim.driver.result import RunResult
from pulumi_lws.sim.driver.rows import coalesce, split_executed
from pulumi_lws.sim.driver.scenario import WARMUP_ROUNDS, Scenario
from pulumi_lws.sim.driver.scenario_events import ScenarioEvents
from pulumi_lws.sim.driver.workspace import Workspace
from pulumi_lws.workloads import simulator_group_labels

#: called after every tick's row with the cluster and the time (tests measure e.g. GPU demand)
Probe = Callable[[SimCluster, float], None]


class Runner(ScenarioEvents):
    """One run of a scenario. A program scenario gets a workspace (removed by ``run``/``close``)."""

    def __init__(
        self,
        scenario: Scenario,
        engine: str | Engine | None = None,
        probe: Probe | None = None,
        *,
        synthesise: bool = True,
    ) -> None:
        #: False: the warm-up is always stepped (the reference the seeded one is tested against)
        self.synthesise = synthesise
        self._collector = FrozenBetweenReconciles()  # run() starts it: sim/driver/collector.py
        self.sc = scenario
        self.workspace = Workspace.for_program(scenario.program) if scenario.program is not None else None
        try:
            self.spec = DesiredSpec(scenario, self.workspace)
            self.engine = self._engine(engine)
        except Exception:
            self.close()
            raise
        self.probe = probe
        if not scenario.kubelet.group_labels:  # the cluster knows no API: the registered ones declare their labels
            scenario.kubelet.group_labels = simulator_group_labels()
        self.cluster = SimCluster(
            seed=scenario.seed,
            nodes=scenario.nodes,
            kubelet=scenario.kubelet,
            statefulset_history=scenario.statefulset_history,
        )
        self.budget = _Budget()
        self.role_budgets = RoleBudgets()  # the same invariants per role (multi-role APIs)
        self._seen: dict[str, int] = {}
        self.stages: list[Stage] = []
        self.rows: list[TraceRow] = []
        self.demand: list[tuple[float, dict]] = []
        self._pod_demand = PodDemand()  # a pod spec's requests, computed once while it is unchanged
        self._warming = False  # inside warm_up: rows only decide convergence
        self.violations: list[str] = []
        self._updates = sorted(scenario.updates, key=lambda u: u.at)
        self._faults = sorted(scenario.faults, key=lambda f: f.at)
        self._events = sorted(scenario.events, key=lambda e: e.at)

    def _engine(self, engine: str | Engine | None) -> Engine:
        if engine is not None and not isinstance(engine, str):
            return engine
        sc = self.sc
        return make_engine(
            engine or sc.default_engine,
            namespace=sc.namespace,
            program=self.workspace.program if self.workspace else None,
            update_order=sc.update_order,
            gang_provider=sc.gang_provider,
            stack_id=str(sc.program) if sc.program else None,
            check_capacity=sc.check_capacity,
        )

    def close(self) -> None:
        """Remove the workspace and give the collector back what was frozen (idempotent)."""
        self._collector.close()
        if self.workspace is not None:
            self.workspace.close()

    # ---- helpers -------------------------------------------------------------------------
    @property
    def desired(self) -> dict[str, Any] | None:
        """The desired LWS manifest (the workspace's LWS file in a program scenario)."""
        return self.spec.manifest

    def _parsed(self) -> Any:
        return self.spec.parsed()

    def _reconcile(self) -> EngineStep:
        step = self.engine.step(self.cluster, self.desired, keep=self.sc.apply_keep)
        self.stages += step.stages
        # an operation the provider would fail or silently lose (an apply on a terminating
        # object: sim/cluster/apply.py) is a defect of the plan, never a tolerated outcome
        self.violations += [f"t={self.cluster.clock.now:g} apply failed: {e}" for e in step.applied.errors]
        self._use_budgets()
        self._collector.freeze(collect=getattr(self.engine, "makes_garbage_cycles", True))
        return step

    def _use_budgets(self) -> None:
        """The budgets of the spec the reconcile used, for the next rows' invariants."""
        spec = self._parsed()
        if spec is not None:
            budgets = self.spec.workload.budgets(spec)
            self.budget.use(budgets[""])  # the whole-workload budget
            self.role_budgets.use(budgets)  # and each role's

    def _view(self) -> GroupsView | None:
        """The row's view of the cluster, from its own observation — deliberately not the engine
        cycle's. A row records what the cluster shows *after* the tick's reconcile: the apply and
        the actions have run and the simulated controllers have settled (created, gated, deleted
        pods), which is the state the seeds' stage tables draw; the cycle's snapshot is the state
        *before* them (reusing it changes 13 of the 14 example traces). Ticks without a reconcile
        have no cycle at all. One observation per row, shared with the row's demand."""
        spec = self._parsed()
        if spec is None:
            return None
        workload = self.spec.workload
        snap = self.cluster.observe(workload.scope(spec, nodes=False))
        self._last_snapshot = snap  # the row's demand reads the same observation
        return self._stabilised(workload.trace_view(spec, snap))

    def _stabilised(self, view: GroupsView) -> GroupsView:
        return replace(view, cells=self._stable(view.cells))

    def _demand(self) -> dict:
        """What the workload's pods request now: every pod of the row's observation (its scope)
        not Succeeded/Failed (``manifest_demand`` of them: :class:`PodDemand`)."""
        snap = getattr(self, "_last_snapshot", None)
        if snap is None:
            return {}
        pods = [
            o
            for o in snap
            if o.get("kind") == "Pod" and (o.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
        ]
        return self._pod_demand.of(pods)

    def _stable(self, cells: tuple) -> tuple:
        """Hash groups in first-seen order for the whole run (a group keeps its place when its
        leader is gone and only workers remain), so equal states compare equal; ordinals as read."""
        for c in cells:
            self._seen.setdefault(c.id, len(self._seen))
        return tuple(sorted(cells, key=lambda c: (0, int(c.id), 0) if c.id.isdigit() else (1, 0, self._seen[c.id])))

    def _row(self, note: str = "", step: EngineStep | None = None, view: GroupsView | None = None) -> TraceRow | None:
        """The row of the cluster now (``view``: of a view read elsewhere, the seeded warm-up's)."""
        view = self._view() if view is None else self._stabilised(view)
        if view is None:
            return None
        stage = step.stage if step else (self.stages[-1] if self.stages else None)  # latest verdict
        actions, labelled = split_executed(step)
        blocker = stage.blocker if stage else None
        row = TraceRow(
            time=self.cluster.clock.now,
            replicas=view.replicas,
            partition=view.partition,
            groups=view.cells,
            live=view.live,
            available=view.available,
            revision=self.spec.workload.target_revision(self._parsed()),
            actions=actions,
            blocker=str(blocker) if blocker else None,
            note=note,
            case=stage.case if stage else None,
            blocker_code=blocker.code if blocker else None,
            labelled=labelled,
            lanes=view.lanes,
        )
        self.rows.append(row)
        if not self._warming:  # the warm-up's rows and demand are dropped: none is computed for them
            self.demand.append((row.time, self._demand()))
        self.violations += self.budget.check(row)  # also during the warm-up: it arms the floor
        self.violations += self.role_budgets.check(row)
        return row

    def _converged(self, row: TraceRow | None, t: float | None) -> bool:
        """Stage complete, no blocker, exactly ``replicas`` groups all updated+ready, nothing scheduled."""
        spec = self._parsed()
        if row is None or spec is None:
            return False
        if t is not None and (
            any(u.at > t for u in self._updates)
            or any(f.at > t for f in self._faults)
            or any(e.at > t for e in self._events)
        ):
            return False
        last = self.stages[-1] if self.stages else None
        if last is not None and (not last.complete or last.blocker is not None):
            return False
        wanted = [g for g in row.groups if g.state != "-"]
        replicas = self.spec.workload.budgets(spec)[""].replicas
        return len(wanted) == replicas and all(g.state == "U" and not g.surge for g in wanted) and row.live == replicas

    def _held_at_partition(self, row: TraceRow | None, t: float | None) -> int | dict[str, int] | None:
        """The spec's partition N when the rollout stopped there as asked: nothing scheduled, no
        blocker, exactly ``replicas`` groups, every group at ordinal >= N updated and ready (no
        surge left) and the groups below N ready, at least one of them on its old revision. Or
        the role partitions ``{role: P}`` a RoleRollingUpdate stopped at
        (:func:`~pulumi_lws.sim.driver.budgets.held_at_role_partitions`)."""
        spec = self._parsed()
        if row is None or spec is None:
            return None
        all_budgets = self.spec.workload.budgets(spec)
        if any(b.partition > 0 for r, b in all_budgets.items() if r):
            if t is not None and self._scheduled_after(t):
                return None
            last = self.stages[-1] if self.stages else None
            return held_at_role_partitions(row, all_budgets) if last is not None and last.blocker is None else None
        budgets = all_budgets[""]
        if budgets.partition <= 0 or (t is not None and self._scheduled_after(t)):
            return None
        last = self.stages[-1] if self.stages else None
        if last is None or last.blocker is not None:
            return None
        wanted = [g for g in row.groups if g.state != "-"]
        if len(wanted) != budgets.replicas or row.live != budgets.replicas or not all(g.id.isdigit() for g in wanted):
            return None
        above = [g for g in wanted if int(g.id) >= budgets.partition]
        below = [g for g in wanted if int(g.id) < budgets.partition]
        if (
            all(g.state == "U" and not g.surge for g in above)
            and all(g.state in "Uo" for g in below)
            and any(g.state == "o" for g in below)
        ):
            return budgets.partition
        return None

    def _scheduled_after(self, t: float) -> bool:
        return (
            any(u.at > t for u in self._updates)
            or any(f.at > t for f in self._faults)
            or any(e.at > t for e in self._events)
        )

    # ---- the loop ------------------------------------------------------------------------
    def warm_up(self) -> None:
        """``start: converged``: roll the initial spec out instantly at t=0 (not traced). Seeded
        from the synthesised converged cluster where that applies (:mod:`~pulumi_lws.sim.driver.seed`,
        unless :attr:`synthesise` is False), else stepped: reconcile rounds on an instant kubelet."""
        if self.synthesise:
            from pulumi_lws.sim.driver.seed import seeded_warm_up  # it imports this module

            if seeded_warm_up(self):
                return
        self.cluster.kubelet.config.instant = True
        self._warming = True
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
            self._warming = False
            self.rows.clear()
            self.demand.clear()
            self.violations.clear()
            self.stages.clear()

    def _replay_warm_up(self, rounds: list[tuple[Stage, GroupsView]]) -> None:
        """What the stepped warm-up's rounds leave in the runner (the seeded warm-up's cluster is
        already loaded): per round (its stage, the view its row reads) the stage, the budgets and
        the row — the armed floors and the groups' first-seen order — then cleared as there."""
        self._warming = True
        try:
            for stage, view in rounds:
                self.stages.append(stage)
                self._use_budgets()
                self._row(view=view)
        finally:
            self._warming = False
            self.rows.clear()
            self.demand.clear()
            self.violations.clear()
            self.stages.clear()
        self._collector.freeze(collect=False)  # as after a pure reconcile: the synthesiser makes no cycle

    def run(self) -> RunResult:
        """Run to convergence or ``maxTime``; the workspace is removed afterwards. What each
        reconcile leaves alive is frozen out of the cyclic collector's view until then
        (:mod:`~pulumi_lws.sim.driver.collector`)."""
        self.freeze_between_reconciles()
        try:
            return self._run()
        finally:
            self.close()

    def freeze_between_reconciles(self) -> None:
        """``run``'s collector policy, for a caller that drives the steps itself (``warm_up``,
        ``_reconcile``) and calls :meth:`close` at the end: every reconcile from now on freezes
        what it left alive; ``close`` unfreezes."""
        self._collector.close()
        self._collector = FrozenBetweenReconciles.start()

    def _run(self) -> RunResult:
        for obj in self.sc.objects:
            self.cluster.create(obj)
        if self.sc.start == "converged":
            self.warm_up()
        ticks_per_reconcile = max(1, round(self.sc.interval / self.sc.tick))
        k, converged, t = 0, False, 0.0
        held: int | dict[str, int] | None = None
        while True:
            t = k * self.sc.tick
            self.cluster.step(t)
            if k == 0:
                self._row()  # before anything of the scenario happens (the seeds' "before the rolling update")
            notes = self._due_updates(t) + self._due_faults(t) + self._due_events(t)
            step = self._reconcile() if k % ticks_per_reconcile == 0 else None
            row = self._row("; ".join(notes), step)
            if self.probe is not None:
                self.probe(self.cluster, t)
            converged = self._converged(row, t) if step is not None else converged and not notes
            held = (
                (self._held_at_partition(row, t) if step is not None else held if not notes else None)
                if not converged
                else None
            )
            if ((converged or held is not None) and self.sc.when_converged) or t >= self.sc.max_time:
                break
            k += 1
        return self._result(t, converged, held)

    def _first_note(self) -> str:
        if self.sc.start != "converged":
            return "empty cluster"
        return "before the rolling update" if self.sc.updates else "steady state"

    def _result(self, t: float, converged: bool, held: int | dict[str, int] | None = None) -> RunResult:
        rows = narrate(rows_changed(coalesce(self.rows)), first_note=self._first_note())
        trace = Trace(
            rows=rows,
            violations=list(self.violations),
            converged=converged,
            held_at_partition=held if isinstance(held, int) and not converged else None,
            held_at_role_partitions=dict(held) if isinstance(held, dict) and not converged else None,
        )
        last = self.stages[-1] if self.stages else None
        reason = None
        if self.violations:
            reason = f"invariant violated: {self.violations[0]}"
        elif trace.held:
            pass  # stopped at the (role) partitions, as the spec asks: a success
        elif not converged and last is not None and last.blocker is not None:
            trace.blocked = f"{last.blocker.code}: {last.blocker.message}"
            reason = f"rollout ended blocked: {trace.blocked}"
        elif not converged and self.sc.require_converged:
            reason = f"did not converge by t={t:g}s"
        return RunResult(
            self.sc, trace, self.stages, self.cluster, t, reason, self.rows, self.engine.name, demand=list(self.demand)
        )


def simulate(scenario: Scenario, engine: str | None = None, probe: Probe | None = None) -> RunResult:
    """Run ``scenario`` to completion (the runner API used by the CLI, tests and the bench)."""
    return Runner(scenario, engine, probe).run()
