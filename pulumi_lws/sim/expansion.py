"""The converged fleet of one workload (LeaderWorkerSet, ModelServing, ...): every object a
running cluster ends up declaring. The workload API is the manifest's, from the registry.

:func:`steady_state` runs the pure engine (the component's observe -> reconcile -> apply -> act)
on an embedded :class:`~pulumi_lws.sim.cluster.SimCluster` whose kubelet is instant (every
scheduled pod is Running and Ready at once), round after round, until the set has converged by
the runner's own criterion (:meth:`Runner.warm_up`: stage complete, no blocker, exactly
``replicas`` groups all updated and ready). It then reconciles the converged cluster once more
*without applying*: those manifests are what the next ``pulumi up`` declares, with the values a
running cluster gives them (worker StatefulSets of every group, exclusive-placement node
selectors read from the leaders' nodes, gang objects).

Node pools (:func:`node_pool`): ``nodes`` given -> :func:`pulumi_lws.sim.quick.pool` (the same
builder as ``simulate --from/--to``); no ``nodes`` and a spec whose scope reads no Nodes
(``workload.scope(spec).nodes`` False: no placement decision needs them) -> one unbounded node;
no ``nodes`` and a spec that needs Nodes -> the API's assumed pool (:data:`ASSUMED_POOLS`;
LeaderWorkerSet exclusive topology: :func:`default_pool`, one topology domain per group, each
node big enough for a whole group). Every pool node of a LeaderWorkerSet also carries the
exclusive-topology key (one domain per zone: ``domain-a``, ``domain-b``, ...) when it lacks it;
every pool node carries the labels the pod templates' ``nodeSelector`` asks for, so placement
can always succeed.

Invariants: no file, no network; the manifest passed in is not modified; when ``converged`` the
result is a fixed point (its stage is complete, without blocker or actions); otherwise ``blocker``
says why the last reconcile could not go on.
"""
from __future__ import annotations

import copy
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pulumi_lws.core.driver import cycle
from pulumi_lws.core.errors import SpecError
from pulumi_lws.core.stage import Blocker
from pulumi_lws.core.workload import Reconciled
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.rollout.placement import exclusive_topology
from pulumi_lws.sim.cluster import SimCluster
from pulumi_lws.sim.engines import EngineStep, PureEngine
from pulumi_lws.sim.quick import OPTIONS, ZONE_LABEL, _pool_errors, pool
from pulumi_lws.sim.runner import Runner
from pulumi_lws.sim.scenario import Scenario
from pulumi_lws.sim.scheduler import pod_requests, quantity
from pulumi_lws.workloads import Workload, workload_of

DOMAIN_PREFIX = "domain-"


@dataclass(frozen=True)
class Pool:
    """Nodes in the scenario's node format, and how they were chosen (for the header line)."""

    nodes: list[dict[str, Any]]
    description: str
    assumed: bool = False


@dataclass(frozen=True)
class Expansion:
    """The final reconcile of a converged (or stuck) set and how it was reached."""

    reconciled: Reconciled
    reconciles: int
    converged: bool
    pool: Pool

    @property
    def blocker(self) -> Blocker | None:
        return None if self.converged else self.reconciled.stage.blocker


class _CountingEngine(PureEngine):
    """The pure engine, counting its reconciles."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.steps = 0

    def step(self, cluster: SimCluster, manifest: Mapping[str, Any] | None, *, keep: float = 1.0) -> EngineStep:
        self.steps += 1
        return super().step(cluster, manifest, keep=keep)


def steady_state(manifest: Mapping[str, Any], *, namespace: str | None = None, nodes: int | None = None,
                 gpus_per_node: float | None = None, zones: int | None = None,
                 gang_provider: str | None = None) -> Expansion:
    """Converge ``manifest`` (any workload the registry models) on an embedded cluster and
    reconcile it once more.

    Raises :class:`SpecError` for an invalid manifest or inconsistent pool options (kind
    ``Options``, paths are the CLI flags). A set that cannot converge (too few topology domains,
    pods that fit no node) is not an error: ``converged`` is False and ``blocker`` says why.
    """
    errors = _pool_errors(nodes, gpus_per_node, zones, None, None)
    if errors:
        raise SpecError(OPTIONS, None, errors)
    doc = copy.deepcopy(dict(manifest))
    workload = _workload(doc)
    spec = workload.parse(doc, namespace=namespace)
    ns, name = workload.identity(spec)
    chosen = node_pool(spec, nodes, gpus_per_node, zones, workload=workload)
    scenario = Scenario(name=name, engine="pure", namespace=ns, manifest=doc, nodes=chosen.nodes,
                        start="converged", gang_provider=gang_provider)
    engine = _CountingEngine(ns, None, gang_provider)
    runner = Runner(scenario, engine)
    try:
        runner.warm_up()
        converged = True
    except RuntimeError:  # warm-up's "did not converge": the final reconcile names the blocker
        converged = False
    final = cycle(workload, spec, workload.options(gang_provider=gang_provider), runner.cluster,
                  nodes=bool(chosen.nodes)).reconciled  # read only: the next up's objects, not applied
    return Expansion(final, engine.steps, converged, chosen)


def _workload(doc: Mapping[str, Any]) -> Workload:
    workload = workload_of(doc)
    if workload is None:
        from pulumi_lws.core.errors import FieldError
        from pulumi_lws.workloads import registered

        raise SpecError("manifest", None, [FieldError("kind", "not a workload this project models (known: "
                                                              f"{', '.join(sorted(registered()))})", doc.get("kind"))])
    return workload


def node_pool(spec: Any, nodes: int | None, gpus_per_node: float | None, zones: int | None, *,
              workload: Workload | None = None) -> Pool:
    """The pool ``steady_state`` runs on (see the module docstring). ``workload``: the spec's API
    (default: looked up by ``spec.kind``)."""
    from pulumi_lws.workloads import workload_for

    workload = workload or workload_for(spec.kind)
    assumed = next((build for capability, build in ASSUMED_POOLS.items() if hasattr(workload, capability)), None)
    if nodes:
        out = pool(nodes, gpus_per_node, zones or 1)
        what = f"{nodes} node{'s' if nodes > 1 else ''}" + (f" in {zones} zones" if zones and zones > 1 else "")
        if assumed is not None:
            return Pool(_labelled(spec, out, exclusive_topology(spec)), what)
        return Pool(_selected(workload, spec, out), what)
    if not workload.scope(spec).nodes or assumed is None:
        return Pool([], "1 unbounded node")
    return assumed(spec)


def _selected(workload: Workload, spec: Any, nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Give every pool node the labels the rendered pod templates' ``nodeSelector`` asks for
    (read from the first reconcile's objects: generic over APIs)."""
    from pulumi_lws.core.snapshot import EMPTY

    wanted: dict[str, str] = {}
    for m in workload.reconcile(spec, EMPTY, workload.options()).manifests:
        template = ((m.get("spec") or {}).get("template") or {}) if isinstance(m.get("spec"), Mapping) else {}
        for k, v in (((template.get("spec") or {}) if isinstance(template, Mapping) else {}).get("nodeSelector") or {}).items():
            wanted.setdefault(str(k), str(v))
    for node in nodes:
        for k, v in wanted.items():
            node["labels"].setdefault(k, v)
    return nodes


def _lws_assumed_pool(lws: LeaderWorkerSet) -> Pool:
    key = exclusive_topology(lws)
    return Pool([], "1 unbounded node") if key is None else default_pool(lws, key)


def default_pool(lws: LeaderWorkerSet, key: str) -> Pool:
    """One domain of ``key`` per group (at least one); per domain one node per subgroup when the
    subgroup-exclusive annotation is set, else one node; each node fits a whole group."""
    domains = max(lws.replicas, 1)
    sub_key = lws.metadata.annotations.get(L.SUBGROUP_EXCLUSIVE_TOPOLOGY)
    policy = lws.spec.leader_worker_template.sub_group_policy
    per_domain = math.ceil(lws.size / policy.sub_group_size) if sub_key and policy and policy.sub_group_size else 1
    out = pool(domains * per_domain, zones=domains)
    need = _group_requests(lws)
    for node in out:
        cap = node["capacity"]
        for res, amount in need.items():
            have = _base_units(cap.get(res, 0))
            if amount > have:
                cap[res] = math.ceil(amount)
        if sub_key:
            node["labels"].setdefault(sub_key, node["name"])
    what = (f"{len(out)} node{'s' if len(out) > 1 else ''} in {domains} domain{'s' if domains > 1 else ''} of {key}, "
            "assumed: one domain per group, each node fits a whole group; choose with --nodes/--zones")
    return Pool(_labelled(lws, out, key), what, assumed=True)


def _labelled(lws: LeaderWorkerSet, nodes: list[dict[str, Any]], key: str | None) -> list[dict[str, Any]]:
    """Add the exclusive-topology key (domain per zone) and the templates' nodeSelector labels."""
    wanted: dict[str, str] = {}
    for template in _templates(lws):
        for k, v in ((template.get("spec") or {}).get("nodeSelector") or {}).items():
            wanted.setdefault(str(k), str(v))
    for node in nodes:
        labels = node["labels"]
        if key is not None and key not in labels:
            labels[key] = DOMAIN_PREFIX + str(labels[ZONE_LABEL]).removeprefix("zone-")
        for k, v in wanted.items():
            labels.setdefault(k, v)
    return nodes


def _templates(lws: LeaderWorkerSet) -> list[Mapping[str, Any]]:
    lwt = lws.spec.leader_worker_template
    return [lwt.leader_pod_template(), lwt.worker_template]


def _group_requests(lws: LeaderWorkerSet) -> Counter:
    """Requests of one whole group: the leader plus ``size - 1`` workers (base units)."""
    leader, worker = (pod_requests({"spec": t.get("spec") or {}}) for t in _templates(lws))
    total = Counter(leader)
    for res, amount in worker.items():
        total[res] += amount * (lws.size - 1)
    return total


def _base_units(value: Any) -> float:
    try:
        return quantity(value)
    except ValueError:
        return 0.0


#: optional Workload capability -> the pool assumed for a spec that needs Nodes when none are given
#: (``exclusive_topology``: one domain per group; APIs without one run on one unbounded node).
ASSUMED_POOLS: dict[str, Any] = {"exclusive_topology": _lws_assumed_pool}
