"""Deterministic discrete-event clock and seeded randomness for the simulator.

Invariants: time only moves forward; events scheduled for the same instant fire in the order
they were scheduled (a sequence number breaks ties), so a run is a pure function of the
scenario and the seed. Nothing here reads the wall clock.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone

#: Simulated time 0 is 2026-01-01T00:00:00Z; ``Snapshot.now`` = EPOCH + clock time.
EPOCH = 1767225600.0


def rfc3339(epoch_seconds: float) -> str:
    """Kubernetes timestamp format (second resolution, UTC)."""
    return datetime.fromtimestamp(int(epoch_seconds), tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(order=True)
class _Event:
    at: float
    seq: int
    label: str = field(compare=False)
    fn: Callable[[], None] = field(compare=False)


class Clock:
    """Simulated time in seconds since scenario start, with an event queue and a seeded RNG."""

    def __init__(self, seed: int = 0, start: float = 0.0) -> None:
        self.now: float = start
        self.rng = random.Random(seed)
        self._queue: list[_Event] = []
        self._seq = 0
        self._stamp: tuple[float | None, str] = (None, "")

    @property
    def epoch(self) -> float:
        """Current time as Unix seconds (what Kubernetes timestamps encode)."""
        return EPOCH + self.now

    def timestamp(self) -> str:
        """:func:`rfc3339` of now, formatted once per instant (every controller stamps its writes)."""
        if self._stamp[0] != self.now:
            self._stamp = (self.now, rfc3339(self.epoch))
        return self._stamp[1]

    def schedule(self, at: float, label: str, fn: Callable[[], None]) -> None:
        """Run ``fn`` when the clock reaches ``at`` (never in the past: clamped to now)."""
        self._seq += 1
        heapq.heappush(self._queue, _Event(max(at, self.now), self._seq, label, fn))

    def advance_to(self, t: float) -> list[str]:
        """Fire every event due at or before ``t`` in time order; return their labels."""
        if t < self.now:
            raise ValueError(f"time cannot go backwards ({t} < {self.now})")
        fired: list[str] = []
        while self._queue and self._queue[0].at <= t:
            ev = heapq.heappop(self._queue)
            self.now = ev.at
            ev.fn()
            fired.append(ev.label)
        self.now = t
        return fired
