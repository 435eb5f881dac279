"""The warm-up of ``start: converged`` seeded, not stepped: the synthesised converged cluster
(:func:`pulumi_lws.sim.driver.synth.converge`) loaded into the run's :class:`SimCluster`, and the
warm-up's rows replayed from the synthesised rounds, so the run that follows cannot tell it from
the stepped warm-up (:meth:`Runner.warm_up <pulumi_lws.sim.driver.runner.Runner.warm_up>`).

What a stepped warm-up leaves, and how each piece is reproduced here:

* the stored objects: :attr:`SynthCluster.created <pulumi_lws.sim.driver.synth.SynthCluster.created>`
  stored through ``Store.create`` in creation order, so every uid, creation time, owner index
  and the per-kind order are the store's own (and a uid that differs from the synthesised one
  is a bug: it raises); the simulator's private bookkeeping on them: ``_sim_created_at`` (t=0,
  set by ``create``) and every pod's instant-kubelet state ``_sim_kubelet`` (admitted, Running
  and Ready at t=0 with timing 0/0, as ``Kubelet._admit`` records it under ``instant``);
* the counters that name things: uids (by the creates), cluster IPs (``Store._ip_counter``)
  and pod IPs (``Kubelet._ip``);
* Pulumi's view of the stack (``Applier.state`` in first-registration order and
  ``Applier.dependencies`` as last applied) and the applier's skip of manifests it found
  unchanged on an object's version (``unchanged_at``, for the objects not written since);
* the StatefulSet controller: every set's revision (an internal history,
  ``statefulSetRevisions: internal``, as ``Rev(name, 1, template)``: the controller's own first
  revision), its template hash and its skip (``mark_quiet``: its next sync would write nothing,
  the cluster is converged); the kubelet has no pod left to look at (``Store.pods_written`` empty);
* every object's observed copy (``Store.observed``): the synthesised object at the store's
  version — it shares nothing with the stored copy, only read-only parts with the reconcile's
  manifests, as the synthesised snapshots of ``plan`` do;
* the Runner's own state: every round's stage and row (``Runner._replay_warm_up``: the budgets
  armed, the hash groups' first-seen order), then cleared as the stepped warm-up clears them.

Not reproduced, because they only save work (each cache's own docstring says so;
``sim/cluster/persist.py`` rebuilds none of them on load either): the store's owner epochs and
the kubelet's quiet set. ``resourceVersion`` differs (the stepped
warm-up counts every intermediate write, the seed one write per object): only compared for
equality, by caches, never read by a planner.

Where it applies (:func:`why_stepped` names the first reason it does not, and the stepped warm-up
runs): the plain pure engine (the Pulumi engine runs a program the synthesiser cannot replay; a
subclass may count its steps), an empty cluster at t=0 (no Node, no scenario object), no image
fault, no crash injection (``applyKeep`` < 1 draws from the seeded RNG), and what
:func:`~pulumi_lws.sim.driver.synth.converge` itself accepts.
tests/sim/driver/test_seeded_warm_up.py runs both warm-ups and compares everything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.sim.cluster.kubelet import Timing
from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.sim.cluster.statefulset import Rev
from pulumi_lws.sim.driver import synth
from pulumi_lws.sim.driver.engines import PureEngine

if TYPE_CHECKING:
    from pulumi_lws.sim.driver.runner import Runner


def why_stepped(runner: Runner) -> str | None:
    """Why ``runner``'s warm-up cannot be seeded (module docstring), or None."""
    cluster, sc = runner.cluster, runner.sc
    if type(runner.engine) is not PureEngine:
        return "not the plain pure engine"
    if runner.desired is None:
        return "no manifest"
    if len(cluster.store) or cluster.store.version or cluster.clock.now:
        return "the cluster is not empty at t=0 (Nodes, scenario objects)"
    kubelet = cluster.kubelet.config
    if kubelet.fail_images or kubelet.pull_errors:
        return "image faults"
    if sc.apply_keep < 1.0:
        return "crash injection"
    return None


def seeded_warm_up(runner: Runner) -> bool:
    """The warm-up seeded into ``runner`` where it applies (True), else nothing done (False)."""
    if why_stepped(runner) is not None:
        return False
    engine = runner.engine
    assert isinstance(engine, PureEngine)
    workload = runner.spec.workload
    try:
        spec = workload.parse(dict(runner.desired or {}), namespace=engine.namespace)  # as PureEngine.step
    except SpecError:
        return False  # the stepped warm-up's first reconcile raises it
    rounds: list[tuple[Any, Any]] = []
    done = synth.converge(
        workload,
        spec,
        workload.options(**engine.choices),
        check_capacity=engine.check_capacity,
        history_objects=runner.cluster.statefulsets.history_objects,
        on_round=lambda stage, view: rounds.append((stage, view)),
    )
    if done is None:
        return False
    namespace, name = workload.identity(spec)
    load(runner.cluster, done.cluster, stack_id=f"{namespace}/{name}")  # PureEngine's stack
    runner._replay_warm_up(rounds)
    return True


def load(cluster: SimCluster, synthesised: synth.SynthCluster, *, stack_id: str) -> None:
    """Store ``synthesised`` in the empty ``cluster`` as the stepped warm-up leaves it (module docstring)."""
    store, now = cluster.store, cluster.clock.now
    observed = store._observed
    for obj in synthesised.created:
        stored = store.create(obj)  # a deep copy; uid, generation, creationTimestamp re-set alike
        m = stored["metadata"]
        if m["uid"] != obj["metadata"]["uid"]:
            raise AssertionError(f"seeded {obj['kind']} {m['name']}: uid differs from the synthesised")
        # its observed copy (Store.observed): the synthesised object, now the store's version; it
        # shares nothing with the stored copy, only read-only parts with the reconcile's manifests
        observed[m["uid"]] = (m["resourceVersion"], {**obj, "metadata": {**obj["metadata"], **_rv(m)}})
        if stored["kind"] == "Pod":  # Kubelet._admit under ``instant``, then Running and Ready at once
            stored["_sim_kubelet"] = {**cluster.kubelet.admission_times(Timing(0.0, 0.0)), "ready_since": now}
    store._ip_counter = synthesised.cluster_ips
    cluster.kubelet._ip = synthesised.pod_ips
    cluster.applier.state[stack_id] = dict(synthesised.registered)
    cluster.applier.dependencies[stack_id] = dict(synthesised.dependencies)
    # the applier's skip of a manifest found unchanged on an object's version: for each object
    # not written since the synthesiser's last apply found its manifest unchanged on it
    unchanged = cluster.applier.unchanged_at.setdefault(stack_id, {})
    for key, (manifest, live, version) in synthesised.unchanged.items():
        if live["metadata"]["resourceVersion"] == version:
            unchanged[key] = (manifest, store.stored(live["metadata"]["uid"])["metadata"]["resourceVersion"])
    store.pods_written.clear()  # the kubelet has seen every pod: none written since its last pass
    _settled_statefulsets(cluster, synthesised.revisions)


def _settled_statefulsets(cluster: SimCluster, revisions: dict[str, str]) -> None:
    """The StatefulSet controller as its last pass of the warm-up leaves it: every set's revision
    (kept internally unless stored as a ControllerRevision: ``Rev(name, 1, template)``, the
    controller's own first revision), its template hash for its generation, and every set quiet
    (its next sync would write nothing: the cluster is converged) until one of its inputs changes."""
    controller, store = cluster.statefulsets, cluster.store
    for sts in store.list("StatefulSet"):
        m, spec = sts["metadata"], sts["spec"]
        uid, name = m["uid"], revisions[m["uid"]]
        controller._hashes[uid] = (m["generation"], name[len(m["name"]) + 1 :])
        if not controller.history_objects:
            # the stored template, shared as _ensure_revision shares it (never written in place)
            controller._internal[uid] = [Rev(name, 1, spec.get("template") or {})]
        controller.mark_quiet(sts)


def _rv(metadata: dict[str, Any]) -> dict[str, Any]:
    return {"resourceVersion": metadata["resourceVersion"]}
