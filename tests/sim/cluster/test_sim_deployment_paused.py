"""The simulator's Deployment controller honours ``spec.paused`` as Kubernetes does: no new
ReplicaSet and no rollout step while paused, the rollout continues once unpaused."""

from __future__ import annotations

import copy

from support.sim_helpers import cluster, deployment, images, run_until


def test_a_paused_deployment_does_not_roll_until_unpaused() -> None:
    c = cluster()
    c.apply([deployment("d", "a", replicas=4)])
    run_until(c, 10)
    assert set(images(c, "d").values()) == {"a"}
    paused = copy.deepcopy(deployment("d", "b", replicas=4))
    paused["spec"]["paused"] = True
    c.apply([paused])
    run_until(c, 40)
    assert set(images(c, "d").values()) == {"a"} and len(c.list("ReplicaSet")) == 1
    resumed = deployment("d", "b", replicas=4)
    c.apply([resumed])
    run_until(c, 80)
    assert set(images(c, "d").values()) == {"b"} and len(images(c, "d")) == 4
