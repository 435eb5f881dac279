"""Per-pod values ``admission-policy`` end to end in the simulator (issue 28): the simulated API
server evaluates the rendered MutatingAdmissionPolicy when the StatefulSet controllers create the
pods, and every pod carries, from its creation, exactly what upstream's pod webhook would set.

The expected values come from :func:`upstream_webhook` below: an independent transcription of
upstream's ``pod_webhook.go::Default`` and ``accelerators/tpu.go`` (labels, subgroup keys, TPU
variables, ``SetExclusiveAffinities``), applied to the pod's name and group shape — not from the
renderer. Inputs: the upstream-style golden samples (tests/golden/ordinal/inputs) and the LWS docs'
TPU example (``TPU_WORKER_HOSTNAMES`` = ``test-sample-1-5 ... test-sample-1-8``).
"""

from __future__ import annotations

import copy
import pathlib
from typing import Any

import pytest
import yaml
from support.sim_cycle import up
from support.upstream_webhook import ADMISSION, P, pod_affinity_terms, resolved_env, tpu_lws, upstream_webhook

from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.workloads import workload_for

W = workload_for("LeaderWorkerSet")
GOLDEN = pathlib.Path(__file__).resolve().parents[2] / "golden" / "ordinal" / "inputs"


def zone_nodes(zones: int = 2, per_zone: int = 3) -> list[dict[str, Any]]:
    capacity = {"cpu": "64", "memory": "512Gi", "google.com/tpu": "16", "pods": "110"}
    return [
        {
            "name": f"node-{z}-{n}",
            "labels": {"zone": f"z{z}", "kubernetes.io/hostname": f"node-{z}-{n}"},
            "capacity": capacity,
        }
        for z in range(zones)
        for n in range(per_zone)
    ]


def run_to_ready(manifest: dict[str, Any], ups: int = 5) -> SimCluster:
    exclusive = f"{P}/exclusive-topology" in (manifest["metadata"].get("annotations") or {})
    cluster = SimCluster(seed=3, nodes=zone_nodes() if exclusive else ())
    cluster.kubelet.config.instant = True
    for _ in range(ups):
        spec = W.parse(copy.deepcopy(manifest))
        done = up(W, spec, cluster, nodes=exclusive)
        assert not [a for a in done.reconciled.stage.actions if a.verb == "label"], "labels arrive at admission"
        cluster.step(cluster.clock.now + 2.0)
    assert cluster.statefulsets.denied == {}
    return cluster


def golden(stem: str) -> dict[str, Any]:
    m = yaml.safe_load((GOLDEN / f"{stem}.yaml").read_text())
    m["metadata"].setdefault("namespace", "default")
    m["metadata"]["annotations"] = {**(m["metadata"].get("annotations") or {}), **ADMISSION}
    return m


CASES = {
    # the LWS docs' example: 2 subgroups of 4 TPU hosts behind a CPU leader
    "docs-tpu-multislice": tpu_lws(
        "test-sample",
        9,
        4,
        leader_tpus=False,
        annotations={f"{P}/subgroup-exclusive-topology": "cloud.google.com/gke-nodepool"},
    ),
    "tpu-leader-in-subgroup-0": tpu_lws("tpu-lead", 8, 4, leader_tpus=True),
    "tpu-leader-excluded": tpu_lws("tpu-excl", 9, 4, leader_tpus=False, policy_type="LeaderExcluded"),
    "tpu-cpu-leader-no-subgroups": tpu_lws("tpu-cpu", 4, None, leader_tpus=False),
    "exclusive-topology": tpu_lws("excl", 3, None, leader_tpus=True, annotations={f"{P}/exclusive-topology": "zone"}),
    "golden-tpu": golden("tpu"),
    "golden-subgroup-exclusive-topology": golden("subgroup-exclusive-topology"),
    "golden-subgroup-leader-excluded": golden("subgroup-leader-excluded"),
    "golden-subgroup-leader-worker": golden("subgroup-leader-worker"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_pod_carries_upstream_webhook_values_from_its_creation(case: str) -> None:
    manifest = CASES[case]
    cluster = run_to_ready(manifest)
    pods = cluster.store.list("Pod")
    lwt = manifest["spec"]["leaderWorkerTemplate"]
    assert len(pods) == manifest["spec"]["replicas"] * lwt["size"]
    for pod in pods:
        name = pod["metadata"]["name"]
        want = upstream_webhook(manifest, name)
        labels = pod["metadata"]["labels"]
        assert {k: labels.get(k) for k in want["labels"]} == want["labels"], name
        # no subgroup label where upstream sets none (a LeaderExcluded leader)
        assert (f"{P}/subgroup-key" in labels) == (f"{P}/subgroup-key" in want["labels"]), name
        containers = [c for c in pod["spec"]["containers"] if "google.com/tpu" in str(c.get("resources"))]
        if want["env"]:
            env = resolved_env(pod, containers[0])
            assert {k: env.get(k) for k in want["env"]} == want["env"], name
        else:
            assert not any("TPU_WORKER_ID" in str(c.get("env")) for c in pod["spec"]["containers"]), name
        got = pod_affinity_terms(pod)
        assert got == want["affinity"], name


def test_the_docs_example_worker_sees_only_its_subgroup_hosts() -> None:
    """LWS docs: ``TPU_WORKER_HOSTNAMES`` of ``test-sample-1-5`` lists test-sample-1-5 ... -1-8,
    ``TPU_WORKER_ID`` 0, ``TPU_NAME`` test-sample-1."""
    cluster = run_to_ready(CASES["docs-tpu-multislice"])
    pod = cluster.store.get("Pod", "default", "test-sample-1-5")
    env = resolved_env(pod, pod["spec"]["containers"][0])
    assert env["TPU_WORKER_HOSTNAMES"] == ",".join(f"test-sample-1-{j}.test-sample" for j in range(5, 9))
    assert (env["TPU_WORKER_ID"], env["TPU_NAME"], env["LWS_WORKER_INDEX"]) == ("0", "test-sample-1", "5")


def test_template_mode_pods_start_without_their_per_pod_labels() -> None:
    """Without the policy a worker starts without ``worker-index`` / ``subgroup-key`` (a ``label``
    action adds them at the next reconcile: docs/rendering.md difference 1) — what this mode removes."""
    manifest = copy.deepcopy(CASES["golden-subgroup-leader-worker"])
    manifest["metadata"]["annotations"] = {}
    cluster = SimCluster(seed=3)
    cluster.kubelet.config.instant = True
    spec = W.parse(manifest)
    for _ in range(2):
        up(W, spec, cluster, actuator=None)
        cluster.step(cluster.clock.now + 2.0)
    assert not cluster.store.list("MutatingAdmissionPolicy", "")
    worker = cluster.store.get("Pod", "default", "leaderworkerset-sample-0-9")
    assert worker is not None
    assert f"{P}/worker-index" not in worker["metadata"]["labels"]
    assert f"{P}/subgroup-key" not in worker["metadata"]["labels"]


def test_a_paused_rollout_keeps_the_policy_so_a_recreated_pod_still_gets_its_values() -> None:
    """Paused (pulumi-lws.io/paused) the reconcile registers what it observed; the policy, which
    no reconcile reads back, is registered as planned (hold.KEPT_WHILE_HELD), so Pulumi does not
    delete it and a pod the StatefulSet recreates meanwhile is admitted with its values."""
    manifest = copy.deepcopy(CASES["docs-tpu-multislice"])
    cluster = run_to_ready(manifest)
    manifest["metadata"]["annotations"]["pulumi-lws.io/paused"] = "true"  # with a new image: held mid-rollout
    manifest["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["image"] = "jax:2"
    spec = W.parse(copy.deepcopy(manifest))
    up(W, spec, cluster)
    assert len(cluster.store.list("MutatingAdmissionPolicy", "")) == 1
    pod = cluster.store.get("Pod", "default", "test-sample-1-6")
    cluster.store.delete("Pod", "default", "test-sample-1-6", grace=0)
    cluster.step(cluster.clock.now + 3.0)
    again = cluster.store.get("Pod", "default", "test-sample-1-6")
    assert again is not None and again["metadata"]["uid"] != pod["metadata"]["uid"]
    assert again["metadata"]["labels"][f"{P}/subgroup-index"] == "1"
    assert resolved_env(again, again["spec"]["containers"][0])["TPU_WORKER_ID"] == "1"
