"""Faults during rollouts: after convergence no lost groups and no leaked objects; stuck = a named blocker.

Each test drives `pulumi up` every 2 simulated seconds through `reconcile` + `SimCluster` (the
pure engine) with the harness of `reliability_helpers`: the surge bound and the follower rule are
asserted after every run and every simulated second, the availability floor until the first fault
(a fault re-arms it, as in sim/driver/runner.py). Faults use the simulator's public API: `crash_pod`
(phase Failed), `restart_container`, `lose_node`; capacity comes from `nodes`; slow image pulls
are a long `startSeconds`.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from support.reliability_helpers import NS, Harness, final_state_problems, lws_manifest

from pulumi_lws.lws.reconcile import ReconcileOptions

POLICIES = {
    "ordinal-scalefirst": ({}, ReconcileOptions()),
    "ordinal-rolloutfirst": ({}, ReconcileOptions(update_order="RolloutFirst")),
    "hash-posttermination": ({"hash_mode": True}, ReconcileOptions()),
    "hash-immediate": ({"hash_mode": True, "immediate": True}, ReconcileOptions()),
}


def spec(policy: str, image: str = "img:1", **kw) -> dict:
    extra, _ = POLICIES[policy]
    args = {"replicas": 3, "size": 2, "mu": 1, "ms": 1, **extra, **kw}
    return lws_manifest(image=image, **args)


def drive(h: Harness, stages: int = 80, event: Callable[[Harness, int], None] | None = None) -> None:
    """`pulumi up` every 2 s until converged (events may fire at given stage numbers)."""
    for n in range(stages):
        if event is not None:
            event(h, n)
        h.up()
        h.check()
        if h.converged() and n > 2:
            return
        h.advance(2.0)
    raise AssertionError(f"not converged; blocker {h.last.stage.blocker}\n" + "\n".join(h.log[-6:]))


def assert_clean(h: Harness) -> None:
    assert h.converged()
    assert final_state_problems(h) == []


def pods(h: Harness, workers: bool) -> list[str]:
    """Live leader (worker-index 0) or worker pods, by name."""
    from pulumi_lws.lws import labels as L

    live = [p for p in h.cluster.list("Pod", NS) if not p["metadata"].get("deletionTimestamp")]
    return sorted(
        p["metadata"]["name"] for p in live if (p["metadata"].get("labels", {}).get(L.WORKER_INDEX) != "0") == workers
    )


@pytest.mark.parametrize("policy", POLICIES)
def test_worker_pod_crash_during_rollout(policy: str) -> None:
    h = Harness.create(spec(policy), options=POLICIES[policy][1])
    h.change_spec(spec(policy, "img:2"))

    def crash(h: Harness, n: int) -> None:
        if n in (2, 5):
            h.cluster.crash_pod(NS, pods(h, workers=True)[0])
            h.fault()

    drive(h, event=crash)
    assert_clean(h)


@pytest.mark.parametrize("policy", POLICIES)
def test_leader_pod_crash_during_rollout(policy: str) -> None:
    h = Harness.create(spec(policy), options=POLICIES[policy][1])
    h.change_spec(spec(policy, "img:2"))

    def crash(h: Harness, n: int) -> None:
        if n == 4:
            h.cluster.crash_pod(NS, pods(h, workers=False)[0])
            h.fault()

    drive(h, stages=40, event=crash)
    assert_clean(h)


@pytest.mark.parametrize("policy", POLICIES)
def test_container_restart_loop_then_recovery(policy: str) -> None:
    h = Harness.create(spec(policy), options=POLICIES[policy][1])
    h.change_spec(spec(policy, "img:2", replicas=4))

    def restart(h: Harness, n: int) -> None:
        if 1 <= n <= 8:  # the same worker's container restarts on every reconcile, then the loop stops
            victims = pods(h, workers=True)
            if victims:
                h.cluster.restart_container(NS, victims[-1])
                h.fault()

    drive(h, event=restart)
    assert_clean(h)


GPU_NODE = {"name": "gpu", "count": 4, "capacity": {"cpu": 64, "memory": "512Gi", "nvidia.com/gpu": 8}}


@pytest.mark.parametrize("policy", POLICIES)
def test_node_loss_during_rollout(policy: str) -> None:
    from pulumi_lws.sim.driver.scenario import load_scenario

    nodes = load_scenario({"manifest": spec(policy), "nodes": [GPU_NODE]}).nodes  # gpu-0..gpu-3
    h = Harness.create(spec(policy, gpus=2), nodes=nodes, options=POLICIES[policy][1])
    h.change_spec(spec(policy, "img:2", gpus=2))

    def lose(h: Harness, n: int) -> None:
        if n == 3:
            h.cluster.lose_node("gpu-0")
            h.fault()

    drive(h, event=lose)
    assert_clean(h)
    assert not any(p["spec"].get("nodeName") == "gpu-0" for p in h.cluster.list("Pod", NS))


@pytest.mark.parametrize("policy", POLICIES)
def test_slow_image_pull_converges_within_budget(policy: str) -> None:
    h = Harness.create(spec(policy), options=POLICIES[policy][1])
    h.cluster.kubelet.config.default = type(h.cluster.kubelet.config.default)(30.0, 5.0)  # 30 s pull, 5 s to ready
    h.change_spec(spec(policy, "img:2", replicas=4))
    drive(h, stages=200)
    assert_clean(h)


@pytest.mark.parametrize("policy", POLICIES)
def test_spec_changes_mid_rollout_leave_nothing_behind(policy: str) -> None:
    h = Harness.create(spec(policy, replicas=4), options=POLICIES[policy][1])
    h.change_spec(spec(policy, "img:2", replicas=5))

    def change(h: Harness, n: int) -> None:
        if n == 3:
            h.change_spec(spec(policy, "img:3", replicas=2, size=3))
        if n == 6:
            h.change_spec(spec(policy, "img:4", replicas=3, size=1))

    drive(h, event=change)
    assert_clean(h)


# ---- capacity too small: stuck with a named blocker, serving capacity kept -------------------
ONE_8GPU_NODE = [
    {
        "name": "gpu-0",
        "labels": {"kubernetes.io/hostname": "gpu-0"},
        "capacity": {"cpu": 64, "memory": "512Gi", "nvidia.com/gpu": 8},
    }
]


def stuck(h: Harness, stages: int = 25) -> None:
    for _ in range(stages):
        h.up()
        h.check()
        h.advance(2.0)
    h.up()


def test_717_scale_first_deadlock_is_named_and_keeps_the_old_group() -> None:
    """1 x 8 GPU -> 2 x 4 GPU on one 8-GPU node (docs/rollout.md §5): upstream's order cannot proceed."""
    old = lws_manifest(replicas=1, size=1, image="img:1", gpus=8, mu=1, ms=0)
    h = Harness.create(old, nodes=ONE_8GPU_NODE)
    h.change_spec(lws_manifest(replicas=2, size=1, image="img:2", gpus=4, mu=1, ms=0))
    stuck(h)
    blocker = h.last.stage.blocker
    assert blocker is not None and blocker.code == "resource-deadlock-717" and blocker.remedies
    assert h.view().available == 1  # the old group still serves


def test_717_rollout_first_converges_on_the_same_capacity() -> None:
    old = lws_manifest(replicas=1, size=1, image="img:1", gpus=8, mu=1, ms=0)
    h = Harness.create(old, nodes=ONE_8GPU_NODE, options=ReconcileOptions(update_order="RolloutFirst"))
    h.change_spec(lws_manifest(replicas=2, size=1, image="img:2", gpus=4, mu=1, ms=0))
    drive(h)
    assert_clean(h)


@pytest.mark.parametrize("policy", POLICIES)
def test_unschedulable_new_template_is_a_named_blocker(policy: str) -> None:
    """The new template asks for 16 GPUs per pod on 8-GPU nodes: never schedulable."""
    nodes = [
        {
            "name": f"gpu-{i}",
            "labels": {"kubernetes.io/hostname": f"gpu-{i}"},
            "capacity": {"cpu": 64, "memory": "512Gi", "nvidia.com/gpu": 8},
        }
        for i in range(6)
    ]
    h = Harness.create(spec(policy, gpus=4, ms=0), nodes=nodes, options=POLICIES[policy][1])
    h.change_spec(spec(policy, "img:2", gpus=16, ms=0))
    stuck(h)
    blocker = h.last.stage.blocker
    assert h.view().available >= 3 - 1  # maxUnavailable 1: at most one group down, forever
    assert blocker is not None and blocker.code and blocker.message, h.last.stage.summary()
