"""Pod-template decoration: what upstream's pod webhook adds, expressed statically where possible.

Used by every renderer (Ordinal today, Hash and later APIs next). All functions are pure; the
ones named ``with_*``/``decorated`` return a deep copy and never mutate their input.

Invariants:
* LWS env vars come FIRST in every container and initContainer, in upstream order, and replace
  user variables of the same name (upstream PR #152). A value that differs per pod of one
  StatefulSet is taken from the Downward API; ``$(VAR)`` references only point at variables
  defined earlier in the same list (Kubernetes expands nothing else).
* Controller-owned labels/annotations win over user ones on conflict.
* Affinity terms are appended to the user's affinity, never replacing it, and only once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pulumi_lws.core.k8s.copying import json_copy
from pulumi_lws.core.k8s.manifests import merged
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.group_shape import container_requests_tpus

TPU_WORKER_HOSTNAMES = "TPU_WORKER_HOSTNAMES"
TPU_WORKER_ID = "TPU_WORKER_ID"
TPU_NAME = "TPU_NAME"
TPU_PROCESS_ADDRESSES = "TPU_PROCESS_ADDRESSES"
TPU_PROCESS_PORT = "TPU_PROCESS_PORT"
TPU_DEFAULT_PORT = 8476

LWS_LEADER_ADDRESS = "LWS_LEADER_ADDRESS"
LWS_GROUP_SIZE = "LWS_GROUP_SIZE"
LWS_WORKER_INDEX = "LWS_WORKER_INDEX"
#: pulumi-lws helper (not upstream): the leader pod's own name, from the Downward API, so that
#: ``LWS_LEADER_ADDRESS`` can be built with ``$(LWS_LEADER_NAME)`` in a template shared by all leaders.
LWS_LEADER_NAME = "LWS_LEADER_NAME"
LEADER_NAME_REF = f"$({LWS_LEADER_NAME})"


# ---- env vars -------------------------------------------------------------------------------


def field_env(name: str, field_path: str) -> dict[str, Any]:
    """An env var from the Downward API (``fieldRef``)."""
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": field_path}}}


def value_env(name: str, value: str) -> dict[str, Any]:
    return {"name": name, "value": value}


def pod_index_env(name: str) -> dict[str, Any]:
    """The StatefulSet pod ordinal (label ``apps.kubernetes.io/pod-index``, Kubernetes >= 1.28)."""
    return field_env(name, f"metadata.labels['{L.POD_INDEX}']")


def leader_lws_env(subdomain: str, namespace: str, size: int) -> list[dict[str, Any]]:
    """LWS variables for a leader template shared by every leader pod of a StatefulSet.

    ``LWS_LEADER_NAME`` (helper, first) = the pod's own name; ``LWS_LEADER_ADDRESS`` =
    ``$(LWS_LEADER_NAME).<subdomain>.<namespace>``; worker index is always "0".
    """
    return [
        field_env(LWS_LEADER_NAME, "metadata.name"),
        value_env(LWS_LEADER_ADDRESS, f"{LEADER_NAME_REF}.{subdomain}.{namespace}"),
        value_env(LWS_GROUP_SIZE, str(size)),
        value_env(LWS_WORKER_INDEX, "0"),
    ]


def worker_lws_env(leader_address: str, size: int) -> list[dict[str, Any]]:
    """LWS variables for a worker template: leader address is static (one StatefulSet per group),
    the worker index is the pod ordinal from the Downward API."""
    return [
        value_env(LWS_LEADER_ADDRESS, leader_address),
        value_env(LWS_GROUP_SIZE, str(size)),
        pod_index_env(LWS_WORKER_INDEX),
    ]


def _containers(spec: Mapping[str, Any]) -> Iterable[dict[str, Any]]:
    yield from spec.get("initContainers") or []
    yield from spec.get("containers") or []


def prepend_env(spec: dict[str, Any], env: list[dict[str, Any]]) -> None:
    """Insert ``env`` first in every (init)container of ``spec`` (in place), dropping same-named
    user variables."""
    names = {e["name"] for e in env}
    first = True
    for container in _containers(spec):
        user = [e for e in container.get("env") or [] if e.get("name") not in names]
        # the first container takes ``env`` itself (callers build it per call), later ones copies:
        # no dict is shared by two containers of one manifest
        container["env"] = (list(env) if first else [json_copy(e) for e in env]) + user
        first = False


# ---- TPU ------------------------------------------------------------------------------------


def add_tpu_env(
    spec: dict[str, Any], hosts: list[str], tpu_name: str, first_id: int | None, id_from_pod_index: bool = False
) -> None:
    """Append TPU variables (§7.2) to each TPU container of ``spec`` (in place).

    ``hosts``: the group's hosts in order (leader first when it requests TPUs). ``first_id``:
    this pod's worker index × number of TPU containers when static; with ``id_from_pod_index``
    (one TPU container, leader has TPUs) ``TPU_WORKER_ID`` is the pod ordinal via the Downward
    API; otherwise it is omitted. Skipped entirely when a TPU container already sets
    ``TPU_WORKER_HOSTNAMES`` or ``TPU_WORKER_ID`` (upstream rule).
    """
    tpu = [c for c in spec.get("containers") or [] if container_requests_tpus(c)]
    if not tpu or any(e.get("name") in (TPU_WORKER_HOSTNAMES, TPU_WORKER_ID) for c in tpu for e in c.get("env") or []):
        return
    ports = tpu_ports(tpu)
    names, addresses = tpu_host_lists(hosts, ports)
    for i, container in enumerate(tpu):
        env = list(container.get("env") or [])  # a new list: the template's may be shared (decorated)
        container["env"] = env
        env.append(value_env(TPU_WORKER_HOSTNAMES, names))
        if id_from_pod_index:
            env.append(pod_index_env(TPU_WORKER_ID))
        elif first_id is not None:
            env.append(value_env(TPU_WORKER_ID, str(first_id + i)))
        env.append(value_env(TPU_NAME, tpu_name))
        env.append(value_env(TPU_PROCESS_ADDRESSES, addresses))
        if _user_port(container) is None:
            env.append(value_env(TPU_PROCESS_PORT, ports[i]))


def tpu_containers(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The containers of ``spec`` that request TPUs, in order (they get the TPU variables)."""
    return [c for c in spec.get("containers") or [] if container_requests_tpus(c)]


def tpu_ports(tpu: list[dict[str, Any]]) -> list[str]:
    """``TPU_PROCESS_PORT`` of each TPU container: the user's, else 8476 + its index."""
    return [_user_port(c) or str(TPU_DEFAULT_PORT + i) for i, c in enumerate(tpu)]


def tpu_host_lists(hosts: list[str], ports: list[str]) -> tuple[str, str]:
    """(``TPU_WORKER_HOSTNAMES``, ``TPU_PROCESS_ADDRESSES``) of ``hosts``: each host once per TPU
    container, and each host with each container's port."""
    return ",".join(h for h in hosts for _ in ports), ",".join(f"{h}:{p}" for h in hosts for p in ports)


def sets_tpu_variables(tpu: list[dict[str, Any]]) -> bool:
    """Upstream skips the TPU variables when a TPU container already sets one of them."""
    return any(e.get("name") in (TPU_WORKER_HOSTNAMES, TPU_WORKER_ID) for c in tpu for e in c.get("env") or [])


def _user_port(container: Mapping[str, Any]) -> str | None:
    for e in container.get("env") or []:
        if e.get("name") == TPU_PROCESS_PORT and "value" in e:
            return str(e["value"])
    return None


# ---- labels / annotations -------------------------------------------------------------------


def decorated(
    template: Mapping[str, Any] | None, labels: Mapping[str, str], annotations: Mapping[str, str]
) -> dict[str, Any]:
    """A pod template with controller labels/annotations merged into its metadata, built fresh:
    new metadata, spec and (init)container dicts; everything below them (resources, volumes,
    affinity, user env entries...) is shared with ``template`` and must not be mutated in place —
    the helpers here replace what they change (copy on write), so a fleet of N groups costs N
    small dicts, not N deep copies (docs/performance.md)."""
    src = dict(template or {})
    meta = dict(src.pop("metadata", None) or {})
    meta["labels"] = merged(meta.get("labels"), labels)
    ann = merged(meta.get("annotations"), annotations)
    if ann:
        meta["annotations"] = ann
    else:
        meta.pop("annotations", None)
    spec = dict(src.pop("spec", None) or {})
    for key in ("initContainers", "containers"):
        if isinstance(spec.get(key), list):
            spec[key] = [dict(c) if isinstance(c, Mapping) else c for c in spec[key]]
    return {"metadata": meta, **src, "spec": spec}


def group_annotations(size: int, lws_annotations: Mapping[str, str], subgroup: Any | None) -> dict[str, str]:
    """Pod annotations shared by leader and worker templates: size, exclusive topology, subgroups."""
    out = {L.SIZE: str(size)}
    topology = lws_annotations.get(L.EXCLUSIVE_TOPOLOGY)
    if topology:
        out[L.EXCLUSIVE_TOPOLOGY] = topology
    if subgroup is not None:
        out[L.SUBGROUP_POLICY_TYPE] = subgroup.sub_group_policy_type
        if subgroup.sub_group_size is not None:
            out[L.SUBGROUP_SIZE] = str(subgroup.sub_group_size)
        sg_topology = lws_annotations.get(L.SUBGROUP_EXCLUSIVE_TOPOLOGY)
        if sg_topology:
            out[L.SUBGROUP_EXCLUSIVE_TOPOLOGY] = sg_topology
    return out


# ---- subgroups ------------------------------------------------------------------------------


# ---- affinity / placement -------------------------------------------------------------------


def _append_term(spec: dict[str, Any], kind: str, term: dict[str, Any]) -> None:
    # copy on write: the affinity may be the (shared) user template's
    affinity = dict(spec.get("affinity") or {})
    section = dict(affinity.get(kind) or {})
    terms = list(section.get("requiredDuringSchedulingIgnoredDuringExecution") or [])
    if term not in terms:
        terms.append(json_copy(term))
    section["requiredDuringSchedulingIgnoredDuringExecution"] = terms
    affinity[kind] = section
    spec["affinity"] = affinity


def leader_exclusive_term(topology_key: str) -> dict[str, Any]:
    """Required anti-affinity term of a leader: no other LWS leader in the same domain.

    Leaders of every LWS carry ``worker-index: "0"`` and a ``name`` label, so one group per
    domain holds without the (per-pod) group-key label upstream's webhook uses.
    """
    return {
        "labelSelector": {
            "matchExpressions": [
                {"key": L.NAME, "operator": "Exists"},
                {"key": L.WORKER_INDEX, "operator": "In", "values": ["0"]},
            ]
        },
        "topologyKey": topology_key,
    }


def add_leader_exclusive_affinity(spec: dict[str, Any], topology_key: str) -> None:
    _append_term(spec, "podAntiAffinity", leader_exclusive_term(topology_key))


def add_key_exclusive_affinity(spec: dict[str, Any], label_key: str, value: str, topology_key: str) -> None:
    """Upstream ``SetExclusiveAffinities`` for a static key: together with pods of the same key,
    apart from pods carrying another key (in place, idempotent)."""
    _append_term(
        spec,
        "podAffinity",
        {
            "labelSelector": {"matchExpressions": [{"key": label_key, "operator": "In", "values": [value]}]},
            "topologyKey": topology_key,
        },
    )
    _append_term(
        spec,
        "podAntiAffinity",
        {
            "labelSelector": {
                "matchExpressions": [
                    {"key": label_key, "operator": "Exists"},
                    {"key": label_key, "operator": "NotIn", "values": [value]},
                ]
            },
            "topologyKey": topology_key,
        },
    )


def pin_to_domain(spec: dict[str, Any], topology_key: str, value: str) -> None:
    """Upstream ``setNodeSelectorForWorkerPods``: workers go to their leader's domain (in place)."""
    selector = dict(spec.get("nodeSelector") or {})
    selector[topology_key] = value
    spec["nodeSelector"] = selector
