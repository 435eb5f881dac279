"""The words ``pulumi-lws render`` prints above a LeaderWorkerSet's objects (pure): leader and
worker StatefulSets, and what the workers wait for at the first ``pulumi up``.

Reached by the shells through the workload's optional ``first_render_header`` /
``steady_render_header`` capabilities (:mod:`pulumi_lws.cli.render_headers` has the generic words
of every other API and the invariants of the line: one line, starting ``<Kind> <namespace>/<name>:``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_lws.core.contract.workload import Reconciled
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.rollout.placement import exclusive_topology


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _who(lws: LeaderWorkerSet) -> str:
    return f"{lws.kind} {lws.namespace}/{lws.name}"


def _leader_kind(lws: LeaderWorkerSet) -> str:
    return "Deployment" if lws.spec.group_identity == "Hash" else "StatefulSet"


def _groups(lws: LeaderWorkerSet) -> str:
    return f"{_plural(lws.replicas, 'group')} of {_plural(lws.size, 'pod')}"


def _worker_sets(lws: LeaderWorkerSet, manifests: tuple[Mapping[str, Any], ...]) -> int:
    return sum(
        1 for m in manifests if m.get("kind") == "StatefulSet" and (m.get("metadata") or {}).get("name") != lws.name
    )


def _waits_for(lws: LeaderWorkerSet) -> str:
    """What the worker StatefulSets of a group wait for at the first ``pulumi up``."""
    if lws.spec.group_identity == "Hash":
        return "leader pods exist (each group's name comes from its leader pod)"
    if lws.spec.startup_policy == "LeaderReady":
        return "leader pods are Ready (startupPolicy LeaderReady)"
    key = exclusive_topology(lws)
    if key is not None:
        return f"leader pods are scheduled (exclusive topology {key}: workers are pinned to the leader's domain)"
    return "leader pods exist"


def lws_first_header(lws: LeaderWorkerSet, result: Reconciled) -> str:
    """``LeaderWorkerSet ns/name: first `pulumi up` on an empty cluster: ...``."""
    head = (
        f"{_who(lws)}: first `pulumi up` on an empty cluster, {_groups(lws)} on revision {result.stage.target_revision}"
    )
    leader = f"leader {_leader_kind(lws)}"
    workers = _worker_sets(lws, result.manifests)
    if lws.replicas == 0:
        return f"{head}: no groups yet (replicas 0)"
    if lws.size == 1:
        return f"{head}: {leader} only (size 1: no workers)"
    if workers >= lws.replicas:
        return f"{head}: {leader} and {_plural(workers, 'worker StatefulSet')}"
    return f"{head}: {leader} only; worker StatefulSets follow once {_waits_for(lws)}; --stage steady shows them"


def lws_steady_header(lws: LeaderWorkerSet, expansion: Any) -> str:
    """``LeaderWorkerSet ns/name: steady state after N reconciles on the embedded cluster ...``.
    ``expansion``: the simulator's converged fleet (``reconciled``, ``reconciles``, ``converged``,
    ``blocker``, ``pool.description``: :class:`pulumi_lws.sim.driver.expansion.Expansion`)."""
    where = f"on the embedded cluster (node pool: {expansion.pool.description})"
    stage = expansion.reconciled.stage
    if not expansion.converged:
        blocker = expansion.blocker
        why = f"blocked: {blocker.code}: {blocker.message}" if blocker else "the groups never became ready"
        return (
            f"{_who(lws)}: NOT converged after {expansion.reconciles} reconciles {where}: {why}; "
            "the objects of the last reconcile follow"
        )
    return (
        f"{_who(lws)}: steady state after {expansion.reconciles} reconciles {where}: {_groups(lws)}, "
        f"all on revision {stage.target_revision}"
    )
