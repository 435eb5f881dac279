"""A DisaggregatedSet on GPU node pools in the simulator: prefill and decode each pinned to its own
pool (nodeSelector) and requesting GPUs; the image change converges with the bounds holding at
every tick, every pod lands in its role's pool, and a pool with room for exactly ``target +
maxSurge`` groups is never over-committed (the surge ceiling is what makes the rollout fit)."""

from __future__ import annotations

import pytest
from support.ds_helpers import (
    converged_on,
    ds_manifest,
    kubelet,
    parse,
    read,
    role,
    run,
    scenario,
    with_image,
)

from pulumi_lws.core.contract.snapshot import pod_unschedulable

GPUS_PER_POD = 4


def gpu_role(name: str, replicas: int, pool: str, surge: int) -> dict:
    r = role(name, replicas, 2, surge=surge, unavailable=0)
    spec = r["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]
    spec["nodeSelector"] = {"pool": pool}
    spec["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": str(GPUS_PER_POD)}}
    return r


def pools(prefill_nodes: int, decode_nodes: int) -> list[dict]:
    """8-GPU nodes labelled by pool: one group (2 pods x 4 GPUs) fills one node."""
    cap = {"cpu": "64", "nvidia.com/gpu": "8"}
    return [
        {"name": f"{pool}-{i}", "labels": {"pool": pool}, "capacity": cap}
        for pool, n in (("prefill", prefill_nodes), ("decode", decode_nodes))
        for i in range(n)
    ]


@pytest.mark.parametrize("prefill_nodes, decode_nodes", [(7, 3), (10, 4)])  # exactly target + maxSurge; roomy
def test_image_change_on_gpu_pools_converges_within_the_pools(prefill_nodes: int, decode_nodes: int) -> None:
    old = ds_manifest(gpu_role("prefill", 6, "prefill", 1), gpu_role("decode", 2, "decode", 1))
    new = with_image(old, "img:2")
    sc = scenario(old, new, nodes=pools(prefill_nodes, decode_nodes), kubelet=kubelet(2.0), max_time=400)
    result, bounds = run(sc)
    assert result.trace.converged and not result.trace.violations and not bounds.violations, bounds.violations[:3]
    assert converged_on(result.cluster, parse(new)) == []
    nodes = {n["metadata"]["name"]: n["metadata"]["labels"]["pool"] for n in result.cluster.list("Node", None)}
    for (_s, r), o in read(result.cluster).items():
        for child in o.children.values():
            assert {nodes[n] for ns in child.nodes.values() for n in ns if n} <= {r}, (r, child.nodes)
    # a group (2 pods x 4 GPUs) fills one 8-GPU node: the pool never held more than target + maxSurge groups
    assert bounds.max_running[(0, "prefill")] <= min(prefill_nodes, 7)
    assert bounds.max_running[(0, "decode")] <= min(decode_nodes, 3)
    assert not [p for p in result.cluster.list("Pod") if pod_unschedulable(p)]
