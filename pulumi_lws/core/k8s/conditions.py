"""The one status condition type of every API (``metav1.Condition``).

LeaderWorkerSet, ModelServing and DisaggregatedSet publish their status conditions through
:class:`Condition`; each API keeps its own types, reasons, messages and set-rules (upstream's),
but not its own shape. Invariant: :meth:`Condition.to_wire` is the Kubernetes JSON of the
condition — ``type``, ``status``, ``reason``, ``message`` in that order, then
``observedGeneration`` and ``lastTransitionTime`` only when known.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

TRUE, FALSE = "True", "False"


@dataclass(frozen=True)
class Condition:
    """``metav1.Condition``: ``status`` is ``"True"``/``"False"``/``"Unknown"``; the generation and
    transition time are None where the API does not track them."""

    type: str
    status: str
    reason: str
    message: str
    observed_generation: int | None = None
    last_transition_time: str | None = None

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "status": self.status, "reason": self.reason, "message": self.message}
        if self.observed_generation is not None:
            out["observedGeneration"] = self.observed_generation
        if self.last_transition_time is not None:
            out["lastTransitionTime"] = self.last_transition_time
        return out


def condition(ctype: str, status: bool, reason: str, message: str) -> dict[str, Any]:
    """The wire form of a condition without generation or transition time (``status`` as a bool)."""
    return Condition(ctype, TRUE if status else FALSE, reason, message).to_wire()
