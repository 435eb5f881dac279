"""Faults on the real cluster, each with the invariants read after every ``pulumi up``: a broken
image then its fix, a killed pod and a deleted node mid-rollout, a replacement-causing change
(``subdomainPolicy``), a scale down then up, and a second template change mid-rollout. Every
case converges with no object lost."""

from __future__ import annotations

from e2e_harness import Invariants, pod_images, roll, set_images

LWS = "leaderworkerset-sample"
GOOD = "nginxinc/nginx-unprivileged:1.28"
BROKEN = "nginxinc/nginx-unprivileged:broken"


def _converged(cluster, namespace, stack, invariants, image):
    rolled = roll(stack, invariants, lws_name=LWS, limit=20)
    assert rolled.complete, rolled.stages
    assert invariants.violations == []
    assert pod_images(cluster, namespace) == {image}
    assert len(cluster.get("pods", namespace)) == 16
    return rolled


def test_broken_image_then_fix(cluster, namespace, make_stack):
    stack = make_stack("quickstart", "lws.yaml")
    invariants = Invariants(cluster, namespace)
    assert roll(stack, invariants, lws_name=LWS).complete

    stack.edit(set_images(BROKEN))
    broken = roll(stack, invariants, lws_name=LWS, limit=4)
    assert not broken.complete, "a rollout to an image that never pulls cannot complete"
    assert invariants.violations == []
    ready_old = [
        p
        for p in cluster.get("pods", namespace)
        if p["spec"]["containers"][0]["image"] != BROKEN
        and any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", []))
    ]
    assert len(ready_old) >= 2 * 4, "maxUnavailable 2 of 4 groups: at least two old groups stay ready"

    stack.edit(set_images(GOOD))
    _converged(cluster, namespace, stack, invariants, GOOD)


def test_killed_pod_and_deleted_node_mid_rollout(cluster, namespace, make_stack):
    stack = make_stack("quickstart", "lws.yaml")
    invariants = Invariants(cluster, namespace)
    assert roll(stack, invariants, lws_name=LWS).complete

    stack.edit(set_images(GOOD))
    first = roll(stack, invariants, lws_name=LWS, limit=1)
    assert not first.complete
    cluster.kubectl("delete", "pod", f"{LWS}-0", "-n", namespace, "--wait=false")
    victim = next(p["spec"]["nodeName"] for p in cluster.get("pods", namespace) if p["spec"].get("nodeName"))
    node = cluster.kubectl("get", "node", victim, "-o", "json")
    cluster.kubectl("delete", "node", victim)
    try:
        _converged(cluster, namespace, stack, invariants, GOOD)
        assert all(p["spec"].get("nodeName") != victim for p in cluster.get("pods", namespace))
    finally:
        _restore_node(cluster, node)


def _restore_node(cluster, node_json: str) -> None:
    import json

    node = json.loads(node_json)
    for key in ("resourceVersion", "uid", "creationTimestamp", "managedFields"):
        node["metadata"].pop(key, None)
    node.pop("status", None)
    node["status"] = {
        "allocatable": {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "8", "google.com/tpu": "16", "pods": "110"},
        "capacity": {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "8", "google.com/tpu": "16", "pods": "110"},
    }
    cluster.kubectl("apply", "-f", "-", stdin=json.dumps(node))


def test_replacement_causing_change(cluster, namespace, make_stack):
    """``subdomainPolicy`` changes the worker StatefulSets' serviceName, an immutable field: the
    provider replaces them (delete, then create under the same name)."""
    stack = make_stack("quickstart", "lws.yaml")
    invariants = Invariants(cluster, namespace)
    assert roll(stack, invariants, lws_name=LWS).complete

    stack.edit(lambda doc: doc["spec"].__setitem__("networkConfig", {"subdomainPolicy": "UniquePerReplica"}))
    rolled = roll(stack, invariants, lws_name=LWS, limit=20)
    assert rolled.complete, rolled.stages
    assert invariants.violations == []
    assert len(cluster.get("pods", namespace)) == 16
    workers = [s for s in cluster.get("statefulsets", namespace) if s["metadata"]["name"] != LWS]
    assert len(workers) == 4 and all(not s["metadata"].get("deletionTimestamp") for s in workers)


def test_scale_down_then_up(cluster, namespace, make_stack):
    stack = make_stack("quickstart", "lws.yaml")
    invariants = Invariants(cluster, namespace)
    assert roll(stack, invariants, lws_name=LWS).complete

    stack.edit(lambda doc: doc["spec"].__setitem__("replicas", 2))
    stack.up()  # no settling: the next up declares the groups again while they terminate
    stack.edit(lambda doc: doc["spec"].__setitem__("replicas", 4))
    rolled = roll(stack, invariants, lws_name=LWS, limit=20)
    assert rolled.complete, rolled.stages
    statefulsets = cluster.get("statefulsets", namespace)
    # the leader StatefulSet and one worker StatefulSet per group, none lost to the same-name race
    # (docs/component.md "Deletion"); 16 pods = 4 leaders + 4 x 3 workers
    assert sorted(s["metadata"]["name"] for s in statefulsets) == [LWS] + [f"{LWS}-{i}" for i in range(4)]
    assert not [s for s in statefulsets if s["metadata"].get("deletionTimestamp")]
    assert len(cluster.get("pods", namespace)) == 16


def test_second_template_change_mid_rollout(cluster, namespace, make_stack):
    stack = make_stack("quickstart", "lws.yaml")
    invariants = Invariants(cluster, namespace)
    assert roll(stack, invariants, lws_name=LWS).complete

    stack.edit(set_images(GOOD))
    assert not roll(stack, invariants, lws_name=LWS, limit=1).complete
    stack.edit(set_images("nginxinc/nginx-unprivileged:1.29"))
    _converged(cluster, namespace, stack, invariants, "nginxinc/nginx-unprivileged:1.29")
