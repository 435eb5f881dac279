"""The converged fleet of one workload (LeaderWorkerSet, ModelServing, ...): every object a
running cluster ends up declaring. The workload API is the manifest's, from the registry.

:func:`steady_state` runs the pure engine (the component's observe -> reconcile -> apply -> act)
on an embedded :class:`~pulumi_lws.sim.cluster.simcluster.SimCluster` whose kubelet is instant (every
scheduled pod is Running and Ready at once), round after round, until the set has converged by
the runner's own criterion (:meth:`Runner.warm_up`: stage complete, no blocker, exactly
``replicas`` groups all updated and ready). It then reconciles the converged cluster once more
*without applying* (a synthesised last round that wrote nothing is that reconcile already:
``Converged.fixed_point``): those manifests are what the next ``pulumi up`` declares, with the values a
running cluster gives them (worker StatefulSets of every group, exclusive-placement node
selectors read from the leaders' nodes, gang objects).

Where the pool has no Node, the rounds are synthesised instead of simulated
(:func:`pulumi_lws.sim.driver.synth.converge`: the same rounds through the Workload contract on a
:class:`~pulumi_lws.sim.driver.synth.SynthCluster` that writes down what the instant kubelet's
settle leaves, object for object, uids included); the result is the simulator's
(tests/sim/driver/test_synth.py). It falls back to the simulator wherever the synthesiser
declines (a pool of Nodes, the capacity check, a Deployment or another controller it does not
emulate, claims, gates, an update between rounds) — ``synthesise=False`` always simulates.

Node pools (:func:`node_pool`): ``nodes`` given -> :func:`pulumi_lws.sim.driver.quick.pool` (the same
builder as ``simulate --from/--to``); no ``nodes`` and a spec whose scope reads no Nodes
(``workload.scope(spec).nodes`` False: no placement decision needs them) -> one unbounded node;
no ``nodes`` and a spec that needs Nodes -> the pool the API's placement facts imply
(``Workload.placement(spec)``, :class:`~pulumi_lws.core.contract.simulation.Placement`; e.g. a
LeaderWorkerSet's exclusive topology: :func:`default_pool`, one topology domain per group, each
node big enough for a whole group; no placement or no exclusive key: one unbounded node). Every
pool node of an API with placement facts also carries the exclusive-topology key (one domain per
zone: ``domain-a``, ``domain-b``, ...) when it lacks it; every pool node carries the labels the
pod templates' ``nodeSelector`` asks for, so placement can always succeed.

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

from pulumi_lws.core.contract.driver import cycle
from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.core.contract.simulation import Placement
from pulumi_lws.core.contract.stage import Blocker
from pulumi_lws.core.contract.workload import Reconciled
from pulumi_lws.sim.cluster.scheduler import pod_requests, quantity
from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.sim.driver import synth
from pulumi_lws.sim.driver.engines import EngineStep, PureEngine
from pulumi_lws.sim.driver.quick import OPTIONS, ZONE_LABEL, _pool_errors, pool
from pulumi_lws.sim.driver.runner import Runner
from pulumi_lws.sim.driver.scenario import Scenario
from pulumi_lws.workloads import Workload, modelled

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


def steady_state(
    manifest: Mapping[str, Any],
    *,
    namespace: str | None = None,
    nodes: int | None = None,
    gpus_per_node: float | None = None,
    zones: int | None = None,
    gang_provider: str | None = None,
    synthesise: bool = True,
) -> Expansion:
    """Converge ``manifest`` (any workload the registry models) on an embedded cluster and
    reconcile it once more. ``synthesise`` False: always step the simulator (the reference the
    synthesised path is tested against).

    Raises :class:`SpecError` for an invalid manifest or inconsistent pool options (kind
    ``Options``, paths are the CLI flags). A set that cannot converge (too few topology domains,
    pods that fit no node) is not an error: ``converged`` is False and ``blocker`` says why.
    """
    errors = _pool_errors(nodes, gpus_per_node, zones, None, None)
    if errors:
        raise SpecError(OPTIONS, None, errors)
    doc = copy.deepcopy(dict(manifest))
    workload = modelled(doc)
    spec = workload.parse(doc, namespace=namespace)
    ns, name = workload.identity(spec)
    chosen = node_pool(spec, nodes, gpus_per_node, zones, workload=workload)
    choices = {"update_order": None, "gang_provider": gang_provider}  # the engine's (PureEngine)
    done = (
        synth.converge(workload, workload.parse(doc, namespace=ns), workload.options(**choices), check_capacity=False)
        if synthesise and not chosen.nodes
        else None
    )
    if done is not None:
        # a last round that wrote nothing already reconciled what the cluster holds now
        final = (
            done.fixed_point
            or cycle(
                workload,
                spec,
                workload.options(**choices),
                done.cluster,
                nodes=False,
                check_capacity=False,
            ).reconciled
        )
        return Expansion(final, done.reconciles, True, chosen)
    scenario = Scenario(
        name=name,
        engine="pure",
        namespace=ns,
        manifest=doc,
        nodes=chosen.nodes,
        start="converged",
        gang_provider=gang_provider,
    )
    # the converged fleet, not a rollout: the opt-in capacity check (a manifest annotation) is off
    engine = _CountingEngine(ns, None, gang_provider, check_capacity=False)
    runner = Runner(scenario, engine)
    runner.freeze_between_reconciles()
    try:
        runner.warm_up()
        converged = True
    except RuntimeError:  # warm-up's "did not converge": the final reconcile names the blocker
        converged = False
    finally:
        runner.close()
    final = cycle(
        workload,
        spec,
        workload.options(gang_provider=gang_provider),
        runner.cluster,
        nodes=bool(chosen.nodes),
        check_capacity=False,
    ).reconciled  # read only: the next up's objects, not applied
    return Expansion(final, engine.steps, converged, chosen)


def node_pool(
    spec: Any, nodes: int | None, gpus_per_node: float | None, zones: int | None, *, workload: Workload | None = None
) -> Pool:
    """The pool ``steady_state`` runs on (see the module docstring). ``workload``: the spec's API
    (default: looked up by ``spec.kind``)."""
    from pulumi_lws.workloads import workload_for

    workload = workload or workload_for(spec.kind)
    placement = workload.placement(spec)
    if nodes:
        out = pool(nodes, gpus_per_node, zones or 1)
        what = f"{nodes} node{'s' if nodes > 1 else ''}" + (f" in {zones} zones" if zones and zones > 1 else "")
        if placement is not None:
            return Pool(_labelled(placement, out), what)
        return Pool(_selected(workload, spec, out), what)
    if not workload.scope(spec).nodes or placement is None or placement.topology_key is None:
        return Pool([], "1 unbounded node")
    return default_pool(placement, placement.topology_key)


def _selected(workload: Workload, spec: Any, nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Give every pool node the labels the rendered pod templates' ``nodeSelector`` asks for
    (read from the first reconcile's objects: generic over APIs)."""
    from pulumi_lws.core.contract.snapshot import EMPTY

    wanted: dict[str, str] = {}
    for m in workload.reconcile(spec, EMPTY, workload.options()).manifests:
        template = ((m.get("spec") or {}).get("template") or {}) if isinstance(m.get("spec"), Mapping) else {}
        for k, v in (
            ((template.get("spec") or {}) if isinstance(template, Mapping) else {}).get("nodeSelector") or {}
        ).items():
            wanted.setdefault(str(k), str(v))
    for node in nodes:
        for k, v in wanted.items():
            node["labels"].setdefault(k, v)
    return nodes


def default_pool(placement: Placement, key: str) -> Pool:
    """One domain of ``key`` per group (at least one); per domain ``placement.nodes_per_domain``
    nodes (one per subgroup when the API says so); each node fits a whole group."""
    domains = max(placement.groups, 1)
    sub_key = placement.subgroup_key
    out = pool(domains * placement.nodes_per_domain, zones=domains)
    need = _group_requests(placement)
    for node in out:
        cap = node["capacity"]
        for res, amount in need.items():
            have = _base_units(cap.get(res, 0))
            if amount > have:
                cap[res] = math.ceil(amount)
        if sub_key:
            node["labels"].setdefault(sub_key, node["name"])
    what = (
        f"{len(out)} node{'s' if len(out) > 1 else ''} in {domains} domain{'s' if domains > 1 else ''} of {key}, "
        "assumed: one domain per group, each node fits a whole group; choose with --nodes/--zones"
    )
    return Pool(_labelled(placement, out), what, assumed=True)


def _labelled(placement: Placement, nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Add the exclusive-topology key (domain per zone) and the templates' nodeSelector labels."""
    key = placement.topology_key
    wanted: dict[str, str] = {}
    for template, _count in placement.group_pods:
        for k, v in ((template.get("spec") or {}).get("nodeSelector") or {}).items():
            wanted.setdefault(str(k), str(v))
    for node in nodes:
        labels = node["labels"]
        if key is not None and key not in labels:
            labels[key] = DOMAIN_PREFIX + str(labels[ZONE_LABEL]).removeprefix("zone-")
        for k, v in wanted.items():
            labels.setdefault(k, v)
    return nodes


def _group_requests(placement: Placement) -> Counter:
    """Requests of one whole group: every pod of ``placement.group_pods`` (base units)."""
    total: Counter = Counter()
    for template, count in placement.group_pods:
        for res, amount in pod_requests({"spec": template.get("spec") or {}}).items():
            total[res] += amount * count
    return total


def _base_units(value: Any) -> float:
    try:
        return quantity(value)
    except ValueError:
        return 0.0
