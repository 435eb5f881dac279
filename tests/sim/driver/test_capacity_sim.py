"""The opt-in capacity check end to end in the simulator, for every API (issue 24 item 5).

Each fleet fills its GPU nodes but one; the update needs a surge group that does not fit the one
free node. With ``reconcile.checkCapacity: true`` (or the manifest annotation the component
argument writes) the stage is held with the ``insufficient-capacity`` blocker naming the shortfall
and nothing new is created; an ``addNodes`` event then lets the rollout proceed and converge.
Without the opt-in the same run creates the surge group at once (it stays Pending) — behaviour as
before. The runner's budget invariants hold at every tick throughout.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pulumi_lws.core.features.control import CHECK_CAPACITY_ANNOTATION
from pulumi_lws.core.features.fit import INSUFFICIENT_CAPACITY
from pulumi_lws.sim.driver.runner import simulate
from pulumi_lws.sim.driver.scenario import load_scenario

GPU = "nvidia.com/gpu"


def container(image: str) -> dict[str, Any]:
    return {"name": "c", "image": image, "resources": {"limits": {GPU: 8}}}


def lws(image: str) -> dict[str, Any]:
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "llm", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "rolloutStrategy": {
                "type": "RollingUpdate",
                "rollingUpdateConfiguration": {"maxUnavailable": 0, "maxSurge": 1},
            },
            "leaderWorkerTemplate": {"size": 2, "workerTemplate": {"spec": {"containers": [container(image)]}}},
        },
    }


def modelserving(image: str) -> dict[str, Any]:
    role = {
        "name": "prefill",
        "replicas": 1,
        "workerReplicas": 1,
        "entryTemplate": {"spec": {"containers": [container(image)]}},
        "workerTemplate": {"spec": {"containers": [container(image)]}},
    }
    return {
        "apiVersion": "workload.serving.volcano.sh/v1alpha1",
        "kind": "ModelServing",
        "metadata": {"name": "ms", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "schedulerName": "default-scheduler",
            "rolloutStrategy": {
                "type": "ServingGroupRollingUpdate",
                "rollingUpdateConfiguration": {"maxUnavailable": 0, "maxSurge": 1},
            },
            "template": {"roles": [role]},
        },
    }


def ds(image: str) -> dict[str, Any]:
    def role(name: str, replicas: int) -> dict[str, Any]:
        return {
            "name": name,
            "spec": {
                "replicas": replicas,
                "rolloutStrategy": {
                    "type": "RollingUpdate",
                    "rollingUpdateConfiguration": {"maxSurge": 1, "maxUnavailable": 0},
                },
                "leaderWorkerTemplate": {"size": 2, "workerTemplate": {"spec": {"containers": [container(image)]}}},
            },
        }

    return {
        "apiVersion": "disaggregatedset.x-k8s.io/v1",
        "kind": "DisaggregatedSet",
        "metadata": {"name": "pd", "namespace": "default"},
        "spec": {"roles": [role("prefill", 1), role("decode", 1)]},
    }


ONE = f"the surge group needs 16 {GPU}; 8 are free on nodes matching its selector"
#: api -> (manifest builder, nodes the old fleet fills, the field path the remedy names, the blocker)
CASES = {
    "LeaderWorkerSet": (
        lws,
        4,
        "set spec.rolloutStrategy.rollingUpdateConfiguration.maxUnavailable ≥ 1 and maxSurge 0",
        ONE,
    ),
    "ModelServing": (modelserving, 4, "set spec.rolloutStrategy.rollingUpdateConfiguration.maxUnavailable ≥ 1", ONE),
    # both roles surge in lockstep: two surge groups of 16 GPUs each
    "DisaggregatedSet": (
        ds,
        4,
        "set spec.roles[0].spec.rolloutStrategy.rollingUpdateConfiguration.maxUnavailable ≥ 1",
        f"the 2 surge groups need 32 {GPU}; 8 are free on nodes matching their selector",
    ),
}


def scenario(api: str, *, check: bool | None = True, annotate: bool = False, add_at: float = 60) -> dict[str, Any]:
    build, filled, _, _ = CASES[api]
    old, new = build("img:1"), build("img:2")
    if annotate:
        for m in (old, new):
            m["metadata"]["annotations"] = {CHECK_CAPACITY_ANNOTATION: "true"}
    reconcile: dict[str, Any] = {"interval": 10}
    if check is not None:
        reconcile["checkCapacity"] = check
    return {
        "name": f"capacity-{api}",
        "start": "converged",
        "manifest": old,
        "updates": [{"at": 0, "manifest": copy.deepcopy(new)}],
        # one node more than the old fleet fills: 8 GPUs free, a surge group needs 16
        "nodes": [{"name": "gpu", "count": filled + 1, "capacity": {"cpu": 64, "memory": "512Gi", GPU: 8}}],
        "events": [{"at": add_at, "addNodes": 3, "gpusPerNode": 8}],
        "reconcile": reconcile,
        "stop": {"maxTime": 900},
    }


def blocked_stages(result) -> list:
    return [s for s in result.stages if s.blocker is not None and s.blocker.code == INSUFFICIENT_CAPACITY]


API = pytest.mark.parametrize("api", sorted(CASES))


@API
def test_a_surge_that_does_not_fit_is_held_with_the_shortfall_then_proceeds_once_nodes_are_added(api):
    result = simulate(load_scenario(scenario(api)))
    assert result.reason is None, result.reason
    assert result.cluster is not None and not result.trace.blocked
    held = blocked_stages(result)
    assert held, [s.summary() for s in result.stages]
    blocker = held[0].blocker
    assert blocker.message == CASES[api][3]
    assert CASES[api][2] in blocker.remedies[0]
    assert "add nodes" in blocker.remedies[-1]
    # the trace shows the blocker on the stage the update started, then progress after t=60
    rows = result.trace.rows
    blocked_rows = [r for r in rows if blocker.message in r.note]
    assert blocked_rows and all(r.time < 60 for r in blocked_rows)
    assert any(r.time >= 60 and "add 3 nodes" in r.note for r in rows)
    # while held nothing new ran: the live pods never exceeded the old fleet before the nodes came
    before = [d for t, d in result.demand if t < 60]
    assert before and all(d[GPU][0] <= 32 for d in before)
    assert max(d[GPU][0] for t, d in result.demand if t >= 60) > 32  # the surge group ran after
    # (the runner fails a run, reason "invariant violated: ...", on any budget violation: reason is None above)


@API
def test_the_manifest_annotation_opts_in_as_the_scenario_key_does(api):
    result = simulate(load_scenario(scenario(api, check=None, annotate=True)))
    assert result.reason is None, result.reason
    assert blocked_stages(result)


@API
def test_without_the_opt_in_the_surge_is_created_at_once_as_before(api):
    result = simulate(load_scenario(scenario(api, check=None)))
    assert not blocked_stages(result)
    early = [d for t, d in result.demand if 0 < t < 60]
    assert max(d[GPU][0] for d in early) > 32  # the surge pods were created (Pending) before the nodes came


def test_check_capacity_must_be_a_boolean_and_pure_engine_only():
    from pulumi_lws.core.contract.errors import SpecError

    bad = scenario("LeaderWorkerSet")
    bad["reconcile"]["checkCapacity"] = "yes"
    with pytest.raises(SpecError, match=r"reconcile.checkCapacity"):
        load_scenario(bad)
