"""Recovery end to end: SimCluster + the pure engine, one scenario per recoveryPolicy, a fault at
t=60 on ServingGroup pd-1; the trace shows the recovery's pod deletes and the run converges."""

from __future__ import annotations

import copy
from typing import Any

from pulumi_lws.sim.driver.runner import simulate
from pulumi_lws.sim.driver.scenario import load_scenario


def _role(name: str, image: str = "vllm:1") -> dict[str, Any]:
    tmpl = {"spec": {"containers": [{"name": "server", "image": image}]}}
    return {
        "name": name,
        "replicas": 1,
        "workerReplicas": 1,
        "entryTemplate": tmpl,
        "workerTemplate": copy.deepcopy(tmpl),
    }


def scenario(policy: str, fault: dict[str, Any], *, grace: int = 0, slow: str | None = None) -> dict[str, Any]:
    ms = {
        "apiVersion": "workload.serving.volcano.sh/v1alpha1",
        "kind": "ModelServing",
        "metadata": {"name": "pd"},
        "spec": {
            "replicas": 2,
            "schedulerName": "default-scheduler",
            "recoveryPolicy": policy,
            "template": {"restartGracePeriodSeconds": grace, "roles": [_role("prefill"), _role("decode")]},
        },
    }
    kubelet: dict[str, Any] = {"startSeconds": 1, "readySeconds": 4, "terminationGracePeriodSeconds": 1}
    if slow:  # this pod takes 30 s to become ready, also after a container restart
        kubelet["overrides"] = [{"pod": slow, "readySeconds": 30}]
    return {
        "name": f"recovery-{policy}",
        "engine": "pure",
        "manifest": ms,
        "faults": [{"at": 60, **fault}],
        "reconcile": {"interval": 5, "tick": 1},
        "kubelet": kubelet,
        "stop": {"maxTime": 300},
    }


def run(sc: dict[str, Any]):
    result = simulate(load_scenario(sc))
    assert result.reason is None and result.trace.converged and result.trace.violations == []
    return result


def actions(result) -> list[tuple[float, str]]:
    return [(row.time, a) for row in result.trace.rows for a in row.actions]


def created(result, name: str) -> str:
    return result.cluster.get("Pod", name)["metadata"]["creationTimestamp"]


def test_role_recreate_waits_for_the_grace_period_then_restarts_the_role_replica():
    result = run(
        scenario(
            "RoleRecreate",
            {"type": "container-restart", "pod": "pd-1-prefill-0-w-1"},
            grace=12,
            slow="pd-1-prefill-0-w-*",
        )
    )
    blockers = [row.blocker for row in result.trace.rows if row.blocker and "restartGracePeriodSeconds" in row.blocker]
    assert (
        blockers
        and blockers[0].startswith("waiting ")
        and blockers[0].endswith("s restartGracePeriodSeconds before recreating role prefill-0 of pd-1")
    )
    done = actions(result)
    assert [a.split(":")[0] for _, a in done] == ["delete Pod/pd-1-prefill-0-0", "delete Pod/pd-1-prefill-0-w-1"]
    assert all(t >= 72 for t, _ in done)  # not before the 12 s grace period
    # the role replica was restarted as a unit; decode and the other group were not touched
    assert (
        created(result, "pd-1-prefill-0-0")
        == created(result, "pd-1-prefill-0-w-1")
        != created(result, "pd-1-decode-0-0")
    )
    assert created(result, "pd-0-prefill-0-0") == created(result, "pd-1-decode-0-w-1")


def test_serving_group_recreate_restarts_the_whole_group_after_a_pod_crash():
    # the worker StatefulSet replaces the Failed pod at once; the generation rule sees a young pod
    # among older siblings and ServingGroupRecreate restarts every pod of pd-1
    result = run(scenario("ServingGroupRecreate", {"type": "pod-crash", "pod": "pd-1-prefill-0-w-1"}))
    done = sorted(a.split(":")[0] for _, a in actions(result))
    assert done == sorted(f"delete Pod/pd-1-{r}-0-{p}" for r in ("decode", "prefill") for p in ("0", "w-1"))
    pd1 = {created(result, f"pd-1-{r}-0-{p}") for r in ("decode", "prefill") for p in ("0", "w-1")}
    assert len(pd1) == 1 and created(result, "pd-0-decode-0-0") not in pd1


def test_policy_none_recreates_only_the_failed_pod():
    result = run(
        scenario("None", {"type": "container-restart", "pod": "pd-1-prefill-0-w-1"}, slow="pd-1-prefill-0-w-*")
    )
    assert [a.split(":")[0] for _, a in actions(result)] == ["delete Pod/pd-1-prefill-0-w-1"]
    assert (
        created(result, "pd-1-prefill-0-0")
        == created(result, "pd-0-prefill-0-0")
        != created(result, "pd-1-prefill-0-w-1")
    )


def test_policy_none_after_a_pod_crash_does_nothing_the_statefulset_does_not():
    result = run(scenario("None", {"type": "pod-crash", "pod": "pd-1-prefill-0-w-1"}))
    assert actions(result) == []


def test_role_recreate_restarts_the_role_replica_of_an_evicted_pod():
    # one pod per node (cpu 1 each); losing gpu-5 evicts pd-1's decode worker, its StatefulSet
    # recreates it on the spare node, and RoleRecreate restarts the rest of decode-0 with it
    sc = scenario("RoleRecreate", {"type": "node-loss", "node": "gpu-5"})
    for r in sc["manifest"]["spec"]["template"]["roles"]:
        for t in ("entryTemplate", "workerTemplate"):
            r[t]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1"}}
    sc["nodes"] = [{"name": "gpu", "count": 9, "capacity": {"cpu": 1, "memory": "8Gi"}}]
    result = run(sc)
    assert result.cluster.get("Pod", "pd-1-decode-0-w-1") is not None
    assert sorted(a.split(":")[0] for _, a in actions(result)) == [
        "delete Pod/pd-1-decode-0-0",
        "delete Pod/pd-1-decode-0-w-1",
    ]
    assert (
        created(result, "pd-1-decode-0-0")
        == created(result, "pd-1-decode-0-w-1")
        != created(result, "pd-1-prefill-0-0")
    )
