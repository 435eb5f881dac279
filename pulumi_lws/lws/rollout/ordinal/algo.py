"""The upstream Ordinal rolling-update decision (``rollingUpdateParameters``), as pure functions.

Mirrors ``pkg/controllers/leaderworkerset_controller.go`` (reference §1.5) one function per
upstream function, plus :func:`fixed_point`, which is what one pulumi-lws reconcile applies.
Everything here is upstream-exact (conformance vectors). The rule pulumi-lws actually applies adds
its surge hold on top: :func:`pulumi_lws.lws.rollout.budget.rule_for` (docs/rollout.md §2).

Group states are the legend characters (``U`` ready+updated, ``o`` ready+old, ``u`` not
ready+updated, ``x`` not ready+old, ``-`` absent); positions past the end of a string count as
``-``. For the algorithm ``u``, ``x`` and ``-`` are equivalent.

Invariants (tested against every conformance vector and with hypothesis):
* every decision's partition is at least the user partition (all return paths);
* Case 5 never raises the partition above the current one (``min(p, current)``);
* replicas never exceed ``R + MS`` (MS capped at R);
* :func:`fixed_point` stops at the first call, made without a template change, that leaves the
  leader StatefulSet (replicas, partition, replicas annotation) unchanged, and gives up (raises)
  after 20 calls.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from pulumi_lws.core.k8s.model import IntOrString
from pulumi_lws.core.k8s.scaling import scaled_value

READY = frozenset("Uo")
UPDATED = frozenset("Uu")
MAX_FIXED_POINT_CALLS = 20


def state_at(states: str, i: int) -> str:
    return states[i] if 0 <= i < len(states) else "-"


def is_ready(states: str, i: int) -> bool:
    return state_at(states, i) in READY


def is_updated(states: str, i: int) -> bool:
    return state_at(states, i) in UPDATED


def is_ready_updated(states: str, i: int) -> bool:
    return state_at(states, i) == "U"


@dataclass(frozen=True)
class LeaderSts:
    """The observed leader StatefulSet: spec.replicas, partition, replicas annotation."""

    replicas: int
    partition: int
    replicas_annotation: int | None = None


@dataclass(frozen=True)
class RolloutInputs:
    """Everything ``rollingUpdateParameters`` reads. Budgets are already scaled (see :func:`scale_budgets`).

    ``sts`` None = the leader StatefulSet does not exist (Case 1). ``states`` = one legend char
    per ordinal; only ``states[0:sts.replicas]`` is read.
    """

    replicas: int
    max_unavailable: int
    max_surge: int
    user_partition: int = 0
    sts: LeaderSts | None = None
    template_changed: bool = False
    states: str = ""

    @property
    def burst(self) -> int:
        return self.replicas + self.max_surge


@dataclass(frozen=True)
class Decision:
    """One ``rollingUpdateParameters`` result: leader StatefulSet partition and replicas, and the branch."""

    partition: int
    replicas: int
    case: str

    def as_trace(self) -> dict[str, Any]:
        return {"case": self.case, "partition": self.partition, "replicas": self.replicas}


def scale_budgets(replicas: int, max_unavailable: IntOrString, max_surge: IntOrString) -> tuple[int, int]:
    """(MU, MS): maxUnavailable floor-scaled, maxSurge ceil-scaled then capped at R (reference §1.4)."""
    mu = scaled_value(max_unavailable, replicas, round_up=False)
    ms = min(scaled_value(max_surge, replicas, round_up=True), replicas)
    return mu, ms


def calculate_rolling_update_replicas(replicas: int, max_surge: int, max_unavailable: int, unready: int) -> int:
    """Surge reclamation (``calculateRollingUpdateReplicas``): keep only the surge still needed."""
    if unready <= max_surge:
        return replicas + max(0, unready - max_unavailable)
    return replicas + max_surge


def continuous_ready_replicas(states: str, sts_replicas: int) -> int:
    """Contiguous ready+updated groups counting down from ordinal S-1 (``calculateContinuousReadyReplicas``)."""
    if sts_replicas <= 0 or sts_replicas > len(states):
        return 0  # ordinal S-1 is past the string: absent, so the run is empty
    window = states[:sts_replicas]
    return len(window) - len(window.rstrip("U"))  # str ops: O(S) in C (10,000 groups: microseconds)


def lws_unready_replicas(states: str, replicas: int) -> int:
    """Groups in [0, R) that are not ready+updated (``calculateLWSUnreadyReplicas``); surge never counts."""
    return max(0, replicas) - states[: max(0, replicas)].count("U")  # positions past the string count as "-"


def rolling_update_partition(states: str, sts_replicas: int, step: int, current: int) -> int:
    """Next partition for a rollout step (``rollingUpdatePartition``); never above ``current``."""
    s = sts_replicas
    tail = continuous_ready_replicas(states, s)
    base = max(0, s - tail - step)
    head = states[:base]
    p = base + (base - head.count("U") - head.count("o"))  # unready groups below base raise the partition
    # Downward from min(p, S-1) to base, pass over groups that are not ready or already updated
    # (anything but "o") and stop at the first ready old group: one rfind instead of a loop.
    top = min(p, s - 1)
    if top >= base:
        j = states.rfind("o", base, top + 1)
        if j < 0:
            p = base
        elif j < top:
            p = j + 1
    return min(p, current)


def _inner(inp: RolloutInputs) -> Decision:
    r, mu, ms = inp.replicas, inp.max_unavailable, inp.max_surge
    sts = inp.sts
    if sts is None:
        return Decision(0, r, "1")

    def want(unready: int) -> int:
        return calculate_rolling_update_replicas(r, ms, mu, unready)

    s, p = sts.replicas, sts.partition
    if inp.template_changed:
        return Decision(min(r, s), r if s < r else want(r), "2")
    if p == 0 and s == r:
        return Decision(0, r, "3")
    if s < r:
        return Decision(p, r, "3b")
    unready = lws_unready_replicas(inp.states, r)
    annotation = s if sts.replicas_annotation is None else sts.replicas_annotation
    if annotation != r:
        return Decision(min(p, inp.burst), want(unready), "4")
    step = mu + ms - (inp.burst - s)
    return Decision(rolling_update_partition(inp.states, s, step, p), want(unready), "5")


def rolling_update_parameters(inp: RolloutInputs) -> Decision:
    """One upstream call (``rollingUpdateParameters``): the branch's result, floored at the user partition."""
    d = _inner(inp)
    return replace(d, partition=max(d.partition, inp.user_partition))


Rule = Callable[[RolloutInputs], Decision]


def applied(inp: RolloutInputs, d: Decision) -> RolloutInputs:
    """The inputs of the next reconcile after applying ``d`` with groups unchanged (revision stamped)."""
    return replace(inp, sts=LeaderSts(d.replicas, d.partition, inp.replicas), template_changed=False)


def fixed_point(inp: RolloutInputs, rule: Rule = rolling_update_parameters) -> tuple[Decision, tuple[Decision, ...]]:
    """Reconcile repeatedly with the groups held constant until the leader StatefulSet stops changing.

    Returns the final decision and every call's decision (conformance README §1.3). The first call
    of a template change never ends the loop (applying it stamps the new revision).
    """
    trace: list[Decision] = []
    cur = inp
    for _ in range(MAX_FIXED_POINT_CALLS):
        d = rule(cur)
        trace.append(d)
        nxt = applied(cur, d)
        if nxt.sts == cur.sts and not cur.template_changed:
            return d, tuple(trace)
        cur = nxt
    raise RuntimeError(
        f"rolling update did not reach a fixed point in {MAX_FIXED_POINT_CALLS} calls: {[t.as_trace() for t in trace]}"
    )
