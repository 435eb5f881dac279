"""The ports the shells implement: an :class:`Observer` reads one workload's objects, an
:class:`Actuator` executes a stage's imperative actions. Planners never see either.

A :class:`Scope` says what one reconcile reads: objects of ``kinds`` in one namespace whose labels
contain ``selector`` (plus every Node when ``nodes``). Each API builds its own scope
(:meth:`pulumi_lws.core.workload.Workload.scope`), so observers know no API's labels or kinds.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Protocol, Sequence

from pulumi_lws.core.snapshot import EMPTY, Snapshot, labels_of
from pulumi_lws.core.stage import Action


@dataclass(frozen=True)
class Scope:
    """One workload's objects: ``kinds`` in ``namespace`` labelled with every ``selector`` pair."""

    namespace: str
    selector: Mapping[str, str]
    kinds: tuple[str, ...]
    nodes: bool = False

    def selects(self, obj: Mapping[str, object]) -> bool:
        """Client-side check of the label selector (defensive: a server may ignore it)."""
        labels = labels_of(obj)  # type: ignore[arg-type]
        return all(labels.get(k) == v for k, v in self.selector.items())


class Observer(Protocol):
    """Reads the objects of one :class:`Scope`. One call = at most a handful of LISTs, whatever the size."""

    def observe(self, scope: Scope) -> Snapshot: ...


class EmptyObserver:
    """Observes nothing: renders the creation stage (used by ``pulumi-lws render``)."""

    def observe(self, scope: Scope) -> Snapshot:
        return EMPTY


class Actuator(Protocol):
    """Executes planned actions; returns one human-readable result line per action."""

    def execute(self, namespace: str, actions: Sequence[Action]) -> list[str]: ...
