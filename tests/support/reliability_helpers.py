"""Reliability harness: drive `reconcile` + `SimCluster` (pure engine) and check the promise.

One *reconcile* here is exactly what the simulator's pure engine does (= one `pulumi up`): the
product's `core.contract.driver.cycle` — observe -> the LeaderWorkerSet Workload's `reconcile`
-> `SimCluster.apply(manifests, stack_id, keep=..., dependencies=result.dependencies)` ->
`SimCluster.execute(actions)`. `keep < 1` applies a seeded
random subset of the object changes, closed under the dependencies as Pulumi's `dependsOn`
guarantees (a crash mid-apply); the crashed run's actions are then not executed (Pulumi runs the
component's actions after registering its children, so a crash during registration never reaches
them).

Invariants (definitions: docs/reliability.md; same as sim/driver/runner.py + docs/rollout.md):
* live       = leader pods that exist and are not terminating (`lws.trace_view.read_groups`);
* available  = groups whose leader pod is Running+Ready and whose worker StatefulSet is ready
               (size 1: the leader alone), surge groups included;
* surge      : live <= R + MS, budgets of the spec in effect (`LeaderWorkerSet.max_surge()`);
* floor      : available >= max(0, min(R0, R) - MU) during a rollout that *started healthy*
               (`started_healthy`: Ordinal, every ordinal in [0, S) ready and not terminating when
               the spec changed; Hash, every live group ready; R0 = live then), disarmed by a fault;
* followers  : Ordinal: a group below the observed leader-StatefulSet partition never has a worker
               StatefulSet (revision label or pod-template label) on the target revision unless
               its leader pod is on it; Hash: a worker StatefulSet is always on its leader's revision.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pulumi_lws.core.contract.driver import cycle
from pulumi_lws.core.contract.snapshot import is_deleting, labels_of, sts_partition
from pulumi_lws.core.contract.trace import GroupsView
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.observe import lws_scope, revision_of
from pulumi_lws.lws.reconcile import Reconciled, ReconcileOptions
from pulumi_lws.lws.revision import revision_key
from pulumi_lws.lws.trace_view import read_groups
from pulumi_lws.lws.workload import WORKLOAD as LWS
from pulumi_lws.sim.cluster.kubelet import KubeletConfig, Override, Timing
from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.workloads import simulator_group_labels

NS, NAME = "default", "rel"
STACK = f"{NS}/{NAME}"
POLICIES = ("ordinal-scalefirst", "ordinal-rolloutfirst", "hash-posttermination", "hash-immediate")
BUDGETS = (0, 1, 2, 3, "0%", "25%", "50%", "100%")


def lws_manifest(
    *,
    replicas: int,
    size: int,
    image: str,
    mu: Any = 1,
    ms: Any = 0,
    partition: int = 0,
    hash_mode: bool = False,
    immediate: bool = False,
    gpus: int = 0,
    env: str = "",
) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "c", "image": image}
    if gpus:
        container["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
    if env:
        container["env"] = [{"name": "REV", "value": env}]
    spec: dict[str, Any] = {
        "replicas": replicas,
        "rolloutStrategy": {
            "rollingUpdateConfiguration": {"maxUnavailable": mu, "maxSurge": ms, "partition": partition}
        },
        "leaderWorkerTemplate": {"size": size, "workerTemplate": {"spec": {"containers": [container]}}},
    }
    if hash_mode:
        spec["groupIdentity"] = "Hash"
        spec["groupReplacementPolicy"] = "Immediate" if immediate else "PostTermination"
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": NAME, "namespace": NS},
        "spec": spec,
    }


def parse(manifest: Mapping[str, Any]) -> LeaderWorkerSet:
    return LeaderWorkerSet.from_manifest(copy.deepcopy(dict(manifest)), namespace=NS)


# ---- random cases -------------------------------------------------------------------------
@dataclass
class Case:
    seed: int
    policy: str
    start: dict[str, Any]
    changes: list[dict[str, Any]]  # [target] + mid-rollout changes (applied at random stages)
    ready_seconds: float
    slow_groups: dict[str, float]
    p_crash: float
    p_change: float
    #: issue 24: the first change is a bad image failing this way (crash, pull, probe), then a fix
    bad_image: str | None = None

    @property
    def hash_mode(self) -> bool:
        return self.policy.startswith("hash")

    @property
    def options(self) -> ReconcileOptions:
        return ReconcileOptions(update_order="RolloutFirst" if self.policy == "ordinal-rolloutfirst" else "ScaleFirst")

    def describe(self) -> str:
        s = self.start["spec"]
        ruc = s["rolloutStrategy"]["rollingUpdateConfiguration"]
        tgt = [(c["spec"]["replicas"], c["spec"]["leaderWorkerTemplate"]["size"]) for c in self.changes]
        return (
            f"seed={self.seed} {self.policy} R0={s['replicas']} size={s['leaderWorkerTemplate']['size']} "
            f"MU={ruc['maxUnavailable']!r} MS={ruc['maxSurge']!r} P={ruc['partition']} -> (R,size)={tgt} "
            f"ready={self.ready_seconds} slow={self.slow_groups}"
            + (f" bad-image={self.bad_image}" if self.bad_image else "")
        )


def _budgets(rng: random.Random, replicas: int) -> tuple[Any, Any]:
    from pulumi_lws.core.k8s.scaling import scaled_value

    for _ in range(50):
        mu, ms = rng.choice(BUDGETS), rng.choice(BUDGETS)
        if scaled_value(mu, replicas, round_up=False) > 0 or scaled_value(ms, replicas, round_up=True) > 0:
            return mu, ms
    return 1, 0


#: fraction of soak cases (seeds >= SOAK_SEEDS) whose first change is a bad image, then a fix
BAD_IMAGE_FRACTION = 0.2
SOAK_SEEDS = 10_000


def random_case(seed: int, policy: str | None = None, bad_image: str | None = None) -> Case:
    """A seeded random rollout: every knob is drawn from ``random.Random(seed)``. ``bad_image``
    (crash, pull, probe; drawn for ``BAD_IMAGE_FRACTION`` of soak seeds): the rollout first goes
    to a bad image (``fault_helpers.BAD``) on the first change's shape, then to the drawn changes."""
    from fault_helpers import BAD, bad_image_draw, with_all_images

    rng = random.Random(seed)
    policy = policy or POLICIES[seed % len(POLICIES)]
    hash_mode = policy.startswith("hash")
    r0, size = rng.randint(1, 5), rng.choice((1, 2, 2, 3))
    partition = 0 if hash_mode else rng.choice((0, 0, 0, 1, 2))
    common = {"hash_mode": hash_mode, "immediate": policy == "hash-immediate"}

    def spec(version: int, replicas: int, sz: int) -> dict[str, Any]:
        mu, ms = _budgets(rng, replicas)
        return lws_manifest(
            replicas=replicas,
            size=sz,
            image=f"img:{version}",
            mu=mu,
            ms=ms,
            partition=min(partition, replicas),
            **common,
        )

    start = spec(1, r0, size)
    changes = []
    r, sz = r0, size
    for version in range(2, 2 + rng.choice((1, 1, 2, 3))):
        if rng.random() < 0.5:
            r = rng.randint(1, 6)
        if rng.random() < 0.15:
            sz = rng.choice((1, 2, 3))
        changes.append(spec(version, r, sz))
    slow = {str(g): float(rng.choice((5, 8, 13))) for g in range(6) if rng.random() < 0.2}
    if bad_image is None and seed >= SOAK_SEEDS:
        bad_image = bad_image_draw(seed, BAD_IMAGE_FRACTION)
    if bad_image:
        changes.insert(0, with_all_images(changes[0], BAD))
    return Case(
        seed,
        policy,
        start,
        changes,
        float(rng.choice((0, 1, 2, 3))),
        slow,
        p_crash=rng.choice((0.0, 0.3, 0.6)),
        p_change=0.15,
        bad_image=bad_image,
    )


# ---- the harness --------------------------------------------------------------------------
@dataclass
class Floor:
    """The availability floor of the rollout in progress (armed only if it started healthy)."""

    armed: bool = False
    r0: int = 0

    def start(self, view: GroupsView, healthy: bool) -> None:
        self.armed, self.r0 = healthy, view.live


def started_healthy(view: GroupsView, hash_mode: bool) -> bool:
    """Whether a rollout starting now *started healthy* (docs/reliability.md "Definitions").

    Ordinal: every ordinal the leader StatefulSet keeps, ``[0, S)``, has a leader pod that is
    ready and not terminating. A terminating leader below ``S`` is a group being replaced by the
    previous rollout: it is down, exactly as in the pure model of tests/test_ordinal_properties.py
    (an admitted group is not ready; "healthy" = ``states[:S]`` all ready). Leaders at ordinals
    ``>= S`` that are terminating are being scaled away and do not count. Hash: every live
    (non-terminating) group is ready.
    """
    if hash_mode:
        return all(c.state in "Uo" for c in view.cells if c.state != "-" and c.detail != "terminating")
    kept = [c for c in view.cells if int(c.id) < view.replicas]
    return all(c.state in "Uo" and c.detail != "terminating" for c in kept)


@dataclass
class Harness:
    cluster: SimCluster
    desired: dict[str, Any]
    options: ReconcileOptions = field(default_factory=ReconcileOptions)
    floor: Floor = field(default_factory=Floor)
    log: list[str] = field(default_factory=list)
    last: Reconciled | None = None
    reconciles: int = 0
    held_bound: int = 0  # live bound of the previous spec, until the new one has been applied in full

    @classmethod
    def create(
        cls,
        manifest: Mapping[str, Any],
        *,
        seed: int = 0,
        ready: float = 1.0,
        slow: Mapping[str, float] = {},
        nodes: list[dict[str, Any]] = (),
        options: ReconcileOptions = ReconcileOptions(),
        converged: bool = True,
        bad_image: str | None = None,
    ) -> Harness:
        overrides = [Override(group=g, ready=s) for g, s in slow.items()]
        kubelet = KubeletConfig(
            default=Timing(1.0, ready),
            overrides=overrides,
            termination_grace=1.0,
            group_labels=simulator_group_labels(),
        )
        if bad_image:
            from fault_helpers import arm

            arm(kubelet, bad_image)
        h = cls(SimCluster(seed=seed, nodes=nodes, kubelet=kubelet), copy.deepcopy(dict(manifest)), options)
        if converged:
            h.warm_up()
        return h

    WORKLOAD: ClassVar[Any] = LWS  # what the API-generic crash suite (support.crash_suite) reconciles with

    # -- views ----------------------------------------------------------------------------
    @property
    def lws(self) -> LeaderWorkerSet:
        return parse(self.desired)

    @property
    def spec(self) -> LeaderWorkerSet:
        return self.lws

    def snapshot(self):
        """What the next ``up`` observes (Nodes when the cluster has any)."""
        return self.cluster.observe(LWS.scope(self.lws, nodes=bool(self.cluster.store.list("Node"))))

    def view(self) -> GroupsView:
        lws = self.lws
        snap = self.cluster.observe(lws_scope(NS, NAME))
        return read_groups(snap, NAME, lws.replicas, lws.size, revision_key(lws), lws.spec.group_identity == "Hash")

    # -- one `pulumi up` --------------------------------------------------------------------
    def up(self, keep: float = 1.0, run_actions: bool = True) -> tuple[Reconciled, Any, list[str]]:
        """One ``pulumi up``: the product's :func:`~pulumi_lws.core.contract.driver.cycle` with the
        simulated cluster as observer, applier (``keep``) and (``run_actions``) actuator."""
        done = cycle(
            LWS,
            self.lws,
            self.options,
            self.cluster,
            self.cluster if run_actions else None,
            nodes=bool(self.cluster.store.list("Node")),
            apply=lambda c: self.cluster.apply(
                c.reconciled.manifests, stack_id=STACK, keep=keep, dependencies=c.reconciled.dependencies
            ),
        )
        result, applied, executed = done.reconciled, done.applied, list(done.executed)
        self.last, self.reconciles = result, self.reconciles + 1
        complete = keep >= 1.0 and run_actions
        if complete:
            self.held_bound = 0
        self.log.append(
            f"t={self.cluster.clock.now:g} keep={keep:.2f} {result.stage.summary()} "
            f"applied={applied.lines()} actions={executed}"
        )
        return result, applied, executed

    def warm_up(self, rounds: int = 60) -> None:
        self.cluster.kubelet.config.instant = True
        try:
            for _ in range(rounds):
                self.up()
                if self.converged():
                    return
                self.cluster.step(self.cluster.clock.now + 1.0)  # terminations still take their grace period
            raise AssertionError("warm-up did not converge:\n" + "\n".join(self.log[-5:]))
        finally:
            self.cluster.kubelet.config.instant = False
            self.floor.start(self.view(), True)

    def change_spec(self, manifest: Mapping[str, Any]) -> None:
        """A new desired spec: a new rollout starts; it started healthy if every live group was ready."""
        view = self.view()
        old = self.lws
        self.held_bound = max(self.held_bound, old.replicas + old.max_surge())
        self.desired = copy.deepcopy(dict(manifest))
        self.floor.start(view, started_healthy(view, old.spec.group_identity == "Hash"))
        self.log.append(f"t={self.cluster.clock.now:g} spec changed (healthy={self.floor.armed}, R0={view.live})")

    def fault(self) -> None:
        self.floor.armed = False

    def advance(self, seconds: float, tick: float = 1.0) -> None:
        t = self.cluster.clock.now
        end = t + seconds
        while t < end:
            t = min(end, t + tick)
            self.cluster.step(t)
            self.check()

    # -- invariants -------------------------------------------------------------------------
    def violations(self) -> list[str]:
        lws, view = self.lws, self.view()
        r, ms, mu = lws.replicas, lws.max_surge(), lws.max_unavailable()
        out = []
        if view.live > max(r + ms, self.held_bound):
            out.append(
                f"{view.live} live groups > replicas {r} + maxSurge {ms}"
                + (f" (previous spec's bound {self.held_bound} still held)" if self.held_bound else "")
            )
        floor = max(0, min(self.floor.r0, r) - mu)
        if self.floor.armed and view.available < floor:
            out.append(f"{view.available} available < floor {floor} = min(R0 {self.floor.r0}, R {r}) - MU {mu}")
        out += follower_violations(self.cluster, lws)  # also right after a crashed run (dependency-closed apply)
        return out

    def check(self) -> None:
        bad = self.violations()
        if bad:
            cells = "".join(c.state for c in self.view().cells)
            raise AssertionError(f"t={self.cluster.clock.now:g} groups={cells}: {bad}\n" + "\n".join(self.log[-8:]))

    # -- convergence ------------------------------------------------------------------------
    def converged(self) -> bool:
        """Stage complete (or settled behind a user partition), [P_user, R) updated+ready, no extra group."""
        stage = self.last.stage if self.last else None
        if stage is None:
            return False
        settled = stage.blocker is not None and stage.blocker.code == "surge-held-by-partition"
        if not stage.complete and not settled:
            return False
        if stage.blocker is not None and not settled:
            return False
        lws, view = self.lws, self.view()
        p_user = lws.user_partition() if lws.spec.group_identity != "Hash" else 0
        cells = [c for c in view.cells if c.state != "-"]
        if lws.spec.group_identity == "Hash":
            return len(cells) == lws.replicas == view.live and all(c.state == "U" for c in cells)
        n = stage.replicas if settled else lws.replicas  # upstream keeps the surge behind a user partition
        upper = [c for c in cells if int(c.id) >= p_user]
        return (
            len(cells) == n == view.live and all(c.state == "U" for c in upper) and all(c.state in "Uo" for c in cells)
        )


def follower_violations(cluster: SimCluster, lws: LeaderWorkerSet) -> list[str]:
    """Workers never run ahead of their leader (see module docstring)."""
    target = revision_key(lws)
    snap = cluster.observe(lws_scope(NS, NAME))
    out = []
    if lws.spec.group_identity == "Hash":
        pods = {p["metadata"]["uid"]: p for p in snap.list("Pod")}
        for sts in snap.list("StatefulSet"):
            owners = [o for o in sts["metadata"].get("ownerReferences") or [] if o.get("kind") == "Pod"]
            leader = pods.get(owners[0]["uid"]) if owners else None
            if leader is not None and not is_deleting(leader) and _sts_revisions(sts) - {revision_of(leader)}:
                out.append(
                    f"worker {sts['metadata']['name']} on {_sts_revisions(sts)} but leader on {revision_of(leader)}"
                )
        return out
    leader_sts = snap.get("StatefulSet", NAME)
    partition = sts_partition(leader_sts) if leader_sts is not None else 0
    for i in range(partition):
        workers = snap.get("StatefulSet", f"{NAME}-{i}")
        if workers is None or target not in _sts_revisions(workers):
            continue
        leader = snap.get("Pod", f"{NAME}-{i}")
        if leader is None or revision_of(leader) != target:
            out.append(
                f"group {i} below partition {partition}: worker StatefulSet on target {target} "
                f"but leader pod on {revision_of(leader) if leader else 'absent'}"
            )
    return out


def _sts_revisions(sts: Mapping[str, Any]) -> set[str]:
    tmpl = ((sts.get("spec") or {}).get("template") or {}).get("metadata") or {}
    return {
        v
        for v in (
            labels_of(sts).get(L.TEMPLATE_REVISION_HASH),
            (tmpl.get("labels") or {}).get(L.TEMPLATE_REVISION_HASH),
        )
        if v
    }


# ---- what must exist after convergence ------------------------------------------------------
def _lws_revisions(snap) -> set[str]:
    """LeaderWorkerSet ControllerRevisions (the StatefulSet controller's own history is owned by a StatefulSet)."""
    return {
        labels_of(cr).get(L.TEMPLATE_REVISION_HASH)
        for cr in snap.list("ControllerRevision")
        if not any(o.get("kind") == "StatefulSet" for o in cr["metadata"].get("ownerReferences") or [])
    }


def final_state_problems(h: Harness) -> list[str]:
    """No lost groups and no leaked objects once converged (exactly what the final spec needs)."""
    lws = h.lws
    target = revision_key(lws)
    snap = h.cluster.observe(lws_scope(NS, NAME))
    live = lambda kind: [o for o in snap.list(kind) if not is_deleting(o)]  # noqa: E731
    pods, sts = live("Pod"), {s["metadata"]["name"]: s for s in live("StatefulSet")}
    services = {s["metadata"]["name"] for s in live("Service")}
    problems = []
    if lws.spec.group_identity == "Hash":
        leaders = [
            p for p in pods if p["metadata"].get("generateName")
        ]  # ReplicaSet pods; workers are StatefulSet pods
        keys = {labels_of(p).get(L.GROUP_KEY, "")[:8] for p in leaders}
        want_sts = {f"{NAME}-{k}" for k in keys} if lws.size > 1 else set()
        if len(leaders) != lws.replicas or any(revision_of(p) != target for p in leaders):
            problems.append(
                f"{len(leaders)} leaders (want {lws.replicas}, all on {target}): "
                f"{sorted((p['metadata']['name'], revision_of(p)) for p in leaders)}"
            )
        if set(sts) != want_sts:
            problems.append(f"worker StatefulSets {sorted(sts)} != {sorted(want_sts)}")
        want_svc = {NAME} | {f"{NAME}-{k}" for k in keys}
        if services != want_svc:
            problems.append(f"Services {sorted(services)} != {sorted(want_svc)}")
        if len(pods) != lws.replicas * lws.size:
            problems.append(f"{len(pods)} pods != replicas {lws.replicas} x size {lws.size}")
    else:
        p_user = lws.user_partition()
        stage = h.last.stage if h.last else None
        held = stage is not None and stage.blocker is not None and stage.blocker.code == "surge-held-by-partition"
        n = stage.replicas if held else lws.replicas  # upstream keeps the surge while a user partition holds old groups
        leaders = {p["metadata"]["name"] for p in pods if p["metadata"]["name"].count("-") == 1}
        want_leaders = {f"{NAME}-{i}" for i in range(n)}
        if leaders != want_leaders:
            problems.append(f"leader pods {sorted(leaders)} != {sorted(want_leaders)}")
        sizes = {
            i: int(
                (snap.get("Pod", f"{NAME}-{i}") or {}).get("metadata", {}).get("annotations", {}).get(L.SIZE, lws.size)
            )
            for i in range(n)
        }
        want_sts = {NAME} | {f"{NAME}-{i}" for i, s in sizes.items() if s > 1}
        if set(sts) != want_sts:
            problems.append(f"StatefulSets {sorted(sts)} != {sorted(want_sts)}")
        stale = [i for i in range(p_user, n) if revision_of(snap.get("Pod", f"{NAME}-{i}")) != target]
        if stale:
            problems.append(f"groups {stale} not on target {target}")
        if services != {NAME}:
            problems.append(f"Services {sorted(services)} != ['{NAME}']")
        if len(pods) != sum(sizes.values()):
            problems.append(f"{len(pods)} pods != {sum(sizes.values())} (sum of group sizes)")
    used = {target} | {revision_of(p) for p in pods}
    if _lws_revisions(snap) - used:
        problems.append(f"leaked ControllerRevisions for {sorted(_lws_revisions(snap) - used)} (used: {sorted(used)})")
    pvcs = h.cluster.list("PersistentVolumeClaim", NS)
    if pvcs and not lws.spec.leader_worker_template.volume_claim_templates:
        problems.append(f"leaked PVCs {[p['metadata']['name'] for p in pvcs]}")
    return problems
