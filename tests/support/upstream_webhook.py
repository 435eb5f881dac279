"""Upstream LeaderWorkerSet's pod webhook, transcribed independently of the renderer: what
``pod_webhook.go::Default`` and ``accelerators/tpu.go`` give each pod (labels, subgroup keys, TPU
variables, ``SetExclusiveAffinities``), and the TPU LeaderWorkerSets the per-pod-values tests
deploy. The simulator's tests (tests/lws/e2e/test_per_pod_admission_sim.py) and the real API
server's (tests/e2e/test_admission_policy.py) check pods against the same expectations."""

from __future__ import annotations

import hashlib
import re
from typing import Any

P = "leaderworkerset.sigs.k8s.io"
TPU = {"limits": {"google.com/tpu": "4"}}
ADMISSION = {"pulumi-lws.io/per-pod-values": "admission-policy"}


def sha1(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def sub_group_index(size: int, sgs: int, worker: int) -> int:
    """Upstream ``getSubGroupIndex`` (reference §7.1, the version with the ``size % sgs`` check)."""
    if (size - 1) % sgs == 0 and size % sgs != 0:
        return (worker - 1) // sgs
    return worker // sgs


def exclusive_terms(key: str, value: str, topology: str) -> tuple[dict, dict]:
    """Upstream ``SetExclusiveAffinities``: (podAffinity term, podAntiAffinity term)."""
    return (
        {
            "labelSelector": {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]},
            "topologyKey": topology,
        },
        {
            "labelSelector": {
                "matchExpressions": [
                    {"key": key, "operator": "Exists"},
                    {"key": key, "operator": "NotIn", "values": [value]},
                ]
            },
            "topologyKey": topology,
        },
    )


def upstream_webhook(lws: dict[str, Any], pod_name: str) -> dict[str, Any]:
    """What upstream's pod webhook gives pod ``pod_name`` of ``lws`` (Shared subdomain: every
    host is ``<pod>.<lws>``): labels, TPU env of the TPU container, exclusive affinity terms."""
    name, ns = lws["metadata"]["name"], lws["metadata"].get("namespace", "default")
    ann = lws["metadata"].get("annotations") or {}
    lwt = lws["spec"]["leaderWorkerTemplate"]
    size = lwt["size"]
    sgp = lwt.get("subGroupPolicy")
    sgs = sgp.get("subGroupSize") if sgp else None
    leader_excluded = bool(sgp) and sgp.get("subGroupPolicyType") == "LeaderExcluded"
    leader_spec = (lwt.get("leaderTemplate") or lwt["workerTemplate"])["spec"]
    leader_tpus = any("google.com/tpu" in str(c.get("resources")) for c in leader_spec["containers"])
    parts = re.fullmatch(rf"{re.escape(name)}-(\d+)(?:-(\d+))?", pod_name)
    assert parts
    group, worker = int(parts.group(1)), int(parts.group(2) or 0)
    leader = f"{name}-{group}"
    is_leader = worker == 0
    labels: dict[str, str] = {f"{P}/role": "leader" if is_leader else "worker"}
    affinity: list[tuple[dict, dict]] = []
    subgroup: int | None = None
    if is_leader:
        labels[f"{P}/group-index"] = str(group)
        labels[f"{P}/group-key"] = sha1(f"{ns}/{leader}")
        if f"{P}/exclusive-topology" in ann:
            affinity.append(exclusive_terms(f"{P}/group-key", labels[f"{P}/group-key"], ann[f"{P}/exclusive-topology"]))
        if sgs and not leader_excluded:
            subgroup = 0
    else:
        labels[f"{P}/worker-index"] = str(worker)
        if sgs:
            subgroup = sub_group_index(size, sgs, worker)
    if subgroup is not None:
        labels[f"{P}/subgroup-index"] = str(subgroup)
        labels[f"{P}/subgroup-key"] = sha1(f"{leader}/{subgroup}")
        if f"{P}/subgroup-exclusive-topology" in ann:
            topology = ann[f"{P}/subgroup-exclusive-topology"]
            affinity.append(exclusive_terms(f"{P}/subgroup-key", labels[f"{P}/subgroup-key"], topology))
    spec = leader_spec if is_leader else lwt["workerTemplate"]["spec"]
    env: dict[str, str] = {}
    if any("google.com/tpu" in str(c.get("resources")) for c in spec["containers"]):
        env = upstream_tpu_env(name, leader, size, sgs if subgroup is not None else None, subgroup, worker, leader_tpus)
    return {"labels": labels, "env": env, "affinity": affinity}


def upstream_tpu_env(
    lws: str, leader: str, size: int, sgs: int | None, subgroup: int | None, worker: int, leader_tpus: bool
) -> dict[str, str]:
    """``AddTPUVariables`` / ``addTPUVariablesSubGroup`` (one TPU container), with ``TPU_NAME`` the
    leader's name (reference §7.2 and the LWS docs' example)."""

    def host(i: int | None = None) -> str:
        return f"{leader}.{lws}" if i is None else f"{leader}-{i}.{lws}"

    hosts: list[str] = []
    if sgs is not None and subgroup is not None:
        tpu_id = worker % sgs if leader_tpus else (worker - 1) % sgs
        start, end = sgs * subgroup + 1, sgs * (subgroup + 1)
        if worker == 0:
            hosts.append(host())
            end -= 1
        elif leader_tpus and subgroup == 0:
            end -= 1
            hosts.append(host())
        elif leader_tpus:
            start, end = start - 1, end - 1
        hosts += [host(i) for i in range(start, end + 1)]
    else:
        tpu_id = 0 if worker == 0 else (worker if leader_tpus else worker - 1)
        if worker == 0 or leader_tpus:
            hosts.append(host())
        hosts += [host(i) for i in range(1, size)]
    return {"TPU_WORKER_HOSTNAMES": ",".join(hosts), "TPU_WORKER_ID": str(tpu_id), "TPU_NAME": leader}


def resolved_env(pod: dict[str, Any], container: dict[str, Any]) -> dict[str, str]:
    """The container's environment as the kubelet gives it: Downward API fields of the pod as
    admitted, ``$(VAR)`` expanded against earlier variables."""
    meta = pod["metadata"]
    out: dict[str, str] = {}
    for e in container.get("env") or []:
        if "value" in e:
            out[e["name"]] = re.sub(r"\$\((\w+)\)", lambda m: out.get(m.group(1), m.group(0)), e["value"])
            continue
        path = e["valueFrom"]["fieldRef"]["fieldPath"]
        field = re.fullmatch(r"metadata\.(labels|annotations)\['([^']+)'\]", path)
        if field:
            out[e["name"]] = (meta.get(field.group(1)) or {})[field.group(2)]  # missing: KeyError (a bug)
        elif path == "metadata.name":
            out[e["name"]] = meta["name"]
        else:
            raise AssertionError(f"unexpected fieldRef {path}")
    return out


def tpu_lws(
    name: str,
    size: int,
    sgs: int | None,
    *,
    leader_tpus: bool,
    policy_type: str = "LeaderWorker",
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    lwt: dict[str, Any] = {
        "size": size,
        "leaderTemplate": {
            "spec": {
                "containers": [{"name": "leader", "image": "jax:1", **({"resources": TPU} if leader_tpus else {})}]
            }
        },
        "workerTemplate": {"spec": {"containers": [{"name": "jax", "image": "jax:1", "resources": TPU}]}},
    }
    if sgs:
        lwt["subGroupPolicy"] = {"subGroupSize": sgs, "subGroupPolicyType": policy_type}
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": name, "namespace": "default", "annotations": {**ADMISSION, **(annotations or {})}},
        "spec": {"replicas": 2, "leaderWorkerTemplate": lwt},
    }


def pod_affinity_terms(pod: dict[str, Any]) -> list[tuple[dict, dict]]:
    """A pod's required (podAffinity term, podAntiAffinity term) pairs, in the form
    :func:`upstream_webhook`'s ``affinity`` lists them."""
    affinity = pod["spec"].get("affinity") or {}
    return list(
        zip(
            (affinity.get("podAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or [],
            (affinity.get("podAntiAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or [],
        )
    )
