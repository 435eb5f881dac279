"""Crash at every stage, for every API: seeded random rollouts through the product's cycle.

One suite, parametrized by API (the case table ``support.crash_suite.APIS``: LeaderWorkerSet's
four policies, ModelServing's two strategies, DisaggregatedSet's roles and slices). What every
stage does and what is asserted after every run and every simulated second is
``support.crash_suite``'s module doc: plan twice = identical, crash mid-apply (and, for
LeaderWorkerSet, mid-actions), re-run at one instant until idle, change the spec mid-rollout, the
per-role budget invariants always, nothing lost or leaked at the end; a crash part-way through a
stage's actions for every API (``test_crash_part_way_through_a_stages_actions``). Issue 24's bad image (crash
loop, pull error, failing probe), then a fix, runs the same loop with crashes at every stage.
Replay a failure with ``API.run(API.random_case(seed))``.

The soak (``make soak``: ``-m slow``, ``LWS_SOAK`` scales it) runs ``soak_per_unit`` cases per
unit of LWS_SOAK per API, a bad image in ``bad_image_fraction`` of them.
"""

from __future__ import annotations

import dataclasses
import json
import os

import pytest
from fault_helpers import BAD, FAULTS
from support.crash_suite import APIS, DISAGGREGATEDSET, LEADERWORKERSET, MODELSERVING, Api
from support.ms_helpers import ROLE, SG
from support.reliability_helpers import POLICIES

from pulumi_lws.core.k8s.scaling import scaled_value

SOAK = float(os.environ.get("LWS_SOAK") or 0)


def _chunks(api: Api) -> list[tuple[Api, int]]:
    return [(api, first) for first in range(api.fast.start, api.fast.stop, api.chunk)]


@pytest.mark.parametrize(
    ("api", "first"),
    [pair for api in APIS for pair in _chunks(api)],
    ids=lambda v: str(v) if isinstance(v, Api) else None,
)
def test_crash_rerun_and_change_at_every_stage(api: Api, first: int) -> None:
    results = [api.run(api.random_case(seed)) for seed in range(first, first + api.chunk)]
    assert len(results) == api.chunk
    assert sum(r.reconciles for r in results) > 3 * api.chunk  # every case rolled out over several stages
    assert sum(r.crashes for r in results) > 0  # and crashed somewhere


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("api", APIS, ids=str)
def test_bad_image_then_a_fix_with_crashes_at_every_stage(api: Api, fault: str) -> None:
    """Issue 24: a bad image first (crash loop, pull error, failing probe), the fix after a few
    stages; crashes and re-runs at every stage; every policy / strategy: converges with no person,
    within the bounds."""
    n = api.bad_image_seeds
    for seed in range(n):
        case = api.random_case(seed + n * FAULTS.index(fault), bad_image=fault)
        case.p_crash = max(case.p_crash, 0.3)
        api.run(case)


@pytest.mark.parametrize(
    ("api", "seed", "fault"),
    [
        (LEADERWORKERSET, 1, None),
        (MODELSERVING, 1, "crash"),
        (MODELSERVING, 2, "crash"),
        (DISAGGREGATEDSET, 1, "crash"),
        (DISAGGREGATEDSET, 5, "pull"),
        (DISAGGREGATEDSET, 7, "probe"),
    ],
    ids=str,
)
def test_crash_part_way_through_a_stages_actions(api: Api, seed: int, fault: str | None) -> None:
    """The second kind of crash, for every API: everything registered, only a prefix of the
    stage's actions run, then re-run. LeaderWorkerSet draws it in its own random stream (webhook
    labels, ungates, deletes). ModelServing's and DisaggregatedSet's stages carry actions mostly
    when a bad image is rolled back (forced-rollback deletes; DisaggregatedSet's labels and
    annotations): these bad-image cases of theirs run with that kind of crash on (their rows keep
    it off, so every seed of the suite keeps the case it always had)."""
    variant = dataclasses.replace(api, crash_in_actions=True)
    case = variant.random_case(seed, bad_image=fault)
    if fault:
        case.p_crash = max(case.p_crash, 0.3)
    assert variant.run(case).action_crashes > 0


@pytest.mark.parametrize("api", APIS, ids=str)
def test_soak_cases_include_a_bad_image_in_a_fraction(api: Api) -> None:
    cases = [api.random_case(s) for s in range(api.soak_seeds, api.soak_seeds + 200)]
    bad = [c for c in cases if c.bad_image]
    assert 0.5 * api.bad_image_fraction * 200 < len(bad) < 2 * api.bad_image_fraction * 200
    assert {c.bad_image for c in bad} == set(FAULTS)
    assert all(BAD in json.dumps(c.changes[0]) and BAD not in json.dumps(c.changes[-1]) for c in bad)
    assert not any(api.random_case(s).bad_image for s in api.fast)  # the fast cases are as they were


def _lws_cover(cases: list) -> None:
    """Every policy, each with crashes, mid-rollout changes, a replica change and a % surge; a partition."""
    assert {c.policy for c in cases} == set(POLICIES)
    for policy in POLICIES:
        mine = [c for c in cases if c.policy == policy]
        assert any(c.p_crash > 0 for c in mine) and any(len(c.changes) > 1 for c in mine)
        assert any(c.changes[0]["spec"]["replicas"] != c.start["spec"]["replicas"] for c in mine)
        assert any(
            isinstance(c.start["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"]["maxSurge"], str) for c in mine
        )
    assert any(c.start["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"]["partition"] > 0 for c in cases)


def _ms_cover(cases: list) -> None:
    """Both strategies, a partition, a surge (ServingGroupRollingUpdate), crashes, A -> B -> C."""
    assert {c.strategy for c in cases} == {SG, ROLE}
    assert any(c.start["spec"]["rolloutStrategy"].get("rollingUpdateConfiguration", {}).get("partition") for c in cases)
    assert any(
        scaled_value(
            c.start["spec"]["rolloutStrategy"].get("rollingUpdateConfiguration", {}).get("maxSurge") or 0,
            5,
            round_up=True,
        )
        for c in cases
        if c.strategy == SG
    )


def _ds_cover(cases: list) -> None:
    """Two slices, three roles, an omitted budget (upstream's default), a % budget."""
    assert any(c.start["spec"].get("slices") == 2 for c in cases)
    assert any(len(c.start["spec"]["roles"]) == 3 for c in cases)
    assert any("rolloutStrategy" not in r["spec"] for c in cases for r in c.start["spec"]["roles"])
    assert any(
        isinstance(
            (r["spec"].get("rolloutStrategy") or {}).get("rollingUpdateConfiguration", {}).get("maxUnavailable"), str
        )
        for c in cases
        for r in c.start["spec"]["roles"]
    )


COVERAGE = {LEADERWORKERSET.kind: _lws_cover, MODELSERVING.kind: _ms_cover, DISAGGREGATEDSET.kind: _ds_cover}


@pytest.mark.parametrize("api", APIS, ids=str)
def test_fast_seeds_cover_every_scenario_family(api: Api) -> None:
    cases = [api.random_case(s) for s in api.fast]
    assert any(c.p_crash > 0 for c in cases) and any(len(c.changes) > 1 for c in cases)  # crashes, A -> B -> C
    COVERAGE[api.kind](cases)


@pytest.mark.parametrize(("api", "seed"), [(LEADERWORKERSET, 7), (MODELSERVING, 2), (DISAGGREGATEDSET, 4)], ids=str)
def test_same_seed_same_rollout(api: Api, seed: int) -> None:
    a, b = api.run(api.random_case(seed)), api.run(api.random_case(seed))
    assert a.crashes > 0 and a == b


@pytest.mark.slow
@pytest.mark.skipif(SOAK == 0, reason="soak: set LWS_SOAK=1 (make soak) for 5,000 / 2,000 / 1,000 scenarios")
@pytest.mark.parametrize(
    ("api", "chunk"),
    [(api, chunk) for api in APIS for chunk in range(api.soak_chunks)],
    ids=lambda v: str(v) if isinstance(v, Api) else None,
)
def test_soak(api: Api, chunk: int) -> None:
    per = max(1, int(api.soak_per_unit * SOAK) // api.soak_chunks)
    start = api.soak_seeds + chunk * per
    results = [api.run(api.random_case(seed)) for seed in range(start, start + per)]
    assert len(results) == per
