"""What a stage's declared objects ask the scheduler for: accelerators, CPU and memory (pure).

From the rendered manifests of one reconcile — every API's (LeaderWorkerSet, ModelServing,
DisaggregatedSet) workloads are StatefulSets and Deployments with ``spec.replicas`` and a pod
template, plus bare Pods — so a shell needs no per-kind code: the demand of a stage is
Σ replicas x the pod template's effective requests.

A pod's effective request per resource is Kubernetes' (the scheduler's ``computePodResourceRequest``):
the sum over ``containers`` (a container without a request for a resource it limits requests its
limit: the API server defaults ``requests`` to ``limits``), the largest ``initContainers`` value if
higher, plus ``spec.overhead``. Accelerators (``nvidia.com/gpu``, ``amd.com/gpu``,
``google.com/tpu``, any extended resource with a ``/`` in its name) are listed first.

Invariant: exact arithmetic (:mod:`pulumi_lws.core.k8s.quantity`); the demand of a list of manifests
is independent of their order; objects without a pod template count for nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from pulumi_lws.core.k8s.quantity import Amount, add_amounts, format_quantity, parse_quantity

#: the kinds whose pod template runs ``spec.replicas`` times
REPLICATED = ("StatefulSet", "Deployment", "ReplicaSet")
STANDARD = ("cpu", "memory", "ephemeral-storage")

Demand = dict[str, Amount]


def container_request(container: Mapping[str, Any]) -> Demand:
    """One container's requests, a limit standing in for an absent request (API-server default)."""
    resources = container.get("resources") or {}
    merged = {**dict(resources.get("limits") or {}), **dict(resources.get("requests") or {})}
    return {name: parse_quantity(q) for name, q in merged.items()}


def pod_demand(pod_spec: Mapping[str, Any] | None) -> Demand:
    """A pod's effective request per resource (module docstring)."""
    spec = pod_spec or {}
    total: Demand = {}
    for c in spec.get("containers") or []:
        add_amounts(total, container_request(c))
    for c in spec.get("initContainers") or []:
        for name, (value, binary) in container_request(c).items():
            have = total.get(name, (Decimal(0), False))
            if value > have[0]:
                total[name] = (value, have[1] or binary)
    add_amounts(total, {n: parse_quantity(q) for n, q in (spec.get("overhead") or {}).items()})
    return total


def _replicas(manifest: Mapping[str, Any]) -> int:
    if manifest.get("kind") == "Pod":
        return 1
    value = (manifest.get("spec") or {}).get("replicas")
    return 1 if value is None else int(value) if isinstance(value, (int, str)) and str(value).isdigit() else 0


def _pod_spec(manifest: Mapping[str, Any]) -> Mapping[str, Any] | None:
    if manifest.get("kind") == "Pod":
        return manifest.get("spec") or {}
    if manifest.get("kind") in REPLICATED:
        return ((manifest.get("spec") or {}).get("template") or {}).get("spec") or {}
    return None


def manifest_demand(manifests: Iterable[Mapping[str, Any]]) -> Demand:
    """Σ replicas x effective pod requests over the workload manifests (module docstring)."""
    total: Demand = {}
    for m in manifests:
        spec = _pod_spec(m)
        if spec is None:
            continue
        n = _replicas(m)
        if n > 0:
            add_amounts(total, pod_demand(spec), n)
    return total


def peak(demands: Iterable[Mapping[str, Amount]]) -> Demand:
    """Per resource, the largest amount among ``demands`` (the peak of a stage's observations)."""
    out: Demand = {}
    for d in demands:
        for name, (value, binary) in d.items():
            have = out.get(name)
            if have is None or value > have[0]:
                out[name] = (value, binary or (have[1] if have else False))
    return out


def is_accelerator(resource: str) -> bool:
    """An extended resource (``vendor/name``: GPUs, TPUs, ...), not hugepages or a standard one."""
    return "/" in resource and not resource.startswith(("hugepages-", "kubernetes.io/"))


def ordered(demand: Mapping[str, Amount]) -> list[tuple[str, str]]:
    """``(resource, quantity)`` with accelerators first (by name), then cpu, memory, the rest."""

    def key(name: str) -> tuple[int, int, str]:
        if is_accelerator(name):
            return (0, 0, name)
        return (1, STANDARD.index(name), name) if name in STANDARD else (2, 0, name)

    return [(name, format_quantity(*demand[name])) for name in sorted(demand, key=key) if demand[name][0] > 0]


def demand_text(demand: Mapping[str, Amount]) -> str:
    """``16 nvidia.com/gpu, 64 cpu, 256Gi memory`` (``none`` when nothing is requested)."""
    parts = [f"{q} {name}" for name, q in ordered(demand)]
    return ", ".join(parts) if parts else "none"
