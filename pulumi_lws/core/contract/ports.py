"""The ports the shells implement: an :class:`Observer` reads one workload's objects, an
:class:`Actuator` executes a stage's imperative actions. Planners never see either.

A :class:`Scope` says what one reconcile reads: objects of ``kinds`` in one namespace whose labels
contain ``selector`` (plus every Node when ``nodes``; plus every Node and every bound pod of the
cluster, as :attr:`Snapshot.capacity`, when ``capacity``). Each API builds its own scope
(:meth:`pulumi_lws.core.contract.workload.Workload.scope`), so observers know no API's labels or kinds.

A selector value is a label value (``key=value``), None (the key exists: ``key``) or
:data:`ABSENT` (the key does not exist: ``!key``); every observer sends the three forms
server-side and :func:`label_matches` checks them again client-side.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from pulumi_lws.core.contract.snapshot import EMPTY, Snapshot, labels_of
from pulumi_lws.core.contract.stage import Action


class LabelRequirement(enum.Enum):
    """A selector value that is no label value."""

    #: the key must not exist (``!key``, ``operator: DoesNotExist``)
    ABSENT = "DoesNotExist"


#: a selector value meaning "the key is absent" (``labelSelector=!key``)
ABSENT = LabelRequirement.ABSENT
#: what a selector maps a key to: a label value, None (the key exists) or :data:`ABSENT`
SelectorValue = str | None | LabelRequirement


def label_matches(labels: Mapping[str, str], selector: Mapping[str, SelectorValue]) -> bool:
    """Whether ``labels`` satisfy every requirement of ``selector`` (module docstring)."""
    for key, value in selector.items():
        if value is None:
            if key not in labels:
                return False
        elif value is ABSENT:
            if key in labels:
                return False
        elif labels.get(key) != value:
            return False
    return True


def selector_text(selector: Mapping[str, SelectorValue]) -> str:
    """``selector`` as a ``labelSelector`` query reads: ``k=v``, ``k`` (exists), ``!k`` (absent), in key order."""
    return ",".join(k if v is None else f"!{k}" if v is ABSENT else f"{k}={v}" for k, v in sorted(selector.items()))


def without_labels(selector: Mapping[str, SelectorValue], *keys: str) -> tuple[tuple[str, SelectorValue], ...]:
    """``selector`` plus "``key`` is absent" (``!key``) for each of ``keys``: the ControllerRevision
    selector of an API, which leaves out the StatefulSets' own history revisions it does not read.
    The StatefulSet controller keeps up to ``revisionHistoryLimit`` revisions per StatefulSet, each
    a whole pod template labelled like the template — the API's name label included — plus
    ``controller.kubernetes.io/hash`` (:data:`~pulumi_lws.core.k8s.keys.STS_HISTORY_HASH`), so a
    name selector alone reads them all, per group. No API's own revision (pulumi-lws's, upstream
    LeaderWorkerSet's, Kthena's) carries that key or a per-group label."""
    return (*selector.items(), *((key, ABSENT) for key in keys))


@dataclass(frozen=True)
class Scope:
    """One workload's objects: ``kinds`` in ``namespace`` labelled with every ``selector`` pair."""

    namespace: str
    selector: Mapping[str, str]
    kinds: tuple[str, ...]
    nodes: bool = False
    #: also read every Node and every pod bound to one, in any namespace, into ``Snapshot.capacity``
    #: (the opt-in capacity check, :mod:`pulumi_lws.core.features.fit`); the Nodes do not join the
    #: snapshot's objects, so a planner sees exactly what it sees without the opt-in
    capacity: bool = False
    #: kinds read with ANOTHER selector instead of ``selector``: ``((kind, ((key, value), ...)), ...)``,
    #: a value None meaning "the key exists" (``labelSelector=key``), :data:`ABSENT` "the key does
    #: not exist" (``!key``). Still one LIST per kind: an API whose objects of one kind are labelled
    #: differently (a DisaggregatedSet adopting upstream's ControllerRevisions) narrows them
    #: client-side itself; every API's ControllerRevisions are read with :func:`without_labels`.
    kind_selectors: tuple[tuple[str, tuple[tuple[str, SelectorValue], ...]], ...] = ()

    def selector_for(self, kind: str) -> Mapping[str, SelectorValue]:
        """The label selector ``kind`` is LISTed with (None value: the key exists; ABSENT: it does not)."""
        for k, pairs in self.kind_selectors:
            if k == kind:
                return dict(pairs)
        return dict(self.selector)

    def selects(self, obj: Mapping[str, object], kind: str | None = None) -> bool:
        """Client-side check of the label selector (defensive: a server may ignore it)."""
        return label_matches(labels_of(obj), self.selector_for(kind) if kind is not None else self.selector)


class Observer(Protocol):
    """Reads the objects of one :class:`Scope`. One call = at most a handful of LISTs, whatever the size."""

    def observe(self, scope: Scope) -> Snapshot: ...


class EmptyObserver:
    """Observes nothing: renders the creation stage (used by ``pulumi-lws render``)."""

    def observe(self, scope: Scope) -> Snapshot:
        return EMPTY


class Actuator(Protocol):
    """Executes planned actions in order; returns one human-readable result line per action.

    On a failure it stops (later actions are not run: the next reconcile re-plans them) and raises
    :class:`ActionError` carrying the result lines of the actions applied before it."""

    def execute(self, namespace: str, actions: Sequence[Action]) -> list[str]: ...


class ClusterError(RuntimeError):
    """A backend could not read or change the cluster. The message names the resource or the
    action, the cluster (context and server) or the kubeconfig file, and the cause (the HTTP
    status when there was one). The CLI exits 4 on it; a component fails ``pulumi up`` with
    ``NAME: cluster error: MESSAGE`` (:data:`CLUSTER_ERROR`), one line."""


#: the words a component's ``pulumi up`` failure puts before a ClusterError's message, so a
#: driver reading only the engine's output (``pulumi-lws rollout``) can tell a cluster fault
CLUSTER_ERROR = "cluster error: "


class ObserveError(ClusterError):
    """A read of a :class:`Scope` failed (after retries): nothing may be planned from the part
    that was read."""


class ActionError(ClusterError):
    """One action failed (after retries). ``failure`` says which and why; ``action`` is the one
    that failed, ``status`` its HTTP status (None: no response, e.g. a timeout); ``applied`` are
    the result lines of the actions of the same call applied before it, in order, and
    ``position`` = (1-based index, total) of the failed one. The message lists them all."""

    def __init__(
        self,
        failure: str,
        *,
        action: Action,
        applied: Sequence[str] = (),
        status: int | None = None,
        position: tuple[int, int] | None = None,
    ) -> None:
        self.failure, self.action, self.status = failure, action, status
        self.applied, self.position = tuple(applied), position
        super().__init__(self._message())

    def _message(self) -> str:
        if self.position is None:
            return self.failure
        index, total = self.position
        applied = "; ".join(self.applied) if self.applied else "none"
        return (
            f"{self.failure} [action {index} of {total}; applied before it: {applied}; not run: "
            f"{total - index} later action(s); the next `pulumi up` re-plans from what the cluster then holds]"
        )

    def within(self, applied: Sequence[str], index: int, total: int) -> ActionError:
        """This failure as action ``index`` of ``total``, after the ``applied`` lines."""
        return ActionError(
            self.failure, action=self.action, applied=applied, status=self.status, position=(index, total)
        )
