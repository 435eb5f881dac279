"""ModelServing e2e helpers: manifests, scenarios, an independent reader of the cluster and the
bounds checked at every observed state (tests/modelserving/e2e, tests/reliability MS tests).

The reader (:func:`read`) does not use ``pulumi_lws.modelserving.observe``: it derives ServingGroups
and role replicas from the objects' labels and the pods' phase/Ready condition, so the bounds are
checked against what the cluster shows, not against the planner's own view of it.

Definitions (seed 001, docs/modelserving.md):
* a ServingGroup is **live** while any of its StatefulSets or pods exists (terminating included:
  upstream counts Deleting groups toward ``replicas + maxSurge``);
* a role replica ``(g, role, r)`` is **live** while any of its StatefulSets or pods exists, and
  **ready** when its entry pod ``<ms>-<g>-<role>-<r>-0`` and its ``GROUP_SIZE - 1`` worker pods are
  Running+Ready and none of its objects is terminating;
* a ServingGroup is **available** when none of its objects is terminating and every role of the
  spec has at least ``role.replicas`` ready replicas in it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pulumi_lws.core.contract.snapshot import is_deleting, labels_of, pod_running_and_ready
from pulumi_lws.modelserving import labels as L
from pulumi_lws.modelserving.api.modelserving import ROLE_ROLLING_UPDATE, ModelServing
from pulumi_lws.modelserving.reconcile import max_groups_in_flight_annotation
from pulumi_lws.modelserving.revision import modelserving_revision
from pulumi_lws.modelserving.workload import WORKLOAD
from pulumi_lws.sim.cluster.kubelet import Override
from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.sim.driver.result import RunResult
from pulumi_lws.sim.driver.runner import Runner
from pulumi_lws.sim.driver.scenario import Scenario
from support.harness import WorkloadHarness, inline_scenario, kubelet

NS, NAME = "default", "ms"
STACK = f"{NS}/{NAME}"
SG = "ServingGroupRollingUpdate"
ROLE = ROLE_ROLLING_UPDATE


# ---- manifests ------------------------------------------------------------------------------
def role(
    name: str, replicas: int = 1, workers: int = 0, image: str = "img:1", *, cpu: str | None = None, **budget: Any
) -> dict[str, Any]:
    """One role: an entry template and, with ``workers``, a worker template (same image)."""
    container: dict[str, Any] = {"name": "c", "image": image}
    if cpu is not None:
        container["resources"] = {"requests": {"cpu": cpu}}
    r: dict[str, Any] = {
        "name": name,
        "replicas": replicas,
        "workerReplicas": workers,
        "entryTemplate": {"spec": {"containers": [copy.deepcopy(container)]}},
    }
    if workers:
        r["workerTemplate"] = {"spec": {"containers": [copy.deepcopy(container)]}}
    r.update({k: v for k, v in budget.items() if v is not None})
    return r


def ms_manifest(
    *,
    replicas: int,
    roles: list[dict[str, Any]],
    mu: Any = 1,
    surge: Any = None,
    partition: Any = None,
    strategy: str = SG,
    name: str = NAME,
    annotations: Mapping[str, str] | None = None,
    recovery: str | None = None,
) -> dict[str, Any]:
    rollout: dict[str, Any] = {"type": strategy}
    if strategy == SG:
        ruc = {"maxUnavailable": mu}
        if surge is not None:
            ruc["maxSurge"] = surge
        if partition is not None:
            ruc["partition"] = partition
        rollout["rollingUpdateConfiguration"] = ruc
    spec: dict[str, Any] = {
        "replicas": replicas,
        "schedulerName": "default-scheduler",
        "rolloutStrategy": rollout,
        "template": {"roles": copy.deepcopy(roles)},
    }
    if recovery:
        spec["recoveryPolicy"] = recovery
    meta: dict[str, Any] = {"name": name, "namespace": NS}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {
        "apiVersion": "workload.serving.volcano.sh/v1alpha1",
        "kind": "ModelServing",
        "metadata": meta,
        "spec": spec,
    }


def with_image(manifest: Mapping[str, Any], image: str, roles: tuple[str, ...] | None = None) -> dict[str, Any]:
    """A copy with every container image of ``roles`` (default: all) set to ``image``."""
    out = copy.deepcopy(dict(manifest))
    for r in out["spec"]["template"]["roles"]:
        if roles is not None and r["name"] not in roles:
            continue
        for tmpl in ("entryTemplate", "workerTemplate"):
            for c in ((r.get(tmpl) or {}).get("spec") or {}).get("containers") or []:
                c["image"] = image
    return out


def parse(manifest: Mapping[str, Any]) -> ModelServing:
    return ModelServing.from_manifest(copy.deepcopy(dict(manifest)), namespace=NS)


def scenario(old: Mapping[str, Any], new: Mapping[str, Any] | None = None, **options: Any) -> Scenario:
    """:func:`harness.inline_scenario` named ``ms-e2e`` unless ``name`` is given."""
    return inline_scenario(old, new, **{"name": "ms-e2e", **options})


# ---- reading the cluster ---------------------------------------------------------------------
@dataclass
class RoleObs:
    role: str
    ordinal: int
    live: bool = False
    terminating: bool = False
    ready: bool = False
    revision: str = ""  # the pods' revision label (entry pod first)
    images: frozenset = frozenset()
    uids: frozenset = frozenset()


@dataclass
class GroupObs:
    ordinal: int
    revision: str = ""  # the entry pods' most common revision label
    terminating: bool = False
    available: bool = False
    roles: dict[tuple[str, int], RoleObs] = field(default_factory=dict)

    def replicas_of(self, name: str) -> list[RoleObs]:
        return sorted((r for (n, _), r in self.roles.items() if n == name), key=lambda r: r.ordinal)


def _ident(ms: str, obj: Mapping[str, Any]) -> tuple[int, str, int] | None:
    lbl = labels_of(obj)
    group, role_name, rid = str(lbl.get(L.GROUP_NAME, "")), lbl.get(L.ROLE), str(lbl.get(L.ROLE_ID, ""))
    if not group.startswith(ms + "-") or not role_name or not rid.startswith(role_name + "-"):
        return None
    try:
        return int(group[len(ms) + 1 :]), role_name, int(rid[len(role_name) + 1 :])
    except ValueError:
        return None


def _group_size(pod: Mapping[str, Any]) -> int:
    for c in (pod.get("spec") or {}).get("containers") or []:
        for e in c.get("env") or []:
            if e.get("name") == "GROUP_SIZE":
                return int(e.get("value") or 1)
    return 1


def read(cluster: SimCluster, spec: ModelServing) -> dict[int, GroupObs]:
    """ServingGroups and role replicas of ``spec`` as the cluster shows them (module docstring)."""
    name = spec.name
    groups: dict[int, GroupObs] = {}
    pods_of: dict[tuple[int, str, int], list] = {}
    for kind in ("StatefulSet", "Pod"):
        for obj in cluster.list(kind, spec.namespace, {L.NAME: name}):
            ident = _ident(name, obj)
            if ident is None:
                continue
            g, rn, r = ident
            grp = groups.setdefault(g, GroupObs(g))
            ro = grp.roles.setdefault((rn, r), RoleObs(rn, r))
            ro.live = True
            if is_deleting(obj):
                ro.terminating = grp.terminating = True
            if kind == "Pod":
                pods_of.setdefault(ident, []).append(obj)
    for (g, rn, r), pods in pods_of.items():
        ro = groups[g].roles[(rn, r)]
        entry_name = f"{name}-{g}-{rn}-{r}-0"
        entry = next((p for p in pods if p["metadata"]["name"] == entry_name), None)
        workers = [p for p in pods if p is not entry]
        ro.uids = frozenset(p["metadata"]["uid"] for p in pods)
        ro.images = frozenset(c["image"] for p in pods for c in p["spec"].get("containers") or [])
        if entry is not None:
            ro.revision = labels_of(entry).get(L.REVISION, "")
        ro.ready = (
            entry is not None
            and not ro.terminating
            and pod_running_and_ready(entry)
            and len(workers) == _group_size(entry) - 1
            and all(pod_running_and_ready(p) for p in workers)
        )
    for grp in groups.values():
        revs = [r.revision for r in grp.roles.values() if r.revision]
        grp.revision = max(sorted(set(revs)), key=revs.count) if revs else ""
        grp.available = not grp.terminating and all(
            sum(1 for r in grp.replicas_of(role_spec.name) if r.ready) >= role_spec.replicas for role_spec in spec.roles
        )
    return dict(sorted(groups.items()))


# ---- the bounds, at every observed state ----------------------------------------------------------
@dataclass
class Bounds:
    """Probe (``Runner(probe=...)``, or called by a harness) asserting the seed's bounds at every tick.

    ServingGroupRollingUpdate: live groups <= replicas + maxSurge (after a change of ``spec.replicas``
    the previous bound holds while the groups it scaled away terminate); available >= replicas - maxUnavailable
    once the set has been fully available at the current replica count. RoleRollingUpdate, per group
    and role: live replicas <= role.replicas + role maxSurge; ready >= role.replicas - role maxUnavailable
    once that group's role was fully ready; with ``max-groups-in-flight`` (or ``cap``) at most that many
    groups below ready. ``disarm()`` after a fault. Observations are kept in ``history``."""

    spec: Callable[[], ModelServing]
    cap: int | None = None
    history: list[tuple[float, dict[int, GroupObs]]] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    armed: bool = False
    armed_roles: set = field(default_factory=set)
    replicas_seen: int | None = None
    held: int = 0  # the previous spec's live bound while groups it scaled away still terminate
    bound: int = 0
    max_live: int = 0
    min_available: int = 10**9
    max_below_ready: int = 0
    max_role_live: dict = field(default_factory=dict)
    keep_history: bool = True

    def disarm(self) -> None:
        self.armed = False
        self.armed_roles.clear()

    def __call__(self, cluster: SimCluster, t: float) -> None:
        spec = self.spec()
        groups = read(cluster, spec)
        if self.keep_history:
            self.history.append((t, groups))
        if self.replicas_seen != spec.replicas:
            self.held = max(self.held, self.bound) if self.replicas_seen is not None else 0
            self.replicas_seen, self.armed = spec.replicas, False
        if not any(g.terminating for g in groups.values()):
            self.held = 0
        live = len(groups)
        available = sum(1 for g in groups.values() if g.available)
        self.max_live, self.min_available = max(self.max_live, live), min(self.min_available, available)
        if spec.strategy == ROLE_ROLLING_UPDATE:
            self._roles(spec, groups, t)
        else:
            r, s, u = spec.replicas, spec.max_surge(), spec.max_unavailable()
            self.bound = r + s
            if live > max(r + s, self.held):
                self.violations.append(f"t={t:g}: {live} live groups > replicas {r} + maxSurge {s} ({_cells(groups)})")
            if self.armed and available < r - u:
                self.violations.append(
                    f"t={t:g}: {available} available < replicas {r} - maxUnavailable {u} ({_cells(groups)})"
                )
        if available >= spec.replicas:
            self.armed = True

    def _roles(self, spec: ModelServing, groups: dict[int, GroupObs], t: float) -> None:
        cap = self.cap if self.cap is not None else max_groups_in_flight_annotation(spec)
        below = [g for g in groups.values() if not g.available]
        self.max_below_ready = max(self.max_below_ready, len(below))
        if cap is not None and self.armed and len(below) > cap:
            self.violations.append(
                f"t={t:g}: {len(below)} groups below ready > max-groups-in-flight {cap} ({_cells(groups)})"
            )
        for g in groups.values():
            if g.terminating:
                continue
            for rs in spec.roles:
                reps = g.replicas_of(rs.name)
                n_live, n_ready = len(reps), sum(1 for r in reps if r.ready)
                key = (g.ordinal, rs.name)
                self.max_role_live[key] = max(self.max_role_live.get(key, 0), n_live)
                ceiling, floor = rs.replicas + spec.role_max_surge(rs), rs.replicas - spec.role_max_unavailable(rs)
                if n_live > ceiling:
                    self.violations.append(
                        f"t={t:g}: group {g.ordinal} role {rs.name}: {n_live} live replicas > "
                        f"replicas {rs.replicas} + maxSurge {spec.role_max_surge(rs)}"
                    )
                if key in self.armed_roles and n_ready < floor:
                    self.violations.append(
                        f"t={t:g}: group {g.ordinal} role {rs.name}: {n_ready} ready < "
                        f"replicas {rs.replicas} - maxUnavailable {spec.role_max_unavailable(rs)}"
                    )
                if n_ready >= rs.replicas:
                    self.armed_roles.add(key)


def _cells(groups: Mapping[int, GroupObs]) -> str:
    return " ".join(f"{g}:{'A' if o.available else ('T' if o.terminating else '.')}" for g, o in groups.items())


def run(sc: Scenario, *, cap: int | None = None, engine: str | None = None) -> tuple[RunResult, Bounds]:
    """Run ``sc`` with :class:`Bounds` as the per-tick probe (budgets of the runner's desired spec)."""
    runner = Runner(sc, engine)
    bounds = Bounds(spec=lambda: runner.spec.parsed(), cap=cap)
    runner.probe = bounds
    return runner.run(), bounds


def final_groups(result: RunResult) -> dict[int, GroupObs]:
    runner_spec = parse(
        result.scenario.updates[-1].manifest
        if result.scenario.updates and result.scenario.updates[-1].manifest is not None
        else result.scenario.manifest
    )
    return read(result.cluster, runner_spec)


def row_chars(result: RunResult) -> list[str]:
    """Each trace row's group states (U/u/o/x per ordinal; '_' for a terminating group)."""
    return ["".join("_" if g.detail == "terminating" else g.state for g in row.groups) for row in result.trace.rows]


# ---- a reconcile harness (crash / re-run tests) -----------------------------------------------------
@dataclass
class Harness(WorkloadHarness):
    """One `pulumi up` = observe -> ``modelserving.reconcile`` -> ``SimCluster.apply(keep)`` -> actions."""

    WORKLOAD = WORKLOAD
    STACK = STACK

    @classmethod
    def create(
        cls,
        manifest: Mapping[str, Any],
        *,
        seed: int = 0,
        ready: float = 1.0,
        slow: Mapping[str, float] | None = None,
        nodes: list | None = None,
        cap: int | None = None,
    ) -> Harness:
        overrides = [Override(group=g, ready=s) for g, s in (slow or {}).items()]
        h = cls(
            SimCluster(seed=seed, nodes=nodes or [], kubelet=kubelet(ready, overrides=overrides)),
            copy.deepcopy(dict(manifest)),
        )
        h.bounds = Bounds(spec=lambda: h.spec, cap=cap, keep_history=False)
        h.warm_up()
        h.check()  # arms the floors: the rollout starts healthy
        return h

    @property
    def spec(self) -> ModelServing:
        return parse(self.desired)

    def groups(self) -> dict[int, GroupObs]:
        return read(self.cluster, self.spec)

    def converged(self) -> bool:
        """Stage complete without a blocker; ``replicas`` groups, all available, every ordinal >=
        partition on the target revision (ServingGroupRollingUpdate), every role replica's pods on
        the target revision's template otherwise."""
        stage = self.last.stage if self.last else None
        if stage is None or not stage.complete or stage.blocker is not None:
            return False
        spec, groups = self.spec, self.groups()
        if len(groups) != spec.replicas or not all(g.available for g in groups.values()):
            return False
        target = modelserving_revision(spec)
        if spec.strategy == ROLE_ROLLING_UPDATE:
            return all(len(g.replicas_of(r.name)) == r.replicas for g in groups.values() for r in spec.roles)
        p = spec.partition()
        return all(g.revision == target for o, g in groups.items() if o >= p)
