"""DisaggregatedSet on the real cluster with the real CLI: the prefill/decode example created,
rolled in proportional lockstep to a new image, destroyed."""

from __future__ import annotations

from e2e_harness import FLEET_KINDS, Invariants, assert_plan_agrees, fleet_objects, pod_images, roll, set_images

NEW = "nginxinc/nginx-unprivileged:1.28"


def test_lockstep_rollout(cluster, namespace, make_stack, tmp_path):
    stack = make_stack("disaggregated-pd", "ds.yaml")
    invariants = Invariants(cluster, namespace)
    assert roll(stack, invariants).complete
    assert len(cluster.get("pods", namespace)) == 16

    old = stack.manifest()
    stack.edit(set_images(NEW))
    rolled = roll(stack, invariants, limit=25)
    assert rolled.complete, rolled.stages
    assert_plan_agrees(cluster, tmp_path, old, stack.manifest(), rolled)
    assert invariants.violations == []
    assert pod_images(cluster, namespace) == {NEW}

    stack.destroy()
    cluster.settle(namespace)
    assert fleet_objects(cluster, namespace, FLEET_KINDS) == []
