"""Apply order (``Reconciled.dependencies``) end to end: rules, component ``depends_on``, simulator.

* the rules (``reconcile.manifest_dependencies``): Ordinal worker StatefulSets after the leader
  StatefulSet; workloads after the gang objects their pods name, PodGroups after their Workload;
  workloads after their Service and ControllerRevision; Hash workers NOT after the Deployment;
  every ref is a declared manifest and every dependency precedes its dependents;
* the component registers exactly those as ``depends_on`` (read back from the mock engine's
  registrations: their dependency URNs);
* the simulator's partial apply never applies a dependent without its dependencies, and deletes
  only after a run whose upserts all happened, dependents first;
* the planner: below the partition a group follows its leader pod's revision.
"""

from __future__ import annotations

import copy
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.fixtures_ordinal import catalog_for, make_lws, snapshot_from_chars, worker_sts
from support.reliability_helpers import NAME, NS, STACK, Harness, lws_manifest, parse

from pulumi_lws.core.contract.dependencies import check_dependency_order, ref_of
from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.lws.reconcile import reconcile
from pulumi_lws.lws.revision import revision_key
from pulumi_lws.lws.rollout.ordinal.groups import group_revisions, observe_ordinal_groups
from pulumi_lws.sim.cluster.apply import ApplyResult
from pulumi_lws.sim.cluster.simcluster import SimCluster

LEADER = ("StatefulSet", NAME)


def _reconciled(manifest: dict, snapshot: Snapshot = Snapshot.of([])):
    return reconcile(parse(manifest), snapshot)


def _with(manifest: dict, **spec) -> dict:
    out = copy.deepcopy(manifest)
    out["spec"].update(spec)
    return out


def _workers(result) -> list[tuple[str, str]]:
    return [ref_of(m) for m in result.manifests if m["kind"] == "StatefulSet" and ref_of(m) != LEADER]


# ---- the rules ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "scheduling", [None, {}, {"replica": {"leader": {}, "worker": {}}}], ids=["no-gang", "replica-gang", "role-gang"]
)
def test_ordinal_workers_follow_the_leader_statefulset_and_their_gang(scheduling):
    manifest = lws_manifest(replicas=3, size=2, image="img:1")
    if scheduling is not None:
        manifest["spec"]["scheduling"] = scheduling
    result = _reconciled(manifest)
    deps = result.dependencies
    declared = {ref_of(m): m for m in result.manifests}
    check_dependency_order(result.manifests, deps)
    assert all(ref in declared and set(ds) <= set(declared) for ref, ds in deps.items())
    assert len(_workers(result)) == 3
    for worker in _workers(result):
        assert LEADER in deps[worker]
        assert ("Service", NAME) in deps[worker]
    for ref, m in declared.items():
        template = (m.get("spec") or {}).get("template") or {}
        group = ((template.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
        if group:
            assert ("PodGroup", group) in deps[ref] and ("Workload", NAME) in deps[ref]
        if m["kind"] == "PodGroup":
            assert deps[ref] == (("Workload", NAME),)
    assert LEADER not in deps[LEADER] and not any(r[0] == "StatefulSet" for r in deps[LEADER])
    target_cr = next(r for r, m in declared.items() if m["kind"] == "ControllerRevision")
    assert target_cr in deps[LEADER]


def test_unique_per_replica_workers_follow_their_group_service():
    manifest = lws_manifest(replicas=2, size=2, image="img:1")
    manifest["spec"]["networkConfig"] = {"subdomainPolicy": "UniquePerReplica"}
    result = _reconciled(manifest)
    for i in range(2):
        assert ("Service", f"{NAME}-{i}") in result.dependencies[("StatefulSet", f"{NAME}-{i}")]


def test_hash_workers_do_not_depend_on_the_deployment():
    """Hash workers are rendered on their observed leader pod's revision, never the Deployment's."""
    h = Harness.create(lws_manifest(replicas=2, size=2, image="img:1", hash_mode=True))
    result, _, _ = h.up()
    workers = [ref_of(m) for m in result.manifests if m["kind"] == "StatefulSet"]
    assert workers, "converged Hash LWS declares worker StatefulSets"
    for worker in workers:
        assert ("Deployment", NAME) not in result.dependencies.get(worker, ())
    assert ("Deployment", NAME) in result.dependencies


def test_dependencies_out_of_order_are_rejected():
    result = _reconciled(lws_manifest(replicas=1, size=2, image="img:1"))
    with pytest.raises(ValueError, match="declared before its dependencies"):
        check_dependency_order(tuple(reversed(result.manifests)), result.dependencies)


# ---- the component: depends_on as registered ---------------------------------------------------


def test_component_registers_depends_on_from_the_dependencies():
    """Under the mock engine, each child's registration carries exactly the declared dependencies
    (dependency URNs of the RegisterResource request, mapped back to manifests)."""
    from pulumi_lws.components.leaderworkerset import LeaderWorkerSet as Component
    from pulumi_lws.sim.driver.pulumi_engine import run_program

    manifest = lws_manifest(replicas=3, size=2, image="img:1")
    manifest["spec"]["scheduling"] = {}
    cluster = SimCluster()
    result = run_program(lambda: Component("c", {"manifest": manifest}), cluster, cluster)
    expected = _reconciled(manifest).dependencies
    got = {(k[0], k[2]): {(d[0], d[2]) for d in ds} for k, ds in result.dependencies.items()}
    assert got == {k: set(ds) for k, ds in expected.items()}
    workers = [("StatefulSet", f"{NAME}-{i}") for i in range(3)]
    assert all(LEADER in got[w] for w in workers)
    gang = {ref_of(m) for m in result.manifests if m["kind"] in ("PodGroup", "Workload")}
    assert all(got[w] & gang for w in workers)
    assert [ref_of(m) for m in result.manifests] == [ref_of(m) for m in _reconciled(manifest).manifests]


# ---- the simulator: partial applies are closed under the dependencies -------------------------


def _applied(res: ApplyResult) -> set[str]:
    return {label.split(" ")[0] for label in res.created + res.updated + res.unchanged + res.replaced}


def _configmap(name: str, value: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": NS}, "data": {"v": value}}


@st.composite
def _dag(draw, prefix: str):
    n = draw(st.integers(2, 10))
    names = [f"{prefix}{i}" for i in range(n)]
    deps = {}
    for i in range(1, n):
        earlier = draw(st.sets(st.integers(0, i - 1), max_size=3))
        if earlier:
            deps[("ConfigMap", names[i])] = tuple(("ConfigMap", names[j]) for j in sorted(earlier))
    return names, deps


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    old=_dag("a"),
    new=_dag("b"),
    keep=st.floats(0.0, 1.0),
    seed=st.integers(0, 10_000),
    shuffle=st.randoms(use_true_random=False),
    shared=st.integers(0, 4),
)
def test_partial_apply_never_applies_a_dependent_without_its_dependencies(old, new, keep, seed, shuffle, shared):
    cluster = SimCluster(seed=seed)
    old_names, old_deps = old
    new_names, new_deps = new
    new_names = old_names[:shared] + new_names  # some objects stay (updated), the rest of the old are removed
    new_deps = {**{k: v for k, v in old_deps.items() if k[1] in old_names[:shared]}, **new_deps}
    cluster.apply([_configmap(n, "1") for n in old_names], stack_id="s", dependencies=old_deps)
    manifests = [_configmap(n, "2") for n in new_names]
    shuffle.shuffle(manifests)  # registration order need not be topological: the applier sorts
    res = cluster.apply(manifests, stack_id="s", keep=keep, dependencies=new_deps)

    applied = _applied(res)
    for ref, deps in new_deps.items():
        if f"ConfigMap/{ref[1]}" in applied:
            assert {f"ConfigMap/{d[1]}" for d in deps if d[1] in new_names} <= applied, (ref, res.lines())
    removed = [n for n in old_names if n not in new_names]
    deleted = {label.split("/")[1] for label in res.deleted}
    if deleted:
        assert len(applied) == len(new_names), "a deletion happened although an upsert did not"
    for ref, deps in old_deps.items():  # dependents are deleted before their dependencies
        for dep in deps:
            if dep[1] in deleted and ref[1] in removed:
                assert ref[1] in deleted, (ref, dep, res.lines())
    live = {cm["metadata"]["name"]: cm["data"]["v"] for cm in cluster.list("ConfigMap", NS)}
    assert {n for n in new_names if live.get(n) == "2"} == {a.split("/")[1] for a in applied}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(keep=st.floats(0.05, 0.95), seed=st.integers(0, 10_000))
def test_crashed_rollout_stage_keeps_workers_behind_their_leader(keep, seed):
    """A real stage (partition 3 -> 2 with a template change) crashed at random: the applied set
    is dependency-closed, so no worker StatefulSet is updated unless the leader StatefulSet is."""
    cluster_seed = random.Random(seed).randrange(1000)
    h = Harness.create(lws_manifest(replicas=3, size=2, image="img:1", mu=1), seed=cluster_seed)
    h.change_spec(lws_manifest(replicas=3, size=2, image="img:2", mu=1))
    result, res, _ = h.up(keep=keep, run_actions=False)
    applied = _applied(res)
    for ref, deps in result.dependencies.items():
        if f"{ref[0]}/{ref[1]}" in applied:
            assert {f"{d[0]}/{d[1]}" for d in deps} <= applied
    h.check()


# ---- the planner: below the partition, workers follow their leader pod -------------------------


def _groups_and_revisions(snapshot, new, partition):
    catalog = catalog_for(new, snapshot)
    groups = observe_ordinal_groups(new, snapshot, revision_key(new))
    return groups, group_revisions(groups, new.replicas, partition, catalog, revision_key(new))


def test_group_below_partition_follows_its_leader_pod_not_a_worker_statefulset_ahead():
    old, new = make_lws(replicas=3, image="v1"), make_lws(replicas=3, image="v2")
    old_key, new_key = revision_key(old), revision_key(new)
    snap = snapshot_from_chars("ooU", old=old, new=new, sts_key=new_key, partition=2)
    ahead = [o for o in snap.objects.values() if not (o["kind"] == "StatefulSet" and o["metadata"]["name"] == "demo-0")]
    snap = Snapshot.of(ahead + [worker_sts(0, new_key, False, 2)])  # group 0's workers ahead of its leader
    groups, revisions = _groups_and_revisions(snap, new, partition=2)
    assert groups[0].revision == old_key
    assert revisions == {"0": old_key, "1": old_key, "2": new_key}


def test_group_below_partition_without_leader_pod_keeps_its_worker_statefulset_revision():
    old, new, mid = make_lws(replicas=3, image="v1"), make_lws(replicas=3, image="v3"), make_lws(replicas=3, image="v2")
    old_key, mid_key = revision_key(old), revision_key(mid)
    snap = snapshot_from_chars("ooo", old=old, new=new, sts_key=old_key, partition=3)
    objects = [o for o in snap.objects.values() if o["metadata"]["name"] not in ("demo-1", "demo-1-1")]
    from support.fixtures_ordinal import controller_revision

    snap = Snapshot.of(objects + [worker_sts(1, mid_key, False, 2), controller_revision(mid, 2)])
    groups, revisions = _groups_and_revisions(snap, new, partition=3)
    assert not groups[1].exists and groups[1].revision == mid_key
    assert revisions == {"0": old_key, "1": mid_key, "2": old_key}


def test_pure_engine_passes_the_dependencies_to_the_applier(monkeypatch):
    from pulumi_lws.sim.driver.engines import PureEngine

    seen = {}
    cluster = SimCluster()
    real = cluster.apply

    def spy(manifests, stack_id="sim", **kw):
        seen.update(kw)
        return real(manifests, stack_id, **kw)

    monkeypatch.setattr(cluster, "apply", spy)
    PureEngine(NS).step(cluster, lws_manifest(replicas=2, size=2, image="img:1"))
    assert LEADER in seen["dependencies"][("StatefulSet", f"{NAME}-0")]


def test_stack_state_remembers_dependencies_for_deletion_order():
    cluster = SimCluster()
    a, b = _configmap("a", "1"), _configmap("b", "1")
    cluster.apply([a, b], stack_id=STACK, dependencies={("ConfigMap", "b"): (("ConfigMap", "a"),)})
    assert cluster.applier.dependencies[STACK] == {("ConfigMap", NS, "b"): (("ConfigMap", NS, "a"),)}
    res = cluster.apply([], stack_id=STACK)
    assert res.deleted == ["ConfigMap/b", "ConfigMap/a"]
