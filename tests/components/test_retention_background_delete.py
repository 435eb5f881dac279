"""Pods retained with the project's finalizer (an exhausted restart budget,
``core.features.retention``) when their StatefulSet is deleted in the background
(``pulumi.com/deletionPropagationPolicy: background``): the StatefulSet is gone at once, the garbage
collector then deletes its pods, and the finalizer holds the retained ones.

* A group the reconcile scales away is released by that reconcile's actions (the planner's
  ``released_groups``), before the apply deletes its worker StatefulSet.
* ``pulumi destroy --run-program`` runs the ``before_delete`` hook (components/lifecycle.py, bound to
  every StatefulSet and Deployment child) before each delete: the pods are released first, so they
  go with their StatefulSet.
* Without the hook (a hook that failed; a user deleting the objects) they stay, owner-less,
  terminating: a later release still finds them — it reads pods by the workload's labels, not
  through their StatefulSet — and they go. Before, a foreground delete of that StatefulSet never
  finished instead.
"""

from __future__ import annotations

import copy
from types import SimpleNamespace

from support.control_helpers import LwsHarness, lws_manifest

from pulumi_lws.components.lifecycle import release_retained_pods
from pulumi_lws.core.features.retention import RETAIN_FINALIZER
from pulumi_lws.lws.rollout.failure.retention import retain_actions
from pulumi_lws.sim.cluster.kubelet import KubeletConfig, Timing
from pulumi_lws.sim.cluster.simcluster import SimCluster


def fleet() -> LwsHarness:
    doc = lws_manifest(replicas=2, size=3)
    doc["metadata"]["name"] = "keep"
    h = LwsHarness(SimCluster(seed=5, kubelet=KubeletConfig(default=Timing(1.0, 1.0))), copy.deepcopy(doc))
    h.STACK = "default/keep"
    h.warm_up()
    return h


def group(h: LwsHarness, i: int) -> list[dict]:
    return [p for p in h.cluster.list("Pod", "default") if p["metadata"]["name"].startswith(f"keep-{i}")]


def retain_group_1(h: LwsHarness) -> list[str]:
    pods = sorted(group(h, 1), key=lambda p: p["metadata"]["name"])  # leader keep-1 first
    h.cluster.execute("default", list(retain_actions(pods, "test: restart budget exhausted")))
    h.cluster.settle()
    held = [p for p in group(h, 1) if RETAIN_FINALIZER in (p["metadata"].get("finalizers") or [])]
    assert held and all(p["metadata"].get("deletionTimestamp") for p in held)
    return sorted(p["metadata"]["name"] for p in held)


def release(h: LwsHarness) -> list[str]:
    backend = SimpleNamespace(observer=h.cluster, actuator=h.cluster)
    return release_retained_pods(backend, "default", h.WORKLOAD.scope(h.spec), h.WORKLOAD)


def drop_group_1(h: LwsHarness):
    doc = copy.deepcopy(h.desired)
    doc["spec"]["replicas"] = 1
    h.change_spec(doc)
    result, applied, _ = h.up()
    return result, applied


def destroy(h: LwsHarness):
    """What ``pulumi destroy`` does to the cluster once the hooks ran: every object deleted."""
    return h.cluster.apply([], stack_id=h.STACK)


def test_a_group_scaled_away_is_released_by_the_reconcile_and_its_statefulset_goes_at_once():
    h = fleet()
    retained = retain_group_1(h)
    result, applied = drop_group_1(h)
    released = {a.name for a in result.stage.actions if a.verb == "finalize" and "remove" in a.params}
    assert released == set(retained)  # the planner releases a group it scales away (same up)
    assert "StatefulSet/keep-1" in applied.deleted and not applied.errors
    assert h.cluster.get("StatefulSet", "keep-1") is None  # background: gone at once
    assert release(h) == []  # the hook Pulumi runs before that delete finds nothing left to release
    h.cluster.step(h.cluster.clock.now + 30)
    assert not group(h, 1)


def test_destroy_with_the_hook_releases_the_pods_before_the_statefulsets_go_at_once():
    h = fleet()
    retain_group_1(h)
    assert release(h)  # the before_delete hook: before Pulumi deletes the StatefulSets
    deleted = destroy(h).deleted
    assert {"StatefulSet/keep", "StatefulSet/keep-0", "StatefulSet/keep-1"} <= set(deleted)
    assert not h.cluster.list("StatefulSet", "default")  # background: none waits for its pods
    h.cluster.step(h.cluster.clock.now + 30)
    assert not h.cluster.list("Pod", "default")  # released, terminated, garbage-collected


def test_destroy_without_the_hook_leaves_the_retained_pods_owner_less_and_a_late_release_frees_them():
    h = fleet()
    retained = retain_group_1(h)
    destroy(h)
    assert not h.cluster.list("StatefulSet", "default")  # not held by its pods (foreground never finished)
    h.cluster.step(h.cluster.clock.now + 30)
    left = h.cluster.list("Pod", "default")
    assert sorted(p["metadata"]["name"] for p in left) == retained  # the finalizer holds them, owners gone
    assert all(h.cluster.store.by_uid(p["metadata"]["ownerReferences"][0]["uid"]) is None for p in left)
    assert release(h)  # found by the workload's labels, without their StatefulSets
    h.cluster.step(h.cluster.clock.now + 1)
    assert not h.cluster.list("Pod", "default")
