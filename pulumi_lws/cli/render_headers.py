"""The ``#`` line ``pulumi-lws render`` prints above each document: which stage, in words.

Invariant: one line, no newline, starting with ``<Kind> <namespace>/<name>:`` for a workload
(its namespace as rendered) and ``<Kind> <name>:`` for a passed-through document; the words
are derived from the objects actually printed (worker StatefulSets counted, not assumed).

:func:`first_header` / :func:`steady_header` take the document's workload: LeaderWorkerSet has
its own words (leader/worker StatefulSets, what workers wait for: :data:`HEADERS`); every other
API (ModelServing, ...) gets the generic words built from the contract alone (identity, group
count from ``budgets``, target revision from the stage) and the printed objects counted by kind.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_lws.cli.documents import Document
from pulumi_lws.core.workload import Reconciled, Workload
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.rollout.placement import exclusive_topology
from pulumi_lws.sim.expansion import Expansion


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _who(lws: LeaderWorkerSet) -> str:
    return f"{lws.kind} {lws.namespace}/{lws.name}"


def _leader_kind(lws: LeaderWorkerSet) -> str:
    return "Deployment" if lws.spec.group_identity == "Hash" else "StatefulSet"


def _groups(lws: LeaderWorkerSet) -> str:
    return f"{_plural(lws.replicas, 'group')} of {_plural(lws.size, 'pod')}"


def _worker_sets(lws: LeaderWorkerSet, manifests: tuple[Mapping[str, Any], ...]) -> int:
    return sum(1 for m in manifests if m.get("kind") == "StatefulSet" and (m.get("metadata") or {}).get("name") != lws.name)


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
    head = f"{_who(lws)}: first `pulumi up` on an empty cluster, {_groups(lws)} on revision {result.stage.target_revision}"
    leader = f"leader {_leader_kind(lws)}"
    workers = _worker_sets(lws, result.manifests)
    if lws.replicas == 0:
        return f"{head}: no groups yet (replicas 0)"
    if lws.size == 1:
        return f"{head}: {leader} only (size 1: no workers)"
    if workers >= lws.replicas:
        return f"{head}: {leader} and {_plural(workers, 'worker StatefulSet')}"
    return (f"{head}: {leader} only; worker StatefulSets follow once {_waits_for(lws)}; "
            "--stage steady shows them")


def lws_steady_header(lws: LeaderWorkerSet, expansion: Expansion) -> str:
    """``LeaderWorkerSet ns/name: steady state after N reconciles on the embedded cluster ...``."""
    where = f"on the embedded cluster (node pool: {expansion.pool.description})"
    stage = expansion.reconciled.stage
    if not expansion.converged:
        blocker = expansion.blocker
        why = f"blocked: {blocker.code}: {blocker.message}" if blocker else "the groups never became ready"
        return (f"{_who(lws)}: NOT converged after {expansion.reconciles} reconciles {where}: {why}; "
                "the objects of the last reconcile follow")
    return (f"{_who(lws)}: steady state after {expansion.reconciles} reconciles {where}: {_groups(lws)}, "
            f"all on revision {stage.target_revision}")


def _objects(manifests: tuple[Mapping[str, Any], ...]) -> str:
    """``8 StatefulSets, 8 Services, 1 ControllerRevision`` (kinds in first-printed order)."""
    counts: dict[str, int] = {}
    for m in manifests:
        kind = str(m.get("kind") or "?")
        counts[kind] = counts.get(kind, 0) + 1
    return ", ".join(_plural(n, kind) for kind, n in counts.items()) or "no objects"


def _generic_who(workload: Workload, spec: Any) -> str:
    namespace, name = workload.identity(spec)
    return f"{workload.kind} {namespace}/{name}"


def generic_first_header(workload: Workload, spec: Any, result: Reconciled) -> str:
    """``ModelServing ns/name: first `pulumi up` on an empty cluster, 4 groups on revision R: <objects>``."""
    groups = workload.budgets(spec)[""].replicas
    return (f"{_generic_who(workload, spec)}: first `pulumi up` on an empty cluster, {_plural(groups, 'group')} on "
            f"revision {result.stage.target_revision}: {_objects(result.manifests)}")


def generic_steady_header(workload: Workload, spec: Any, expansion: Expansion) -> str:
    """``ModelServing ns/name: steady state after N reconciles on the embedded cluster (...): ...``."""
    where = f"on the embedded cluster (node pool: {expansion.pool.description})"
    who = _generic_who(workload, spec)
    if not expansion.converged:
        blocker = expansion.blocker
        why = f"blocked: {blocker.code}: {blocker.message}" if blocker else "the groups never became ready"
        return (f"{who}: NOT converged after {expansion.reconciles} reconciles {where}: {why}; "
                "the objects of the last reconcile follow")
    groups = workload.budgets(spec)[""].replicas
    return (f"{who}: steady state after {expansion.reconciles} reconciles {where}: {_plural(groups, 'group')}, "
            f"all on revision {expansion.reconciled.stage.target_revision}: {_objects(expansion.reconciled.manifests)}")


#: kind -> (first, steady) header functions with API-specific words; other kinds: the generic ones.
HEADERS = {"LeaderWorkerSet": (lws_first_header, lws_steady_header)}


def first_header(workload: Workload, spec: Any, result: Reconciled) -> str:
    """The header above the first stage's objects of ``spec``."""
    own = HEADERS.get(workload.kind)
    return own[0](spec, result) if own else generic_first_header(workload, spec, result)


def steady_header(workload: Workload, spec: Any, expansion: Expansion) -> str:
    """The header above the steady-state objects of ``spec``."""
    own = HEADERS.get(workload.kind)
    return own[1](spec, expansion) if own else generic_steady_header(workload, spec, expansion)


def passthrough_header(doc: Document) -> str:
    """``Service vllm-leader: passed through unchanged (...)``."""
    return f"{doc.kind or '(no kind)'} {doc.name or '(no name)'}: passed through unchanged (not a workload pulumi-lws expands)"
