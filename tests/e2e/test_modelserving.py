"""Kthena ModelServing on the real cluster with the real CLI: ServingGroupRollingUpdate (the
example as shipped) and RoleRollingUpdate (one role's image), each created, rolled, destroyed."""

from __future__ import annotations

from e2e_harness import FLEET_KINDS, Invariants, assert_plan_agrees, fleet_objects, pod_images, roll, set_images

NEW = "nginxinc/nginx-unprivileged:1.28"


def test_serving_group_rollout(cluster, namespace, make_stack, tmp_path):
    stack = make_stack("modelserving-pd", "ms.yaml")
    invariants = Invariants(cluster, namespace)
    assert roll(stack, invariants).complete

    old = stack.manifest()
    stack.edit(set_images(NEW))
    rolled = roll(stack, invariants, limit=20)
    assert rolled.complete, rolled.stages
    assert_plan_agrees(cluster, tmp_path, old, stack.manifest(), rolled)
    assert len(rolled.stages) >= 4, "4 ServingGroups with maxUnavailable 1 roll one at a time"
    assert invariants.violations == []
    assert pod_images(cluster, namespace) == {NEW}

    stack.destroy()
    cluster.settle(namespace)
    assert fleet_objects(cluster, namespace, FLEET_KINDS) == []


def test_role_rollout(cluster, namespace, make_stack, tmp_path):
    stack = make_stack("modelserving-pd", "ms.yaml")

    def role_update(doc: dict) -> None:
        doc["spec"]["replicas"] = 2
        doc["spec"]["rolloutStrategy"] = {"type": "RoleRollingUpdate"}
        prefill = doc["spec"]["template"]["roles"][0]
        prefill["replicas"], prefill["maxUnavailable"] = 2, 1

    stack.edit(role_update)
    invariants = Invariants(cluster, namespace)
    assert roll(stack, invariants).complete
    decode_uids = {p["metadata"]["uid"] for p in cluster.get("pods", namespace) if "decode" in p["metadata"]["name"]}

    old = stack.manifest()
    stack.edit(set_images(NEW, only=lambda path: "prefill" in path))
    rolled = roll(stack, invariants, limit=20)
    assert rolled.complete, rolled.stages
    assert_plan_agrees(cluster, tmp_path, old, stack.manifest(), rolled)
    assert invariants.violations == []
    pods = cluster.get("pods", namespace)
    assert {c["image"] for p in pods if "prefill" in p["metadata"]["name"] for c in p["spec"]["containers"]} == {NEW}
    assert {p["metadata"]["uid"] for p in pods if "decode" in p["metadata"]["name"]} == decode_uids, (
        "a RoleRollingUpdate of prefill leaves decode pods alone"
    )
    assert pod_images(cluster, namespace) >= {NEW}

    stack.destroy()
    cluster.settle(namespace)
    assert fleet_objects(cluster, namespace, FLEET_KINDS) == []
