"""DisaggregatedSet e2e helpers: manifests, scenarios, an independent reader of the cluster, the
bounds checked at every observed state and a reconcile harness (tests/disaggregatedset/e2e).

The reader (:func:`read`) does not use ``pulumi_lws.disaggregatedset.observe``: it derives each
child LeaderWorkerSet's groups from the pods' and StatefulSets' labels and the pods' phase/Ready
condition, so the bounds are checked against what the cluster shows, not against the planner's
own view of it.

Definitions (docs/disaggregatedset.md, issue 13):
* a **child** is the set of objects labelled ``leaderworkerset.sigs.k8s.io/name=<child LWS>`` and
  ``disaggregatedset.x-k8s.io/name=<ds>``; its role / slice / revision are its DS labels;
* its **spec replicas** are the child LWS's ``spec.replicas`` as last applied: the
  ``leaderworkerset.sigs.k8s.io/replicas`` annotation of its leader StatefulSet (0 when the leader
  is absent or terminating);
* a group ``(child, group-key)`` (Ordinal or Hash; ``group-index`` when no key is written yet) is
  **live** while any of its pods or worker StatefulSets exists (terminating included), **running**
  while live with no terminating pod or worker StatefulSet, and **ready** when its leader pod
  (worker-index 0) and its ``size - 1`` worker pods are Running+Ready and none of them is terminating;
* per (slice, role) the role's **ready / running / live replicas** are those groups over every
  revision. The ceiling ``target + maxSurge`` is checked on running groups (what the planner
  declares and the LWS controllers keep), the live count, terminating groups included, is recorded
  (``Bounds.max_live``): a drain and a raise in one stage overlap for the drained pods' grace period.
"""

from __future__ import annotations

import copy
import pathlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pulumi_lws.core.contract.snapshot import is_deleting, labels_of, pod_running_and_ready
from pulumi_lws.disaggregatedset import external
from pulumi_lws.disaggregatedset import labels as DL
from pulumi_lws.disaggregatedset.api import DisaggregatedSet
from pulumi_lws.disaggregatedset.reconcile import role_targets
from pulumi_lws.disaggregatedset.revision import compute_revision
from pulumi_lws.disaggregatedset.workload import WORKLOAD
from pulumi_lws.lws import labels as L
from pulumi_lws.sim.cluster.kubelet import Override
from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.sim.driver.result import RunResult
from pulumi_lws.sim.driver.runner import Runner
from pulumi_lws.sim.driver.scenario import Scenario
from support.harness import WorkloadHarness, inline_scenario, kubelet

NS, NAME = "default", "pd"
STACK = f"{NS}/{NAME}"
EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "disaggregated-pd"
REPLICAS_ANNOTATION = "leaderworkerset.sigs.k8s.io/replicas"
DEADLINE = "pulumi-lws.io/progress-deadline-seconds"


# ---- manifests ------------------------------------------------------------------------------
def role(
    name: str,
    replicas: int = 1,
    size: int = 2,
    image: str = "img:1",
    *,
    surge: Any = None,
    unavailable: Any = None,
    group_identity: str | None = None,
    cpu: str | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """One role: a LeaderWorkerSet of ``size`` pods per group (worker template only); ``surge`` /
    ``unavailable`` write a rollingUpdateConfiguration (omitted: upstream's surge 1 / unavailable 0)."""
    container: dict[str, Any] = {"name": "server", "image": image}
    if cpu is not None:
        container["resources"] = {"requests": {"cpu": cpu}}
    body: dict[str, Any] = {
        "replicas": replicas,
        "leaderWorkerTemplate": {"size": size, "workerTemplate": {"spec": {"containers": [container]}}},
    }
    if surge is not None or unavailable is not None:
        ruc = {k: v for k, v in (("maxSurge", surge), ("maxUnavailable", unavailable)) if v is not None}
        body["rolloutStrategy"] = {"type": "RollingUpdate", "rollingUpdateConfiguration": ruc}
    if group_identity is not None:
        body["groupIdentity"] = group_identity
    body.update(spec)
    return {"name": name, "spec": body}


def ds_manifest(
    *roles: dict[str, Any],
    name: str = NAME,
    slices: int | None = None,
    placement: Mapping[str, Any] | None = None,
    annotations: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"roles": [copy.deepcopy(r) for r in roles] or [role("prefill", 6), role("decode", 2)]}
    if slices is not None:
        spec["slices"] = slices
    if placement is not None:
        spec["placementPolicy"] = dict(placement)
    meta: dict[str, Any] = {"name": name, "namespace": NS}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"apiVersion": "disaggregatedset.x-k8s.io/v1", "kind": "DisaggregatedSet", "metadata": meta, "spec": spec}


def example_manifest() -> dict[str, Any]:
    import yaml

    return yaml.safe_load((EXAMPLE / "ds.yaml").read_text())


def _containers(r: Mapping[str, Any]) -> list[dict]:
    lwt = (r.get("spec") or {}).get("leaderWorkerTemplate") or {}
    out = []
    for tmpl in ("leaderTemplate", "workerTemplate"):
        spec = (lwt.get(tmpl) or {}).get("spec") or {}
        out += list(spec.get("containers") or []) + list(spec.get("initContainers") or [])
    return out


def with_image(manifest: Mapping[str, Any], image: str, roles: tuple[str, ...] | None = None) -> dict[str, Any]:
    """A copy with every container image of ``roles`` (default: all) set to ``image``."""
    out = copy.deepcopy(dict(manifest))
    for r in out["spec"]["roles"]:
        if roles is None or r["name"] in roles:
            for c in _containers(r):
                c["image"] = image
    return out


def next_image(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """A copy with every image changed (``:next`` appended as a tag or to the tag)."""
    out = copy.deepcopy(dict(manifest))
    for r in out["spec"]["roles"]:
        for c in _containers(r):
            img = c["image"]
            c["image"] = img + ("-next" if ":" in img.rsplit("/", 1)[-1] else ":next")
    return out


def parse(manifest: Mapping[str, Any], namespace: str | None = None) -> DisaggregatedSet:
    return DisaggregatedSet.from_manifest(copy.deepcopy(dict(manifest)), namespace=namespace)


def scenario(old: Mapping[str, Any], new: Mapping[str, Any] | None = None, **options: Any) -> Scenario:
    """:func:`harness.inline_scenario` named ``ds-e2e`` unless ``name`` is given."""
    return inline_scenario(old, new, **{"name": "ds-e2e", **options})


# ---- reading the cluster ---------------------------------------------------------------------
@dataclass
class ChildObs:
    name: str
    role: str
    slice: int
    revision: str
    spec_replicas: int = 0
    leader_terminating: bool = False
    live: set = field(default_factory=set)  # group keys with any pod / worker StatefulSet
    terminating: set = field(default_factory=set)  # group keys with a terminating pod / worker StatefulSet
    ready: set = field(default_factory=set)  # group keys ready (module docstring)
    images: set = field(default_factory=set)
    nodes: dict = field(default_factory=dict)  # group index -> node names of its pods
    replaces: str | None = None  # the leader workload's replaces-revisions annotation (still rolling)


@dataclass
class RoleObs:
    """One (slice, role): its children by revision."""

    role: str
    slice: int
    children: dict[str, ChildObs] = field(default_factory=dict)

    @property
    def live(self) -> int:
        return sum(len(c.live) for c in self.children.values())

    @property
    def running(self) -> int:
        return sum(len(c.live - c.terminating) for c in self.children.values())

    @property
    def ready(self) -> int:
        return sum(len(c.ready) for c in self.children.values())

    def split(self, target: str) -> tuple[int, int, int, int]:
        """(old spec, new spec, old ready, new ready) against ``target``."""
        old = [c for r, c in self.children.items() if r != target]
        new = self.children.get(target)
        return (
            sum(c.spec_replicas for c in old),
            new.spec_replicas if new else 0,
            sum(len(c.ready) for c in old),
            len(new.ready) if new else 0,
        )


def _group(obj: Mapping[str, Any]) -> str | None:
    lbl = labels_of(obj)
    key = lbl.get(L.GROUP_KEY) or lbl.get(L.GROUP_INDEX)
    return str(key) if key is not None else None


def read(cluster: SimCluster, name: str = NAME, namespace: str = NS) -> dict[tuple[int, str], RoleObs]:
    """Every child of DisaggregatedSet ``name`` as the cluster shows it, per (slice, role)."""
    children: dict[str, ChildObs] = {}

    def child(obj: Mapping[str, Any]) -> ChildObs | None:
        lbl = labels_of(obj)
        lws, role_name, rev = lbl.get(L.NAME), lbl.get(DL.ROLE), lbl.get(DL.REVISION)
        if not lws or not role_name or not rev:
            return None
        s = str(lbl.get(DL.SLICE, "0"))
        return children.setdefault(lws, ChildObs(lws, role_name, int(s) if s.isdigit() else 0, rev))

    pods_of: dict[tuple[str, int], list] = {}
    for sts in cluster.list("StatefulSet", namespace, {DL.NAME: name}):
        c = child(sts)
        if c is None:
            continue
        meta = sts["metadata"]
        if meta["name"] == c.name:  # the leader StatefulSet
            c.leader_terminating = is_deleting(sts)
            c.replaces = (meta.get("annotations") or {}).get(DL.REPLACES)
            if not c.leader_terminating:
                c.spec_replicas = int(
                    (meta.get("annotations") or {}).get(REPLICAS_ANNOTATION, sts["spec"].get("replicas", 0))
                )
        else:
            gk = _group(sts)
            if gk is not None:
                c.live.add(gk)
                if is_deleting(sts):
                    c.terminating.add(gk)
    for dep in cluster.list("Deployment", namespace, {DL.NAME: name}):
        c = child(dep)
        if c is not None and dep["metadata"]["name"] == c.name:
            c.leader_terminating = is_deleting(dep)
            c.replaces = (dep["metadata"].get("annotations") or {}).get(DL.REPLACES)
            c.spec_replicas = 0 if c.leader_terminating else int(dep["spec"].get("replicas") or 0)
    for pod in cluster.list("Pod", namespace, {DL.NAME: name}):
        c, gk = child(pod), _group(pod)
        if c is None or gk is None:
            continue
        c.live.add(gk)
        if is_deleting(pod):
            c.terminating.add(gk)
        c.images |= {x["image"] for x in pod["spec"].get("containers") or []}
        pods_of.setdefault((c.name, gk), []).append(pod)
    for (lws, gi), pods in pods_of.items():
        c = children[lws]
        c.nodes[gi] = {p["spec"].get("nodeName") for p in pods}
        leader = [p for p in pods if labels_of(p).get(L.WORKER_INDEX) == "0"]
        if not leader:
            continue
        size = int(((leader[0]["metadata"].get("annotations") or {}).get(L.SIZE)) or 1)
        if len(pods) == size and all(pod_running_and_ready(p) and not is_deleting(p) for p in pods):
            c.ready.add(gi)
    out: dict[tuple[int, str], RoleObs] = {}
    for c in children.values():
        out.setdefault((c.slice, c.role), RoleObs(c.role, c.slice)).children[c.revision] = c
    return dict(sorted(out.items()))


def lanes(obs: Mapping[tuple[int, str], RoleObs], roles: list[str], target: str, slice_: int = 0) -> tuple:
    """The lanes state ``((old spec per role), (new spec per role))`` of one slice (upstream's step)."""
    splits = [obs[(slice_, r)].split(target) if (slice_, r) in obs else (0, 0, 0, 0) for r in roles]
    return tuple(s[0] for s in splits), tuple(s[1] for s in splits)


# ---- the bounds, at every observed state ----------------------------------------------------------
def scaler_values(cluster: SimCluster, spec: DisaggregatedSet) -> dict[str, int]:
    """Each External role's ``DisaggregatedSetRoleScaler`` ``spec.replicas`` as the cluster shows it
    (what the autoscaler last wrote): the role's target for the bounds."""
    out = {}
    for r in spec.roles:
        obj = cluster.get(external.SCALER_KIND, f"{spec.name}-{r.name}", spec.namespace) if r.external else None
        if obj is not None:
            out[r.name] = int((obj.get("spec") or {}).get("replicas", 0))
    return out


def ratio_ok(ready: Mapping[str, int], targets: Mapping[str, int], steps: Mapping[str, int]) -> bool:
    """The ready counts are within one step (per role: its maxSurge + maxUnavailable, at least 1)
    of the target ratio: some lambda >= 0 has |ready_r - lambda * target_r| <= step_r for every role."""
    lo, hi = 0.0, float("inf")
    for r, t in targets.items():
        if t <= 0:
            continue
        s = max(1, steps[r])
        lo, hi = max(lo, (ready.get(r, 0) - s) / t), min(hi, (ready.get(r, 0) + s) / t)
    return lo <= hi + 1e-9


@dataclass
class Bounds:
    """Probe asserting the DS bounds at every tick, per slice and role of the desired spec:

    * running groups <= target + maxSurge (after ``spec_changed``, the previous ceiling while the
      groups it scaled away are still running);
    * ready groups >= target - maxUnavailable, once that role was fully ready at the target;
    * the ready counts within one step of the target ratio (:func:`ratio_ok`), once armed;
    * the barrier: a role's new child grows only when, at that state, every role's new child has
      at least the ready groups its previous spec asked for;
    * an old revision's spec replicas never grow.

    ``disarm()`` after a fault or a spec change that moves targets."""

    spec: Callable[[], DisaggregatedSet]
    ratio: bool = True
    history: list[tuple[float, dict]] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    armed: set = field(default_factory=set)
    keep_history: bool = True
    prev: dict | None = None
    prev_target: str | None = None
    ceiling_held: dict = field(default_factory=dict)
    max_live: dict = field(default_factory=dict)
    max_running: dict = field(default_factory=dict)
    min_ready: dict = field(default_factory=dict)
    start_pods: list = field(default_factory=list)  # the pods right after the warm-up (``attach``)
    external_targets: dict = field(default_factory=dict)  # External roles' targets at the previous state
    ratio_wait: set = field(default_factory=set)  # slices whose ratio check waits for moved targets to settle
    moved_floor: dict = field(default_factory=dict)  # (slice, role) -> its floor while an External target moves

    def disarm(self) -> None:
        self.armed.clear()

    def spec_changed(self, previous: DisaggregatedSet) -> None:
        """Before a spec change that lowers targets: the previous ceilings hold until the groups
        scaled away are gone; the floors re-arm once each role is ready at its new target."""
        for rt in role_targets(previous):
            for s in range(previous.slices):
                if rt.replicas is not None:
                    self.ceiling_held[(s, rt.name)] = rt.replicas + rt.config.max_surge
        self.disarm()

    def __call__(self, cluster: SimCluster, t: float) -> None:
        spec = self.spec()
        obs = read(cluster, spec.name, spec.namespace)
        if self.keep_history:
            self.history.append((t, obs))
        target = compute_revision(spec)
        targets = {rt.name: rt for rt in role_targets(spec, scaler_values(cluster, spec))}
        self._external_moves(spec, targets)
        for s in range(spec.slices):
            ready: dict[str, int] = {}
            for name, rt in targets.items():
                ro = obs.get((s, name))
                live, running, rdy = (ro.live, ro.running, ro.ready) if ro else (0, 0, 0)
                ready[name] = rdy
                key = (s, name)
                self.max_live[key] = max(self.max_live.get(key, 0), live)
                self.max_running[key] = max(self.max_running.get(key, 0), running)
                if key in self.armed:
                    self.min_ready[key] = min(self.min_ready.get(key, 10**9), rdy)
                if rt.replicas is None:
                    continue
                ceiling = rt.replicas + rt.config.max_surge
                if self.ceiling_held.get(key, 0) > ceiling and running > ceiling:
                    ceiling = self.ceiling_held[key]  # a previous, larger spec still scaling down
                else:
                    self.ceiling_held.pop(key, None)
                if running > ceiling:
                    self.violations.append(
                        f"t={t:g}: slice {s} role {name}: {running} running groups > {rt.replicas} + "
                        f"maxSurge {rt.config.max_surge} ({self._cells(obs, target)})"
                    )
                floor = rt.replicas - rt.config.max_unavailable
                if key in self.armed and rdy < floor:
                    self.violations.append(
                        f"t={t:g}: slice {s} role {name}: {rdy} ready groups < {rt.replicas} - "
                        f"maxUnavailable {rt.config.max_unavailable} ({self._cells(obs, target)})"
                    )
                if key in self.moved_floor and rdy < self.moved_floor[key]:
                    self.violations.append(
                        f"t={t:g}: slice {s} role {name}: {rdy} ready groups < "
                        f"{self.moved_floor[key]} (the floor while it moves to {rt.replicas})"
                    )
                if rdy >= rt.replicas and s not in self.ratio_wait:
                    self.armed.add(key)
            if s in self.ratio_wait and all(ready[n] == (rt.replicas or 0) for n, rt in targets.items()):
                self.ratio_wait.discard(s)  # every role settled at its (moved) target: floors re-arm
                self.moved_floor = {k: v for k, v in self.moved_floor.items() if k[0] != s}
                self.armed |= {(s, n) for n in targets}
            if self.ratio and s not in self.ratio_wait and all((s, n) in self.armed for n in targets):
                tg = {n: rt.replicas or 0 for n, rt in targets.items() if rt.replicas is not None}
                steps = {n: rt.config.max_surge + rt.config.max_unavailable for n, rt in targets.items()}
                if not ratio_ok(ready, tg, steps):
                    self.violations.append(f"t={t:g}: slice {s}: ready {ready} not within one step of the ratio {tg}")
        self._barrier(obs, target, list(targets), spec.slices, t)
        self.prev, self.prev_target = obs, target

    def _external_moves(self, spec: DisaggregatedSet, targets: Mapping[str, Any]) -> None:
        """An autoscaler moved an External role's target. Until every role of the slice is ready at
        exactly its target (the ratio moved too; the ratio check waits as well) the role's floor is
        ``min(previous, new) - maxUnavailable`` — the stage planner's floor for a role that grows
        during a rollout is ``min(target, initialOld) - maxUnavailable`` — and after a lowering the
        previous ceiling holds while it scales down."""
        for name, rt in targets.items():
            before = self.external_targets.get(name)
            if rt.replicas is None or before is None or before.replicas == rt.replicas:
                continue
            for s in range(spec.slices):
                if (s, name) in self.armed or (s, name) in self.moved_floor:
                    floor = min(before.replicas, rt.replicas) - rt.config.max_unavailable
                    self.moved_floor[(s, name)] = min(floor, self.moved_floor.get((s, name), floor))
                self.armed.discard((s, name))
                self.ratio_wait.add(s)
                if rt.replicas < before.replicas:
                    self.ceiling_held[(s, name)] = before.replicas + before.config.max_surge
        self.external_targets = {n: rt for n, rt in targets.items() if rt.external}

    def _barrier(self, obs, target: str, roles: list[str], slices: int, t: float) -> None:
        if self.prev is None or self.prev_target != target:
            return

        def new_spec(o, s, r):
            c = o[(s, r)].children.get(target) if (s, r) in o else None
            return c.spec_replicas if c else 0

        def new_ready(o, s, r):
            c = o[(s, r)].children.get(target) if (s, r) in o else None
            return len(c.ready) if c else 0

        def rolling(o, s) -> bool:
            """An old revision still runs, or the target children still replace one (the
            barrier holds only then: a scale-up outside a rollout is immediate, as upstream)."""
            return any(
                (rev != target and (c.spec_replicas or c.live)) or (rev == target and c.replaces)
                for r in roles
                if (s, r) in o
                for rev, c in o[(s, r)].children.items()
            )

        for s in range(slices):
            if not rolling(self.prev, s):
                continue
            grew = [r for r in roles if new_spec(obs, s, r) > new_spec(self.prev, s, r)]
            # a role whose new child was just created (0 before) has nothing to wait for
            short = [r for r in roles if new_ready(obs, s, r) < new_spec(self.prev, s, r)]
            if grew and short:
                self.violations.append(
                    f"t={t:g}: slice {s}: {grew} grew while {short} had unready new replicas "
                    f"({self._cells(obs, target)})"
                )
            for r in roles:
                for rev, c in obs.get((s, r)).children.items() if obs.get((s, r)) else ():
                    before = self.prev.get((s, r)).children.get(rev) if self.prev.get((s, r)) else None
                    if rev != target and before is not None and c.spec_replicas > before.spec_replicas:
                        self.violations.append(
                            f"t={t:g}: slice {s} role {r}: old revision {rev} grew "
                            f"{before.spec_replicas} -> {c.spec_replicas}"
                        )

    @staticmethod
    def _cells(obs, target: str) -> str:
        return " ".join(f"{s}/{r}:{'|'.join(map(str, o.split(target)))}" for (s, r), o in obs.items())


def attach(runner: Runner, *, ratio: bool = True) -> Bounds:
    """:class:`Bounds` as ``runner``'s per-tick probe, also reading the converged state right after
    the warm-up (t=-1, before the scenario's updates: the "before the rolling update" state)."""
    bounds = Bounds(spec=lambda: runner.spec.parsed(), ratio=ratio)
    runner.probe = bounds
    warm_up = runner.warm_up

    def warm_then_read() -> None:
        warm_up()
        bounds.start_pods = copy.deepcopy(runner.cluster.list("Pod"))
        bounds(runner.cluster, -1.0)

    runner.warm_up = warm_then_read  # type: ignore[method-assign]
    return bounds


def run(sc: Scenario, *, engine: str | None = None, ratio: bool = True) -> tuple[RunResult, Bounds]:
    """Run ``sc`` with :class:`Bounds` as the per-tick probe (budgets of the runner's desired spec)."""
    runner = Runner(sc, engine)
    bounds = attach(runner, ratio=ratio)
    return runner.run(), bounds


def lane_sequence(bounds: Bounds, roles: list[str], target: str, slice_: int = 0) -> list[tuple]:
    """The distinct consecutive lanes states of ``bounds.history`` (spec replicas, read from the cluster)."""
    out: list[tuple] = []
    for _, obs in bounds.history:
        state = lanes(obs, roles, target, slice_)
        if not out or out[-1] != state:
            out.append(state)
    return out


def converged_on(cluster: SimCluster, spec: DisaggregatedSet) -> list[str]:
    """Problems with the final state: every slice and role exactly ``replicas`` ready groups (an
    External role: its scaler's ``spec.replicas``) on the target revision with the target images,
    no other child, nothing terminating."""
    obs = read(cluster, spec.name, spec.namespace)
    target = compute_revision(spec)
    problems = []
    for s in range(spec.slices):
        for r in spec.roles:
            ro = obs.get((s, r.name))
            replicas = scaler_values(cluster, spec).get(r.name) if r.external else r.replicas
            if replicas is None:
                continue
            if ro is None or set(ro.children) != {target}:
                problems.append(f"{s}/{r.name}: children {sorted(ro.children) if ro else []} != [{target}]")
                continue
            c = ro.children[target]
            if c.spec_replicas != replicas or len(c.ready) != replicas or len(c.live) != replicas:
                problems.append(
                    f"{s}/{r.name}: spec {c.spec_replicas} live {len(c.live)} ready {len(c.ready)} != {replicas}"
                )
    extra = [k for k in obs if k[0] >= spec.slices or k[1] not in spec.role_names]
    if extra:
        problems.append(f"children outside the spec: {extra}")
    terminating = [
        p["metadata"]["name"] for p in cluster.list("Pod", spec.namespace) if p["metadata"].get("deletionTimestamp")
    ]
    if terminating:
        problems.append(f"terminating pods {terminating}")
    return problems


# ---- a reconcile harness (crash / re-run tests) -----------------------------------------------------
@dataclass
class Harness(WorkloadHarness):
    """One `pulumi up` = observe -> ``disaggregatedset.reconcile`` -> ``SimCluster.apply(keep)`` -> actions."""

    WORKLOAD = WORKLOAD
    STACK = STACK

    @classmethod
    def create(
        cls,
        manifest: Mapping[str, Any],
        *,
        seed: int = 0,
        ready: float = 1.0,
        overrides: list[Override] | None = None,
        nodes: list | None = None,
        ratio: bool = True,
    ) -> Harness:
        h = cls(
            SimCluster(seed=seed, nodes=nodes or [], kubelet=kubelet(ready, overrides=overrides)),
            copy.deepcopy(dict(manifest)),
        )
        h.bounds = Bounds(spec=lambda: h.spec, keep_history=False, ratio=ratio)
        h.warm_up()
        h.check()  # arms the floors: the rollout starts healthy
        return h

    @property
    def spec(self) -> DisaggregatedSet:
        return parse(self.desired)

    def read(self) -> dict[tuple[int, str], RoleObs]:
        return read(self.cluster, self.spec.name, self.spec.namespace)

    def converged(self) -> bool:
        stage = self.last.stage if self.last else None
        if stage is None or not stage.complete or stage.blocker is not None:
            return False
        return not converged_on(self.cluster, self.spec)
