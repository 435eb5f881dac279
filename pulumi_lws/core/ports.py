"""The ports the shells implement: an :class:`Observer` reads one workload's objects, an
:class:`Actuator` executes a stage's imperative actions. Planners never see either."""
from __future__ import annotations

from typing import Protocol, Sequence

from pulumi_lws.core.snapshot import EMPTY, Snapshot
from pulumi_lws.core.stage import Action


class Observer(Protocol):
    """Reads the objects one LWS owns. One call = at most a handful of LISTs, whatever the size."""

    def observe(self, namespace: str, name: str, *, nodes: bool = False) -> Snapshot: ...


class EmptyObserver:
    """Observes nothing: renders the creation stage (used by ``pulumi-lws render``)."""

    def observe(self, namespace: str, name: str, *, nodes: bool = False) -> Snapshot:
        return EMPTY


class Actuator(Protocol):
    """Executes planned actions; returns one human-readable result line per action."""

    def execute(self, namespace: str, actions: Sequence[Action]) -> list[str]: ...
