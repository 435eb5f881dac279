"""Upstream's DisaggregatedSet rolling-update planner (``planner.go``), as small pure functions.

Mirrors ``pkg/controllers/disaggregatedset/planner.go`` (kubernetes-sigs/lws @ ``060ab4d``;
reference ``lws-behaviour.md`` §4.4) one function per upstream function, plus the executor's
``extractRollingUpdateConfig`` (``executor.go``). Every vector is a per-role tuple in one fixed
role order (e.g. ``(prefill, decode)``). Nothing here reads the cluster or the API model: the
stage planner (:mod:`pulumi_lws.disaggregatedset.rollout`) feeds it plain numbers.

**Integer arithmetic.** Upstream computes ``int(float64(a) * float64(b) / float64(c))`` (Go's
``int()`` truncates toward zero), ``math.Ceil`` and ``math.Floor`` of such quotients. Here they are
exact integer divisions (:func:`_trunc_div`, :func:`_ceil_div`, ``//``). The two agree whenever the
product ``a*b`` is below 2**53: the product is then exact in float64 and the division is correctly
rounded, and a correctly rounded quotient of ``p/q`` cannot cross an integer (a non-integral
``p/q`` is at least ``1/q`` away from one, more than the rounding error ``|p/q| * 2**-53`` while
``|p| < 2**53``; an integral one is exact). The CRD bounds replicas to 1e6, so every product here
is below ~1e12.

Invariants (conformance: all 18 ``ComputeAllSteps`` sequences; hypothesis properties in
``tests/disaggregatedset/test_ds_conformance.py``):

* new counts never decrease and old counts never increase from one step to the next;
* every step changes old or new (both only on a force drain);
* among roles with ``initialOld > 0`` no step leaves some old counts at 0 and others above 0,
  except when a ``correctAbnormalState`` step (old above its baseline) fires;
* the sequence ends (``None``) in the completed state: every old 0, every new >= target.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pulumi_lws.core.k8s.model import IntOrString
from pulumi_lws.core.k8s.scaling import scaled_value

Vector = tuple[int, ...]

#: Which branch of ``ComputeNextStep`` produced a step (traces, tests).
CORRECT_ABNORMAL = "correct-abnormal-state"
NEW_AT_TARGET = "new-at-target"
SCALE_UP = "scale-up"
PROPORTIONAL_DRAIN = "proportional-drain"
FORCE_DRAIN = "force-drain"
BRANCHES = (CORRECT_ABNORMAL, NEW_AT_TARGET, SCALE_UP, PROPORTIONAL_DRAIN, FORCE_DRAIN)

#: The CRD defaults of ``rollingUpdateConfiguration`` when the object is present but a field is not
#: (addenda §4.1): ``{}`` means ``{maxSurge: 0, maxUnavailable: 1}``.
CRD_DEFAULT_MAX_SURGE: IntOrString = 0
CRD_DEFAULT_MAX_UNAVAILABLE: IntOrString = 1


@dataclass(frozen=True)
class RollingUpdateConfig:
    """One role's resolved budgets (upstream ``RollingUpdateConfig``); default ``{1, 0}``."""

    max_surge: int = 1
    max_unavailable: int = 0


DEFAULT_CONFIG = RollingUpdateConfig(1, 0)


@dataclass(frozen=True)
class UpdateStep:
    """One planner step (upstream ``UpdateStep{Past, New}``) and the branch that produced it."""

    old: Vector
    new: Vector
    branch: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"old": list(self.old), "new": list(self.new)}


def default_rolling_update_config(num_roles: int) -> tuple[RollingUpdateConfig, ...]:
    """``DefaultRollingUpdateConfig``: ``{MaxSurge: 1, MaxUnavailable: 0}`` per role."""
    return (DEFAULT_CONFIG,) * num_roles


def _scaled_or_zero(value: IntOrString, total: int, round_up: bool) -> int:
    """``intstr.GetScaledValueFromIntOrPercent`` with upstream's ignored error (``surge, _ :=``): 0."""
    try:
        return scaled_value(value, total, round_up)
    except ValueError:
        return 0


def extract_rolling_update_config(
    max_surge: IntOrString | None, max_unavailable: IntOrString | None, target: int, given: bool
) -> RollingUpdateConfig:
    """``extractRollingUpdateConfig`` for one role.

    ``given`` = the role's ``rolloutStrategy.rollingUpdateConfiguration`` object is present. When it
    is absent the default ``{1, 0}`` applies. When present, a missing field takes its CRD default
    (``maxSurge`` 0, ``maxUnavailable`` 1: an empty object is not an omitted one, addenda §4.1);
    ``surge = ceilScaled(maxSurge, target)``, ``unavail = floorScaled(maxUnavailable, target)``
    (percentages of the **target** replicas); ``unavail > 0`` -> both; elif ``surge > 0`` -> that
    surge with unavailable 0; else the default.
    """
    if not given:
        return DEFAULT_CONFIG
    ms = CRD_DEFAULT_MAX_SURGE if max_surge is None else max_surge
    mu = CRD_DEFAULT_MAX_UNAVAILABLE if max_unavailable is None else max_unavailable
    surge = _scaled_or_zero(ms, target, round_up=True)
    unavail = _scaled_or_zero(mu, target, round_up=False)
    if unavail > 0:
        return RollingUpdateConfig(max_surge=surge, max_unavailable=unavail)
    if surge > 0:
        return RollingUpdateConfig(max_surge=surge, max_unavailable=0)
    return DEFAULT_CONFIG


def _trunc_div(a: int, b: int) -> int:
    """Go's ``int(float64(a) / float64(b))`` for b > 0: truncation toward zero (module doc)."""
    q = abs(a) // b
    return q if a >= 0 else -q


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def batch_size(max_surge: int, max_unavailable: int) -> int:
    """``batchSize``: maxSurge when positive, else ``max(1, maxUnavailable)``."""
    return max_surge if max_surge > 0 else max(1, max_unavailable)


def total_steps(initial_old: Sequence[int], target: Sequence[int], config: Sequence[RollingUpdateConfig]) -> int:
    """``computeTotalSteps``: max over roles of ``ceil(max(initialOld, target, 0) / batch)``."""
    out = 0
    for i_old, t, c in zip(initial_old, target, config):
        out = max(out, _ceil_div(max(i_old, t, 0), batch_size(c.max_surge, c.max_unavailable)))
    return out


def compute_next_new(target: Sequence[int], current_new: Sequence[int], steps: int) -> Vector:
    """``computeNextNewReplicas``: the next point of ``ceil(i * target / T)`` after the slowest role."""
    if steps == 0:
        return tuple(target)

    def step_index(current: int, t: int) -> int:
        return steps if t == 0 else _trunc_div(current * steps, t)

    k = steps
    for c, t in zip(current_new, target):
        k = min(k, step_index(c, t))
    nxt = k + 1
    return tuple(max(min(_ceil_div(nxt * t, steps), t), c) for t, c in zip(target, current_new))


def compute_next_old(initial_old: Sequence[int], current_old: Sequence[int], steps: int) -> Vector:
    """``computeNextOldReplicas``: the next point of ``initialOld - floor(i * initialOld / T)``
    after the most advanced role (roles with ``initialOld == 0`` are skipped)."""
    if steps == 0:
        return (0,) * len(initial_old)
    k = 0
    for i_old, c in zip(initial_old, current_old):
        if i_old == 0:
            continue
        k = max(k, _trunc_div((i_old - c) * steps, i_old))
    nxt = k + 1
    return tuple(min(max(0, i_old - (nxt * i_old) // steps), c) for i_old, c in zip(initial_old, current_old))


def correct_abnormal_state(
    current_old: Sequence[int], current_new: Sequence[int], initial_old: Sequence[int]
) -> UpdateStep | None:
    """``correctAbnormalState``: an old count above its baseline is cut back to it (new unchanged)."""
    expected = tuple(min(i_old, c) for i_old, c in zip(initial_old, current_old))
    if any(c > e for c, e in zip(current_old, expected)):
        return UpdateStep(expected, tuple(current_new), CORRECT_ABNORMAL)
    return None


def is_complete(current_old: Sequence[int], current_new: Sequence[int], target: Sequence[int]) -> bool:
    """``isComplete``: every old 0 and every new at or above its target."""
    return all(o == 0 and n >= t for o, n, t in zip(current_old, current_new, target))


def is_new_at_target(current_new: Sequence[int], target: Sequence[int]) -> bool:
    """``isNewAtTarget``."""
    return all(n >= t for n, t in zip(current_new, target))


def can_scale_up(
    current_old: Sequence[int], next_new: Sequence[int], target: Sequence[int], config: Sequence[RollingUpdateConfig]
) -> bool:
    """``canScaleUp``: ``old + nextNew <= target + maxSurge`` for every role with a target."""
    return all(t == 0 or o + n <= t + c.max_surge for o, n, t, c in zip(current_old, next_new, target, config))


def compute_min_old(
    initial_old: Sequence[int], current_new: Sequence[int], target: Sequence[int], config: Sequence[RollingUpdateConfig]
) -> Vector:
    """``computeMinOld``: old replicas a non-growing role must keep: ``target - maxUnavailable - new``."""
    return tuple(
        max(0, t - c.max_unavailable - n) if i_old >= t else 0
        for i_old, n, t, c in zip(initial_old, current_new, target, config)
    )


def can_drain_all_to_zero(
    new_counts: Sequence[int], initial_old: Sequence[int], target: Sequence[int], config: Sequence[RollingUpdateConfig]
) -> bool:
    """``canDrainAllToZero``: every non-growing role has ``new >= target - maxUnavailable``."""
    return all(
        n >= t - c.max_unavailable for n, i_old, t, c in zip(new_counts, initial_old, target, config) if i_old >= t
    )


def apply_orphan_prevention(
    next_old: Sequence[int],
    new_counts: Sequence[int],
    initial_old: Sequence[int],
    target: Sequence[int],
    config: Sequence[RollingUpdateConfig],
) -> Vector:
    """``applyOrphanPrevention`` (upstream mutates; this returns the result).

    Among roles with ``initialOld > 0``: if some but not all would reach 0, either drain all to 0
    (when :func:`can_drain_all_to_zero` on ``new_counts``) or keep 1 on each role that reached 0.
    """
    considered = [o for o, i_old in zip(next_old, initial_old) if i_old != 0]
    any_zero = any(o == 0 for o in considered)
    all_zero = all(o == 0 for o in considered)
    if not any_zero or all_zero:
        return tuple(next_old)
    if can_drain_all_to_zero(new_counts, initial_old, target, config):
        return (0,) * len(next_old)
    return tuple(1 if o == 0 and i_old > 0 else o for o, i_old in zip(next_old, initial_old))


def try_scale_up(
    current_old: Sequence[int],
    current_new: Sequence[int],
    next_new: Sequence[int],
    target: Sequence[int],
    config: Sequence[RollingUpdateConfig],
) -> UpdateStep | None:
    """``tryScaleUp``: raise new to ``next_new`` when some role grows and the surge allows it."""
    if not any(nn > n for nn, n in zip(next_new, current_new)):
        return None
    if not can_scale_up(current_old, next_new, target, config):
        return None
    return UpdateStep(tuple(current_old), tuple(next_new), SCALE_UP)


def try_proportional_drain(
    initial_old: Sequence[int],
    current_old: Sequence[int],
    current_new: Sequence[int],
    target: Sequence[int],
    min_old: Sequence[int],
    steps: int,
    config: Sequence[RollingUpdateConfig],
) -> UpdateStep | None:
    """``tryProportionalDrain``: the next old point, floored at ``min_old``, orphan-prevented."""
    nxt = tuple(max(o, m) for o, m in zip(compute_next_old(initial_old, current_old, steps), min_old))
    nxt = apply_orphan_prevention(nxt, current_new, initial_old, target, config)
    if not any(o < c for o, c in zip(nxt, current_old)):
        return None
    return UpdateStep(nxt, tuple(current_new), PROPORTIONAL_DRAIN)


def try_force_drain(
    current_old: Sequence[int],
    next_new: Sequence[int],
    initial_old: Sequence[int],
    target: Sequence[int],
    config: Sequence[RollingUpdateConfig],
) -> UpdateStep | None:
    """``tryForceDrain``: drain old to make room for ``next_new`` and raise new in the same step.

    Whether to drain is decided **before** orphan prevention (as upstream).
    """
    drained = []
    needs = False
    for o, nn, i_old, t, c in zip(current_old, next_new, initial_old, target, config):
        d = max(0, min(o, t + c.max_surge - nn))
        if i_old >= t:
            d = max(d, max(0, t - c.max_unavailable - nn))
        drained.append(d)
        needs = needs or d < o
    if not needs:
        return None
    return UpdateStep(
        apply_orphan_prevention(drained, next_new, initial_old, target, config), tuple(next_new), FORCE_DRAIN
    )


def compute_next_step(
    initial_old: Sequence[int],
    current_old: Sequence[int],
    current_new: Sequence[int],
    target: Sequence[int],
    config: Sequence[RollingUpdateConfig],
) -> UpdateStep | None:
    """``ComputeNextStep``: the next ``(old, new)``, or None when the rollout is done."""
    if is_complete(current_old, current_new, target):
        return None
    steps = total_steps(initial_old, target, config)
    if steps == 0:
        return None
    step = correct_abnormal_state(current_old, current_new, initial_old)
    if step is not None:
        return step
    if is_new_at_target(current_new, target):
        return UpdateStep((0,) * len(initial_old), tuple(current_new), NEW_AT_TARGET)
    next_new = compute_next_new(target, current_new, steps)
    min_old = compute_min_old(initial_old, current_new, target, config)
    return (
        try_scale_up(current_old, current_new, next_new, target, config)
        or try_proportional_drain(initial_old, current_old, current_new, target, min_old, steps, config)
        or try_force_drain(current_old, next_new, initial_old, target, config)
    )


def max_steps(initial_old: Sequence[int], target: Sequence[int]) -> int:
    """``ComputeAllSteps``' cap: ``2 * max_i(max(initialOld_i, target_i)) + 10`` calls."""
    return 2 * max([0, *initial_old, *target]) + 10


def compute_all_steps(
    initial_old: Sequence[int], target: Sequence[int], config: Sequence[RollingUpdateConfig]
) -> tuple[UpdateStep, ...]:
    """``ComputeAllSteps``: ``[(initialOld, zeros)]`` then every step until None (at most :func:`max_steps`)."""
    n = len(initial_old)
    cur = UpdateStep(tuple(initial_old), (0,) * n)
    steps = [cur]
    for _ in range(max_steps(initial_old, target)):
        nxt = compute_next_step(initial_old, cur.old, cur.new, target, config)
        if nxt is None:
            break
        steps.append(nxt)
        cur = nxt
    return tuple(steps)
