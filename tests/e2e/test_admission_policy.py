"""Per-pod values ``admission-policy`` on the real admission chain: the MutatingAdmissionPolicy
the component renders is type-checked and evaluated by a real kube-apiserver (1.35, the policy
API at v1beta1), and every pod carries, from its creation, what upstream's pod webhook would set
(tests/support/upstream_webhook.py: labels, subgroup keys, TPU variables, exclusive affinity) —
the same expectations the simulator's CEL subset is held to."""

from __future__ import annotations

import pytest
import yaml
from e2e_harness import Invariants, roll
from support.upstream_webhook import P, pod_affinity_terms, resolved_env, tpu_lws, upstream_webhook


@pytest.mark.xfail(
    reason="found by this tier, open: the first pulumi up registers the policy and the StatefulSets together, "
    "and a real API server enforces a new MutatingAdmissionPolicy only once its informer has it, so the first "
    "pods are admitted without it (the leader lacks leaderworkerset.sigs.k8s.io/role); the StatefulSets must wait "
    "for an up that observes the policy (docs/e2e.md)",
    strict=False,
)
def test_pods_carry_upstream_webhook_values(cluster, namespace, make_stack):
    # the LWS docs' example: 2 subgroups of 4 TPU hosts behind a CPU leader, each subgroup alone
    # on its rack (cloud.google.com/gke-nodepool); one group
    manifest = tpu_lws(
        "test-sample",
        9,
        4,
        leader_tpus=False,
        annotations={f"{P}/subgroup-exclusive-topology": "cloud.google.com/gke-nodepool"},
    )
    manifest["spec"]["replicas"] = 1
    manifest["metadata"]["namespace"] = namespace
    stack = make_stack("quickstart", "lws.yaml")
    stack.manifest_path.write_text(yaml.safe_dump(manifest, sort_keys=False))

    assert roll(stack, Invariants(cluster, namespace)).complete
    assert cluster.get("mutatingadmissionpolicies.v1beta1.admissionregistration.k8s.io", namespace), (
        "no policy registered"
    )
    pods = cluster.get("pods", namespace)
    assert len(pods) == 9
    for pod in pods:
        name = pod["metadata"]["name"]
        want = upstream_webhook(manifest, name)
        labels = pod["metadata"]["labels"]
        assert {k: labels.get(k) for k in want["labels"]} == want["labels"], name
        if want["env"]:
            tpu = next(c for c in pod["spec"]["containers"] if "google.com/tpu" in str(c.get("resources")))
            env = resolved_env(pod, tpu)
            assert {k: env.get(k) for k in want["env"]} == want["env"], name
        got = pod_affinity_terms(pod)
        assert got == want["affinity"], name
    worker = next(p for p in pods if p["metadata"]["name"] == "test-sample-0-5")
    env = resolved_env(worker, worker["spec"]["containers"][0])
    assert env["TPU_WORKER_HOSTNAMES"] == ",".join(f"test-sample-0-{j}.test-sample" for j in range(5, 9))
    racks = {}
    nodes = {n["metadata"]["name"]: n for n in yaml.safe_load(cluster.kubectl("get", "nodes", "-o", "yaml"))["items"]}
    for pod in pods:
        key = pod["metadata"]["labels"].get(f"{P}/subgroup-key")
        if key and pod["metadata"]["labels"].get(f"{P}/role") == "worker":
            racks.setdefault(key, set()).add(
                nodes[pod["spec"]["nodeName"]]["metadata"]["labels"]["cloud.google.com/gke-nodepool"]
            )
    assert len(racks) == 2 and all(len(r) == 1 for r in racks.values()) and len(set().union(*racks.values())) == 2
