"""The disaggregated-pd example end to end (issue 13 "Done means"): 6 prefill / 2 decode groups
rolled to a new image through the example program under Pulumi's mock engine, against the
embedded cluster. At every simulated tick the cluster is read independently
(``ds_helpers.read``): each role's ready groups stay >= target - maxUnavailable and its live
groups <= target + maxSurge, the prefill:decode ratio of READY groups stays within one step of
3:1, no role's new child grows while another role's new child has unready replicas, and the
lanes (each role's old|new spec replicas) go through upstream's ``medium_6_2_surge1`` steps
exactly."""

from __future__ import annotations

import pytest
from conftest import load_conformance
from support.ds_helpers import (
    EXAMPLE,
    attach,
    converged_on,
    lane_sequence,
    parse,
    read,
    run,
    scenario,
    with_image,
)

from pulumi_lws.disaggregatedset.revision import compute_revision
from pulumi_lws.sim.driver.runner import Runner
from pulumi_lws.sim.driver.scenario import load_scenario

ROLES = ["prefill", "decode"]
STEPS = next(v for v in load_conformance("disaggregatedset-planner.json") if v["name"] == "medium_6_2_surge1")[
    "expectedSteps"
]
UPSTREAM = [(tuple(s["old"]), tuple(s["new"])) for s in STEPS]


def _run_example(engine: str):
    runner = Runner(load_scenario(EXAMPLE / "scenario.yaml"), engine)
    bounds = attach(runner)
    return runner.run(), bounds, runner


@pytest.fixture(scope="module")
def example():
    result, bounds, _runner = _run_example("pulumi")
    return result, bounds


def test_the_example_converges_through_the_program_under_the_mock_engine(example) -> None:
    result, bounds = example
    assert result.engine == "pulumi"
    assert result.exit_code == 0 and result.trace.converged and not result.trace.violations, result.reason
    assert not bounds.violations, bounds.violations
    spec = parse(with_image(_ds_yaml(), "nginxinc/nginx-unprivileged:1.28"))
    assert converged_on(result.cluster, spec) == []
    final = read(result.cluster)
    assert {k: {c.revision for c in o.children.values()} for k, o in final.items()} == {
        (0, "prefill"): {compute_revision(spec)},
        (0, "decode"): {compute_revision(spec)},
    }
    assert all(c.images == {"nginxinc/nginx-unprivileged:1.28"} for o in final.values() for c in o.children.values())


def _ds_yaml() -> dict:
    import yaml

    return yaml.safe_load((EXAMPLE / "ds.yaml").read_text())


def test_every_tick_budget_per_role_from_the_cluster(example) -> None:
    _, bounds = example
    assert len(bounds.history) > 50  # every simulated second was read
    target = compute_revision(parse(with_image(_ds_yaml(), "nginxinc/nginx-unprivileged:1.28")))
    for t, obs in bounds.history:
        p, d = obs[(0, "prefill")], obs[(0, "decode")]
        # maxSurge 1 / maxUnavailable 0 (upstream's default): ready >= target, live <= target + 1
        assert p.ready >= 6 and d.ready >= 2, (t, p.split(target), d.split(target))
        assert p.live <= 7 and d.live <= 3, (t, p.split(target), d.split(target))
        # the ratio of READY groups within one step (one decode group = 3 prefill groups) of 3:1
        assert abs(p.ready - 3 * d.ready) <= 3, (t, p.ready, d.ready)
    assert bounds.max_live == bounds.max_running == {(0, "prefill"): 7, (0, "decode"): 3}
    assert bounds.min_ready == {(0, "prefill"): 6, (0, "decode"): 2}


def test_no_role_moves_ahead_of_the_barrier(example) -> None:
    _, bounds = example
    target = compute_revision(parse(with_image(_ds_yaml(), "nginxinc/nginx-unprivileged:1.28")))
    prev = None
    grew = 0
    for t, obs in bounds.history:
        if prev is not None:
            for r in ROLES:
                before = prev[(0, r)].split(target)[1]
                if obs[(0, r)].split(target)[1] > before:
                    grew += 1
                    # every role's new child had all of its (previous) replicas ready
                    for other in ROLES:
                        _, _new, _, new_ready = obs[(0, other)].split(target)
                        _, new_before, _, _ = prev[(0, other)].split(target)
                        assert new_ready >= new_before, (t, r, other, new_ready, new_before)
        prev = obs
    assert grew == 8  # prefill 0->1->...->6 (6 raises), decode 0->1->2 (2), each fused with the other where upstream is


def test_lanes_follow_upstream_medium_6_2_surge1_exactly(example) -> None:
    result, bounds = example
    target = compute_revision(parse(with_image(_ds_yaml(), "nginxinc/nginx-unprivileged:1.28")))
    assert lane_sequence(bounds, ROLES, target) == UPSTREAM
    # ... and the trace's lanes (one old|new per role per row) show the same steps after the first row
    rows = [tuple((lane.old, lane.new) for lane in row.lanes) for row in result.trace.rows[1:]]
    distinct = [r for i, r in enumerate(rows) if i == 0 or rows[i - 1] != r]
    assert [(tuple(x[0] for x in r), tuple(x[1] for x in r)) for r in distinct] == UPSTREAM[1:]
    assert [lane.name for lane in result.trace.rows[0].lanes] == ROLES


def test_the_pure_engine_gives_the_same_lanes() -> None:
    old = _ds_yaml()
    new = with_image(old, "nginxinc/nginx-unprivileged:1.28")
    result, bounds = run(scenario(old, new, max_time=300))
    assert result.exit_code == 0 and not bounds.violations, (result.reason, bounds.violations)
    assert lane_sequence(bounds, ROLES, compute_revision(parse(new))) == UPSTREAM


# ---- the other example scenarios, through the program ------------------------------------------------
def _scenario(name: str):
    runner = Runner(load_scenario(EXAMPLE / name), "pulumi")
    bounds = attach(runner)
    result = runner.run()
    assert result.exit_code == 0 and result.trace.converged and not result.trace.violations, result.reason
    assert not bounds.violations, bounds.violations[:3]
    return result, bounds


def test_surge2_scenario_follows_upstream_medium_6_2_surge2() -> None:
    result, bounds = _scenario("scenario-surge2.yaml")
    steps = next(v for v in load_conformance("disaggregatedset-planner.json") if v["name"] == "medium_6_2_surge2")
    target = result.trace.rows[-1].revision
    assert lane_sequence(bounds, ROLES, target) == [(tuple(s["old"]), tuple(s["new"])) for s in steps["expectedSteps"]]
    assert bounds.max_running == {(0, "prefill"): 8, (0, "decode"): 4}


def test_abc_scenario_converges_on_c_with_the_floor_held() -> None:
    result, bounds = _scenario("scenario-abc.yaml")
    spec = parse(with_image(_ds_yaml(), "nginxinc/nginx-unprivileged:1.29"))
    assert converged_on(result.cluster, spec) == []
    assert min(obs[(0, "prefill")].ready for _, obs in bounds.history) >= 6
    assert min(obs[(0, "decode")].ready for _, obs in bounds.history) >= 2
    assert max(len(obs[(0, "prefill")].children) for _, obs in bounds.history) == 3  # A, B and C at once


def test_slices_scenario_adds_a_slice_without_rolling_slice_0() -> None:
    result, bounds = _scenario("scenario-slices.yaml")
    before = {p["metadata"]["name"]: p["metadata"]["uid"] for p in bounds.start_pods}
    after = {
        p["metadata"]["name"]: p["metadata"]["uid"]
        for p in result.cluster.list("Pod")
        if p["metadata"]["labels"].get("disaggregatedset.x-k8s.io/slice") == "0"
    }
    assert after == before and len(before) == 16
    assert {k for k in read(result.cluster)} == {(0, "prefill"), (0, "decode"), (1, "prefill"), (1, "decode")}
