"""What the pod templates carry when a MutatingAdmissionPolicy sets the per-pod values
(:mod:`pulumi_lws.lws.render.admission`), and upstream's per-pod TPU arithmetic.

* worker templates get per-group tables the policy indexes by the pod's subgroup (CEL has no
  sha1 and no string formatting of lists): ``pulumi-lws.io/subgroup-key.<s>`` and, for TPU
  workers with subgroups, ``pulumi-lws.io/subgroup-tpu-{hostnames,addresses}.<s>``; TPU workers
  also ``pulumi-lws.io/tpu-containers`` (the ``TPU_WORKER_ID`` arithmetic);
* the worker's TPU env vars whose value differs per pod read the pod's own annotations, which the
  policy writes at creation, through the Downward API; every other TPU variable is static, and all
  of them stand in upstream's order (``add_tpu_env``'s);
* a leader of subgroup 0 gets its subgroup's TPU variables statically (``$(LWS_LEADER_NAME)``).

Pure; no function mutates its inputs except the ``add_*`` ones (in place, documented).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from pulumi_lws.lws import names
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.group_shape import subgroup_index
from pulumi_lws.lws.render.pod import (
    TPU_NAME,
    TPU_PROCESS_ADDRESSES,
    TPU_PROCESS_PORT,
    TPU_WORKER_HOSTNAMES,
    TPU_WORKER_ID,
    field_env,
    sets_tpu_variables,
    tpu_containers,
    tpu_host_lists,
    tpu_ports,
    value_env,
)

#: per-group tables on the worker template (admission mode only), indexed by subgroup
SUBGROUP_KEY_TABLE = "pulumi-lws.io/subgroup-key."
SUBGROUP_TPU_HOSTNAMES_TABLE = "pulumi-lws.io/subgroup-tpu-hostnames."
SUBGROUP_TPU_ADDRESSES_TABLE = "pulumi-lws.io/subgroup-tpu-addresses."
#: number of TPU containers of the worker template (the policy's TPU_WORKER_ID arithmetic)
TPU_CONTAINERS = "pulumi-lws.io/tpu-containers"
#: per-pod annotations the policy writes; the worker's TPU env vars read them (Downward API)
POD_TPU_HOSTNAMES = "pulumi-lws.io/tpu-worker-hostnames"
POD_TPU_ADDRESSES = "pulumi-lws.io/tpu-process-addresses"
POD_TPU_WORKER_ID = "pulumi-lws.io/tpu-worker-id."


# ---- upstream's per-pod arithmetic (pure; the policy's CEL says the same) ------------------------


def subgroup_tpu_hosts(
    leader_host: str,
    worker_host: Callable[[int], str],
    subgroup_size: int,
    subgroup: int,
    *,
    is_leader: bool,
    leader_tpus: bool,
) -> list[str]:
    """Upstream ``addTPUVariablesSubGroup`` hostnames of subgroup ``subgroup``, literally (its
    ``start``/``end`` arithmetic, including the shift when the leader holds TPUs)."""
    start, end = subgroup_size * subgroup + 1, subgroup_size * (subgroup + 1)
    hosts: list[str] = []
    if is_leader:
        hosts.append(leader_host)
        end -= 1
    elif leader_tpus and subgroup == 0:
        end -= 1
        hosts.append(leader_host)
    elif leader_tpus:
        start, end = start - 1, end - 1
    return hosts + [worker_host(i) for i in range(start, end + 1)]


# ---- what the pod templates carry in admission mode ----------------------------------------------


def worker_subgroups(size: int, subgroup_size: int) -> list[int]:
    """The subgroup indices workers ``1..size-1`` fall in (upstream ``getSubGroupIndex``)."""
    return sorted({subgroup_index(size, subgroup_size, w) for w in range(1, size)})


def subgroup_key_table(leader: str, size: int, subgroup_size: int) -> dict[str, str]:
    """``pulumi-lws.io/subgroup-key.<s>`` = ``sha1("<leader>/<s>")`` for every worker subgroup."""
    return {f"{SUBGROUP_KEY_TABLE}{s}": names.subgroup_key(leader, s) for s in worker_subgroups(size, subgroup_size)}


def add_worker_tpu_env(
    spec: dict[str, Any],
    leader_host: str,
    worker_host: Callable[[int], str],
    *,
    size: int,
    subgroup_size: int | None,
    leader_tpus: bool,
    tpu_name: str,
) -> dict[str, str]:
    """TPU variables of a worker template whose per-pod values the policy writes (in place):
    ``TPU_WORKER_ID`` (and, with subgroups, ``TPU_WORKER_HOSTNAMES`` / ``TPU_PROCESS_ADDRESSES``)
    read the pod's own annotations through the Downward API; the rest is static, in upstream's
    order. Returns the template annotations the policy reads (container count, subgroup tables);
    {} when no container requests TPUs or one already sets the variables (upstream skips then)."""
    tpu = tpu_containers(spec)
    if not tpu or sets_tpu_variables(tpu):
        return {}
    ports = tpu_ports(tpu)
    annotations = {TPU_CONTAINERS: str(len(tpu))}
    if subgroup_size:
        for s in worker_subgroups(size, subgroup_size):
            hosts = subgroup_tpu_hosts(
                leader_host, worker_host, subgroup_size, s, is_leader=False, leader_tpus=leader_tpus
            )
            hostnames, addresses = tpu_host_lists(hosts, ports)
            annotations[f"{SUBGROUP_TPU_HOSTNAMES_TABLE}{s}"] = hostnames
            annotations[f"{SUBGROUP_TPU_ADDRESSES_TABLE}{s}"] = addresses
        hostnames_env = field_env(TPU_WORKER_HOSTNAMES, f"metadata.annotations['{POD_TPU_HOSTNAMES}']")
        addresses_env = field_env(TPU_PROCESS_ADDRESSES, f"metadata.annotations['{POD_TPU_ADDRESSES}']")
    else:
        hosts = ([leader_host] if leader_tpus else []) + [worker_host(j) for j in range(1, size)]
        hostnames, addresses = tpu_host_lists(hosts, ports)
        hostnames_env, addresses_env = (
            value_env(TPU_WORKER_HOSTNAMES, hostnames),
            value_env(TPU_PROCESS_ADDRESSES, addresses),
        )
    for i, container in enumerate(tpu):
        env = list(container.get("env") or [])  # a new list: the template's may be shared (decorated)
        container["env"] = env
        env.append(dict(hostnames_env))
        env.append(field_env(TPU_WORKER_ID, f"metadata.annotations['{POD_TPU_WORKER_ID}{i}']"))
        env.append(value_env(TPU_NAME, tpu_name))
        env.append(dict(addresses_env))
        if not any(e.get("name") == TPU_PROCESS_PORT and "value" in e for e in env):  # as add_tpu_env
            env.append(value_env(TPU_PROCESS_PORT, ports[i]))
    return annotations


def leader_subgroup_tpu_hosts(leader_host: str, worker_host: Callable[[int], str], subgroup_size: int) -> list[str]:
    """The leader's ``TPU_WORKER_HOSTNAMES`` with subgroups (it is subgroup 0's first host): the
    same for every leader up to ``$(LWS_LEADER_NAME)``, so the template carries it."""
    return subgroup_tpu_hosts(leader_host, worker_host, subgroup_size, 0, is_leader=True, leader_tpus=True)


def worker_tpu_containers(revisions: Iterable[LeaderWorkerSet]) -> int:
    """The most TPU containers a worker template of ``revisions`` has (one ``TPU_WORKER_ID``
    annotation per container index), whether or not its groups render now."""
    counts = [
        len(tpu_containers((at.spec.leader_worker_template.worker_template or {}).get("spec") or {}))
        for at in revisions
    ]
    return max(counts, default=0)
