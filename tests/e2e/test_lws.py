"""LeaderWorkerSet on the real cluster with the real CLI: the quickstart (Ordinal) and the Hash
example, created, rolled to a new image by repeated ``pulumi up``, destroyed."""

from __future__ import annotations

import pytest
from e2e_harness import FLEET_KINDS, Invariants, assert_plan_agrees, fleet_objects, pod_images, roll, set_images


def test_ordinal_rollout(cluster, namespace, make_stack, tmp_path):
    stack = make_stack("quickstart", "lws.yaml")
    invariants = Invariants(cluster, namespace)
    created = roll(stack, invariants, lws_name="leaderworkerset-sample")
    assert created.complete, created.stages
    assert len(cluster.get("pods", namespace)) == 16

    old = stack.manifest()
    stack.edit(set_images("nginxinc/nginx-unprivileged:1.28"))
    rolled = roll(stack, invariants, lws_name="leaderworkerset-sample")
    assert rolled.complete, rolled.stages
    assert_plan_agrees(cluster, tmp_path, old, stack.manifest(), rolled)
    assert len(rolled.stages) >= 2, "a 4-group rollout with maxUnavailable 2 takes more than one stage"
    assert invariants.violations == []
    assert pod_images(cluster, namespace) == {"nginxinc/nginx-unprivileged:1.28"}

    stack.destroy()
    cluster.settle(namespace)
    assert fleet_objects(cluster, namespace, FLEET_KINDS) == []


@pytest.mark.xfail(
    reason="found by this tier, open: a Hash group's worker StatefulSet is garbage-collected with its replaced "
    "leader pod, Pulumi's state still holds it, and the next pulumi up's update of it fails "
    '(statefulsets.apps "web-<key>" not found): the planner must stop declaring, and Pulumi must forget, a worker '
    "StatefulSet whose leader is gone (docs/e2e.md)",
    strict=False,
)
def test_hash_rollout(cluster, namespace, make_stack, tmp_path):
    stack = make_stack("hash", "lws.yaml")
    invariants = Invariants(cluster, namespace)
    assert roll(stack, invariants).complete
    assert len(cluster.get("pods", namespace)) == 6

    old = stack.manifest()
    stack.edit(set_images("example.com/server:v2"))
    rolled = roll(stack, invariants)
    assert rolled.complete, rolled.stages
    assert_plan_agrees(cluster, tmp_path, old, stack.manifest(), rolled)
    assert invariants.violations == []
    assert pod_images(cluster, namespace) == {"example.com/server:v2"}

    stack.destroy()
    cluster.settle(namespace)
    assert fleet_objects(cluster, namespace, FLEET_KINDS) == []
