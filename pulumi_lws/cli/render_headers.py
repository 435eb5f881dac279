"""The ``#`` line ``pulumi-lws render`` prints above each document: which stage, in words.

Invariant: one line, no newline, starting with ``<Kind> <namespace>/<name>:`` for a workload
(its namespace as rendered) and ``<Kind> <name>:`` for a passed-through document; the words
are derived from the objects actually printed (worker StatefulSets counted, not assumed).

:func:`first_header` / :func:`steady_header` take the document's workload: an API with its own
words sets the optional ``first_render_header`` / ``steady_render_header`` capabilities
(LeaderWorkerSet: leader/worker StatefulSets, what workers wait for, :mod:`pulumi_lws.lws.render.headers`); every other
API (ModelServing, ...) gets the generic words built from the contract alone (identity, group
count from ``budgets``, target revision from the stage) and the printed objects counted by kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_lws.cli.documents import Document
from pulumi_lws.core.contract.workload import Reconciled, Workload
from pulumi_lws.sim.driver.expansion import Expansion


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


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
    return (
        f"{_generic_who(workload, spec)}: first `pulumi up` on an empty cluster, {_plural(groups, 'group')} on "
        f"revision {result.stage.target_revision}: {_objects(result.manifests)}"
    )


def generic_steady_header(workload: Workload, spec: Any, expansion: Expansion) -> str:
    """``ModelServing ns/name: steady state after N reconciles on the embedded cluster (...): ...``."""
    where = f"on the embedded cluster (node pool: {expansion.pool.description})"
    who = _generic_who(workload, spec)
    if not expansion.converged:
        blocker = expansion.blocker
        why = f"blocked: {blocker.code}: {blocker.message}" if blocker else "the groups never became ready"
        return (
            f"{who}: NOT converged after {expansion.reconciles} reconciles {where}: {why}; "
            "the objects of the last reconcile follow"
        )
    groups = workload.budgets(spec)[""].replicas
    return (
        f"{who}: steady state after {expansion.reconciles} reconciles {where}: {_plural(groups, 'group')}, "
        f"all on revision {expansion.reconciled.stage.target_revision}: {_objects(expansion.reconciled.manifests)}"
    )


def _with_modes(workload: Workload, spec: Any, header: str) -> str:
    """``header`` plus the choices in force that change the expansion (``Workload.mode_notes``)."""
    notes = workload.mode_notes(spec)
    return "; ".join([header, *notes.values()]) if notes else header


def first_header(workload: Workload, spec: Any, result: Reconciled) -> str:
    """The header above the first stage's objects of ``spec``: the API's own words (optional
    ``first_render_header`` capability, e.g. LeaderWorkerSet's), else the generic ones."""
    own = workload.first_render_header
    header = own(spec, result) if own is not None else generic_first_header(workload, spec, result)
    return _with_modes(workload, spec, header)


def steady_header(workload: Workload, spec: Any, expansion: Expansion) -> str:
    """The header above the steady-state objects of ``spec`` (optional ``steady_render_header``)."""
    own = workload.steady_render_header
    header = own(spec, expansion) if own is not None else generic_steady_header(workload, spec, expansion)
    return _with_modes(workload, spec, header)


def passthrough_header(doc: Document) -> str:
    """``Service vllm-leader: passed through unchanged (...)``."""
    return f"{doc.kind or '(no kind)'} {doc.name or '(no name)'}: passed through unchanged (not a workload pulumi-lws expands)"
