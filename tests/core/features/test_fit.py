"""The pure capacity check (core.features.fit): new pods, node matching, fit and the hold."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pulumi_lws.core.contract.snapshot import NodeCapacity, Snapshot
from pulumi_lws.core.contract.stage import GroupView, Stage
from pulumi_lws.core.contract.workload import Budgets, Reconciled
from pulumi_lws.core.features import fit, nodematch

GPU = "nvidia.com/gpu"


def node(name: str, gpus: int = 8, labels=None, taints=None, unschedulable=False, ready=True, pods=None):
    alloc: dict[str, Any] = {"cpu": "64", "memory": "512Gi", GPU: str(gpus)}
    if pods is not None:
        alloc["pods"] = str(pods)
    return {
        "kind": "Node",
        "metadata": {"name": name, "labels": dict(labels or {})},
        "spec": {"taints": list(taints or []), "unschedulable": unschedulable},
        "status": {
            "allocatable": alloc,
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }


def pod(name: str, node_name: str | None, gpus: int = 8, phase: str = "Running", namespace: str = "other"):
    return {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"nodeName": node_name, "containers": [{"name": "c", "resources": {"limits": {GPU: gpus}}}]},
        "status": {"phase": phase},
    }


def sts(name: str, replicas: int, gpus: int = 8, **pod_spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": "default", "labels": {"pulumi-lws.io/managed": "true"}},
        "spec": {
            "replicas": replicas,
            "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {GPU: gpus}}}], **pod_spec}},
        },
    }


def stage(groups: int, replicas: int = 2) -> Stage:
    views = tuple(GroupView(str(i), "r", True, True, surge=i >= replicas) for i in range(groups))
    return Stage("test", "r", groups, None, {}, groups=views)


BUDGETS = {"": Budgets(2, 1, 0, path="spec.rolloutStrategy.rollingUpdateConfiguration")}


def test_new_pods_are_replicas_beyond_the_observed_object_and_absent_pods():
    observed = Snapshot.of([sts("a", 2), sts("gone", 1)])
    manifests = [sts("a", 3), sts("b", 2), sts("gone", 1), {"kind": "Pod", "metadata": {"name": "p"}, "spec": {}}]
    found = {(p.ref[1], p.count) for p in fit.new_pods(manifests, observed)}
    assert found == {("a", 1), ("b", 2), ("p", 1)}
    assert fit.new_pods([sts("a", 1)], observed) == []  # a scale-down creates nothing


def test_free_is_allocatable_minus_the_bound_pods_of_every_namespace():
    cap = NodeCapacity.of(
        [node("n1"), node("n2")],
        [
            pod("x", "n1", 4),
            pod("y", "n1", 2, namespace="default"),
            pod("done", "n2", 8, phase="Succeeded"),
            pod("pending", None, 8),
        ],
    )
    free = fit.free_by_node(cap)
    assert free["n1"][GPU] == 2 and free["n2"][GPU] == 8
    assert [p["metadata"]["name"] for p in cap.pods] == ["x", "y"]  # terminal and unbound pods are not held


@pytest.mark.parametrize(
    ("pod_spec", "node_kwargs", "fits"),
    [
        ({"nodeSelector": {"pool": "a"}}, {"labels": {"pool": "a"}}, True),
        ({"nodeSelector": {"pool": "a"}}, {"labels": {"pool": "b"}}, False),
        ({}, {"unschedulable": True}, False),
        ({}, {"ready": False}, False),
        ({}, {"taints": [{"key": "gpu", "effect": "NoSchedule"}]}, False),
        ({}, {"taints": [{"key": "gpu", "effect": "PreferNoSchedule"}]}, True),
        (
            {"tolerations": [{"key": "gpu", "operator": "Exists"}]},
            {"taints": [{"key": "gpu", "effect": "NoSchedule"}]},
            True,
        ),
        (
            {"tolerations": [{"key": "gpu", "operator": "Equal", "value": "x", "effect": "NoSchedule"}]},
            {"taints": [{"key": "gpu", "value": "y", "effect": "NoSchedule"}]},
            False,
        ),
        ({"tolerations": [{"operator": "Exists"}]}, {"taints": [{"key": "any", "effect": "NoExecute"}]}, True),
    ],
)
def test_node_matching_selector_cordon_readiness_and_taints(pod_spec, node_kwargs, fits):
    assert nodematch.matches(pod_spec, node("n", **node_kwargs)) is fits


def affinity(*terms):
    return {
        "affinity": {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}
        }
    }


@pytest.mark.parametrize(
    ("expr", "labels", "fits"),
    [
        ({"key": "zone", "operator": "In", "values": ["a", "b"]}, {"zone": "b"}, True),
        ({"key": "zone", "operator": "In", "values": ["a"]}, {"zone": "b"}, False),
        ({"key": "zone", "operator": "NotIn", "values": ["a"]}, {}, True),
        ({"key": "zone", "operator": "Exists"}, {}, False),
        ({"key": "zone", "operator": "DoesNotExist"}, {}, True),
        ({"key": "gen", "operator": "Gt", "values": ["3"]}, {"gen": "4"}, True),
        ({"key": "gen", "operator": "Lt", "values": ["3"]}, {"gen": "4"}, False),
    ],
)
def test_required_node_affinity_expressions(expr, labels, fits):
    assert nodematch.matches(affinity({"matchExpressions": [expr]}), node("n", labels=labels)) is fits


def test_node_affinity_terms_are_ored_and_match_fields_read_the_node_name():
    spec = affinity(
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["x"]}]},
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]},
    )
    assert not nodematch.matches(spec, node("n1"))
    assert nodematch.matches(spec, node("n2"))


def result_of(manifests, groups=3):
    return Reconciled(stage(groups), tuple(manifests))


def test_a_surge_that_fits_changes_nothing():
    snap = Snapshot.of(
        [sts("g0", 2), sts("g1", 2)],
        capacity=NodeCapacity.of([node(f"n{i}") for i in range(6)], [pod(f"p{i}", f"n{i}") for i in range(4)]),
    )
    result = result_of([sts("g0", 2), sts("g1", 2), sts("g2", 2)])
    assert fit.check(result, snap, BUDGETS) is result


def test_a_surge_that_does_not_fit_is_held_with_the_shortfall_and_the_remedy():
    snap = Snapshot.of(
        [sts("g0", 2), sts("g1", 2)],
        capacity=NodeCapacity.of([node(f"n{i}") for i in range(5)], [pod(f"p{i}", f"n{i}") for i in range(4)]),
    )
    result = result_of([sts("g0", 2), sts("g1", 2), sts("g2", 2)])
    held = fit.check(result, snap, BUDGETS)
    blocker = held.stage.blocker
    assert blocker is not None and blocker.code == fit.INSUFFICIENT_CAPACITY
    assert blocker.message == f"the surge group needs 16 {GPU}; 8 are free on nodes matching its selector"
    assert blocker.remedies[0].startswith(
        "set spec.rolloutStrategy.rollingUpdateConfiguration.maxUnavailable ≥ 1 and maxSurge 0 to replace groups in place"
    )
    assert fit.HELD_NOTE in held.stage.notes and not held.stage.complete
    # held: the observed objects as observed, the new group not created
    assert sorted(m["metadata"]["name"] for m in held.manifests) == ["g0", "g1"]


def test_without_capacity_in_the_snapshot_nothing_is_checked():
    result = result_of([sts("g0", 9)], groups=1)
    assert fit.check(result, Snapshot.of([]), BUDGETS) is result


def test_nodes_not_matching_the_selector_do_not_count():
    snap = Snapshot.of(
        [], capacity=NodeCapacity.of([node("a", labels={"pool": "a"}), node("b", labels={"pool": "b"})], [])
    )
    result = Reconciled(stage(1, replicas=1), (sts("g0", 2, nodeSelector={"pool": "a"}),))
    held = fit.check(result, snap, {"": Budgets(1, 0, 1)})
    assert held.stage.blocker.message == f"the new pods need 16 {GPU}; 8 are free on nodes matching their selector"
    assert len(held.stage.blocker.remedies) == 1  # no surge: only more nodes


def test_fragmented_free_capacity_is_named():
    snap = Snapshot.of([], capacity=NodeCapacity.of([node("a", 4), node("b", 4)], []))
    held = fit.check(Reconciled(stage(1, 1), (sts("g0", 1, gpus=8),)), snap, {"": Budgets(1, 0, 1)})
    assert held.stage.blocker.message.startswith(f"the new pods need 8 {GPU}; 8 are free on nodes matching")
    assert "no single matching node has room" in held.stage.blocker.message


def test_the_pod_count_limit_counts_where_a_node_declares_it():
    snap = Snapshot.of([], capacity=NodeCapacity.of([node("a", 64, pods=1)], [pod("x", "a", 0)]))
    held = fit.check(Reconciled(stage(1, 1), (sts("g0", 1, gpus=1),)), snap, {"": Budgets(1, 0, 1)})
    assert held.stage.blocker.message == "the new pods need 1 pods; 0 are free on nodes matching their selector"


@given(
    free=st.lists(st.integers(0, 8), min_size=1, max_size=6),
    pods=st.lists(st.integers(1, 8), min_size=1, max_size=6),
)
def test_held_exactly_when_first_fit_leaves_a_pod_out(free, pods):
    """Never held when every pod fits one node each in the hardest order; held when the totals cannot fit."""
    nodes = [node(f"n{i}", 8) for i in range(len(free))]
    used = [pod(f"u{i}", f"n{i}", 8 - f) for i, f in enumerate(free) if f < 8]
    snap = Snapshot.of([], capacity=NodeCapacity.of(nodes, used))
    manifests = tuple(sts(f"s{i}", 1, gpus=g) for i, g in enumerate(pods))
    held = fit.check(Reconciled(stage(1, 1), manifests), snap, {"": Budgets(1, 0, 1)})
    if sum(pods) > sum(free):
        assert held.stage.blocker is not None
    if held.stage.blocker is None:
        assert held.manifests == manifests
    else:
        assert held.manifests == ()  # nothing observed: nothing registered, nothing created


def test_the_workloads_unbound_pods_compete_with_the_new_ones():
    gated = {
        "kind": "Pod",
        "metadata": {"name": "leader", "namespace": "default"},
        "spec": {"schedulingGates": [{"name": "g"}], "containers": [{"name": "c", "resources": {"limits": {GPU: 8}}}]},
        "status": {"phase": "Pending"},
    }
    cap = NodeCapacity.of([node("n0")], [])
    alone = fit.check(Reconciled(stage(1, 1), (sts("w", 1),)), Snapshot.of([], capacity=cap), {"": Budgets(1, 0, 1)})
    assert alone.stage.blocker is None  # 8 GPUs for the worker alone fit
    snap = Snapshot.of([gated], capacity=cap)
    assert [p.ref for p in fit.waiting_pods(snap)] == [("Pod", "leader")]
    held = fit.check(Reconciled(stage(1, 1), (sts("w", 1),)), snap, {"": Budgets(1, 0, 1)})
    assert held.stage.blocker.message == f"the new pods need 16 {GPU}; 8 are free on nodes matching their selector"
