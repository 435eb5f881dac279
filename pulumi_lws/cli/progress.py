"""What ``pulumi-lws rollout`` shows while it runs: one progress line per workload and stage (pure).

Reads only the stack outputs every workload component publishes (``stage`` with its ``control``
summary: :func:`pulumi_lws.core.features.control.control_summary`), so LeaderWorkerSet, ModelServing and
DisaggregatedSet outputs look the same here. Times come from the cluster's timestamps as the
component observed them (``startedAt``: the target revision's first object; ``now``: the
observation time), never from this process' clock, except the driver's own elapsed time.

ETA: the observed time per updated group so far times the groups still to update
(``(now - startedAt) / updated * (total - updated)``); unknown before the first group is updated.

Terminal mode rewrites one status line in place (``\\r`` + erase line) and prints a permanent
line per stage; plain mode (not a terminal: CI logs, pipes) prints one line per event.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TextIO

from pulumi_lws.core.contract.stage import waits_for_cluster

ERASE_LINE = "\r\x1b[2K"


@dataclass(frozen=True)
class WorkloadProgress:
    """One workload component's outputs as the driver reads them."""

    key: str  # the stack output holding it ("" = top level)
    stage: Mapping[str, Any]
    blocker: str | None
    status: Mapping[str, Any]

    @property
    def control(self) -> Mapping[str, Any]:
        return self.stage.get("control") or {}

    @property
    def complete(self) -> bool:
        return bool(self.stage.get("complete"))

    @property
    def paused(self) -> bool:
        return bool(self.stage.get("paused") or self.control.get("paused"))

    @property
    def pods(self) -> tuple[str, dict[str, str | None]] | None:
        """``stage.pods``: the namespace and Pod label selector the workload's reconcile reads (a
        None value: the key exists), or None when the output has none (a component before it)."""
        pods = self.stage.get("pods")
        if not isinstance(pods, Mapping):
            return None
        namespace, selector = pods.get("namespace"), pods.get("selector")
        if not isinstance(namespace, str) or not namespace or not isinstance(selector, Mapping) or not selector:
            return None
        return namespace, {str(k): None if v is None else str(v) for k, v in selector.items()}

    @property
    def blocker_code(self) -> str | None:
        """The code of the ``blocker`` output (``"code: message"``), or None without a blocker."""
        if not self.blocker:
            return None
        return str(self.blocker).split(":", 1)[0].strip()

    @property
    def waiting(self) -> bool:
        """The blocker is one the cluster clears by itself (groups becoming ready or going away:
        :func:`~pulumi_lws.core.contract.stage.waits_for_cluster`): the rollout is pacing itself."""
        return waits_for_cluster(self.blocker_code)

    @property
    def deadline_exceeded(self) -> bool:
        if self.control.get("deadlineExceeded"):
            return True
        return any(
            c.get("type") == "Progressing" and c.get("reason") == "ProgressDeadlineExceeded"
            for c in self.status.get("conditions") or []
            if isinstance(c, Mapping)
        )

    @property
    def deadline_message(self) -> str:
        cond = self.control.get("progressing") or {}
        return str(cond.get("message") or self.blocker or "progress deadline exceeded")

    def eta_seconds(self) -> float | None:
        c = self.control
        started, now = c.get("startedAt"), c.get("now")
        updated, total = int(c.get("updatedGroups") or 0), int(c.get("totalGroups") or 0)
        if started is None or now is None or updated <= 0:
            return None
        return max(0.0, (float(now) - float(started)) / updated * max(0, total - updated))

    def elapsed_seconds(self) -> float | None:
        started, now = self.control.get("startedAt"), self.control.get("now")
        return None if started is None or now is None else max(0.0, float(now) - float(started))


def workloads_in(outputs: Mapping[str, Any]) -> list[WorkloadProgress]:
    """Every workload component output set in the stack outputs: a top-level ``stage`` (with
    ``complete``), or one per output value that is a mapping holding such a ``stage``."""
    found = []

    def take(key: str, value: Mapping[str, Any]) -> None:
        stage = value.get("stage")
        if isinstance(stage, Mapping) and "complete" in stage:
            status = value.get("status") if isinstance(value.get("status"), Mapping) else {}
            found.append(WorkloadProgress(key, dict(stage), value.get("blocker"), status or {}))

    take("", outputs)
    for key, value in outputs.items():
        if isinstance(value, Mapping):
            take(str(key), value)
    return found


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    s = round(seconds)
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else (f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s")


def describe(n: int, w: WorkloadProgress, driver_elapsed: float) -> str:
    """``stage 3 web: 2/4 updated, 3 ready, groups UUoo | rollout 1m20s, ETA 2m40s | driver 45s | STATE``;
    STATE: ``complete``, ``PAUSED``, ``ProgressDeadlineExceeded``, ``waiting: BLOCKER`` (one the
    cluster clears by itself), ``blocked: BLOCKER`` or ``rolling``."""
    c = w.control
    name = w.key or "workload"
    counts = f"{c.get('updatedGroups', '?')}/{c.get('totalGroups', '?')} updated, {c.get('readyGroups', '?')} ready"
    roles = w.stage.get("roles") or []
    shape = (
        (" roles " + " ".join(f"{r.get('name')} {r.get('old')}|{r.get('new')}" for r in roles))
        if roles
        else (f" groups {w.stage.get('groups')}" if w.stage.get("groups") else "")
    )
    state = (
        "complete"
        if w.complete
        else (
            "PAUSED"
            if w.paused
            else (
                "ProgressDeadlineExceeded"
                if w.deadline_exceeded
                else (f"{'waiting' if w.waiting else 'blocked'}: {w.blocker}" if w.blocker else "rolling")
            )
        )
    )
    return (
        f"stage {n} {name}: {counts},{shape} | rollout {duration(w.elapsed_seconds())}, "
        f"ETA {duration(w.eta_seconds()) if not w.complete else '0s'} | driver {duration(driver_elapsed)} | {state}"
    )


class Display:
    """Terminal or plain output of the driver (``tty=None``: ask the stream)."""

    def __init__(self, stream: TextIO, tty: bool | None = None) -> None:
        self.stream = stream
        self.tty = bool(stream.isatty()) if tty is None else tty
        self._status = False

    def line(self, text: str) -> None:
        """A permanent line (a stage, the final verdict)."""
        if self.tty and self._status:
            self.stream.write(ERASE_LINE)
            self._status = False
        self.stream.write(text + "\n")
        self.stream.flush()

    def status(self, text: str) -> None:
        """A transient line: rewritten in place on a terminal, one line per change otherwise."""
        if self.tty:
            self.stream.write(ERASE_LINE + text)
            self._status = True
        else:
            self.stream.write(text + "\n")
        self.stream.flush()


Echo = Callable[[str], None]
