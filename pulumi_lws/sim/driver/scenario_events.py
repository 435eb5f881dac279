"""The scenario's timed spec updates, faults and cluster events, applied when due (a base of
:class:`~pulumi_lws.sim.driver.runner.Runner`).

Apart from the runner because what the scenario does to the cluster at its times is one concern
and the loop another; this class holds no state of its own: the queues (each sorted by time) and
every attribute it reads are set by ``Runner.__init__``. Invariants: each update, fault and event
is popped once, at the first tick at or after its time, and named in that tick's row note; a
fault or an event on a missing target is reported in the note, not fatal; a fault, a pod deletion
that deleted a pod and a node removal re-arm the availability floors (:meth:`_disarm`).
"""

from __future__ import annotations

from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.sim.driver.budgets import RoleBudgets, WorkloadBudget
from pulumi_lws.sim.driver.desired import DesiredSpec
from pulumi_lws.sim.driver.scenario_types import Event, Fault, Scenario, Update


class ScenarioEvents:
    """The ``_due_*`` steps of one run and the floors' re-arming (module doc)."""

    sc: Scenario
    spec: DesiredSpec
    cluster: SimCluster
    budget: WorkloadBudget
    role_budgets: RoleBudgets
    _updates: list[Update]
    _faults: list[Fault]
    _events: list[Event]

    def _disarm(self) -> None:
        """A fault or event that can take a pod down: the availability floors re-arm only once
        the replicas are available again (whole workload and every role)."""
        self.budget.armed = False
        self.role_budgets.disarm()

    def _due_updates(self, t: float) -> list[str]:
        notes = []
        while self._updates and self._updates[0].at <= t:
            notes.append(self.spec.apply(self._updates.pop(0)))
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
            self._disarm()
        return notes

    def _due_events(self, t: float) -> list[str]:
        """Timed cluster events (``events:``); one on a missing node is reported, not fatal. An
        event that can take a pod down (delete, node removal) re-arms the availability floor,
        as a fault does."""
        notes = []
        while self._events and self._events[0].at <= t:
            e = self._events.pop(0)
            ns, c = self.sc.namespace, self.cluster
            try:
                if e.verb == "annotate":
                    c.annotate_pods(ns, str(e.target), e.annotations or {})
                elif e.verb == "deletePods":
                    if c.delete_pods(ns, str(e.target)):
                        self._disarm()
                elif e.verb == "addNodes":
                    c.add_nodes(int(e.target), e.gpus_per_node)
                elif e.verb == "removeNode":
                    c.remove_node(str(e.target))
                    self._disarm()
                else:
                    c.cordon(str(e.target))
                notes.append(e.describe())
            except Exception as exc:
                notes.append(f"{e.describe()} skipped: {exc}")
        return notes
