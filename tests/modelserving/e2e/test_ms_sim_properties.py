"""ModelServing on the simulator, from a healthy start: a hypothesis property over random strategies,
budgets, partitions, readiness delays and a never-ready group. The bounds of ``ms_helpers.Bounds``
hold on every tick, and the rollout converges, ends on a named blocker, or holds at the spec's
partition with the protected groups untouched. (The crash / re-run suite of every API is
tests/reliability/test_crash_every_api.py.) ``-m slow`` runs more examples (``LWS_SOAK`` scales them).
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.ms_helpers import ROLE, SG, Override, kubelet, ms_manifest, parse, read, role, run, scenario, with_image

from pulumi_lws.modelserving.revision import modelserving_revision


# ---- hypothesis: the simulator, from a healthy start ------------------------------------------------------
@st.composite
def rollouts(draw):
    strategy = draw(st.sampled_from((SG, ROLE)))
    if strategy == SG:
        replicas = draw(st.integers(1, 5))
        partition = draw(st.integers(0, replicas))
        mu, surge = draw(st.integers(0, 3)), draw(st.integers(0, 2))
        if replicas > partition and mu == 0 and surge == 0:
            mu = 1
        old = ms_manifest(
            replicas=replicas,
            mu=mu,
            surge=surge,
            partition=partition or None,
            roles=[role("prefill", 1, draw(st.integers(0, 1))), role("decode")],
        )
    else:
        n = draw(st.integers(1, 3))
        mu, surge = draw(st.integers(0, n)), draw(st.integers(0, 2))
        if mu == 0 and surge == 0:
            surge = 1
        old = ms_manifest(
            replicas=draw(st.integers(1, 3)),
            strategy=ROLE,
            roles=[role("prefill", n, maxUnavailable=mu, maxSurge=surge), role("decode")],
        )
    delays = draw(st.dictionaries(st.sampled_from([str(g) for g in range(7)]), st.integers(0, 12), max_size=3))
    never = draw(st.one_of(st.none(), st.sampled_from([str(g) for g in range(7)])))
    return old, delays, never, draw(st.sampled_from((0.0, 1.0, 3.0)))


def check_rollout(old, delays, never, ready) -> None:
    overrides = [Override(group=never, after=0.5, never_ready=True)] if never is not None else []
    overrides += [Override(group=g, ready=float(s)) for g, s in delays.items()]
    new = with_image(old, "img:2")
    sc = scenario(old, new, kubelet=kubelet(ready, overrides=overrides), max_time=150, require_converged=False)
    result, bounds = run(sc)
    assert not result.trace.violations and not bounds.violations, (result.trace.violations, bounds.violations)
    if result.trace.converged:
        return
    last = result.stages[-1]
    if last.blocker is not None:  # ended on a named blocker
        assert last.blocker.code and last.blocker.message
        return
    spec = parse(new)
    groups = read(result.cluster, spec)
    target = modelserving_revision(spec)
    # the stage is complete with the partition respected: protected groups stay, the rest is updated
    assert last.complete and spec.strategy == SG and spec.partition() > 0, last.summary()
    assert len(groups) == spec.replicas and all(g.available for g in groups.values())
    assert all(g.revision == target for o, g in groups.items() if o >= spec.partition())
    assert all(g.revision != target for o, g in groups.items() if o < spec.partition())


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rollouts())
def test_property_bounds_hold_and_the_rollout_converges_or_names_its_blocker(case) -> None:
    check_rollout(*case)


@pytest.mark.slow
@settings(
    max_examples=int(200 * max(float(os.environ.get("LWS_SOAK") or 0), 0.25)),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(rollouts())
def test_property_soak(case) -> None:
    check_rollout(*case)
