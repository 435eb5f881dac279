"""ModelServing rollouts end to end in the simulator (issue 12 "Done means"): the seed's six-stage
table through the example program, the seed's ``maxUnavailable: 0, maxSurge: 1`` example (bounds at
every observed state, end on ordinals {1,2,3,4}, an unschedulable surge group waits with a named
blocker), RoleRollingUpdate (only the changed role's pods change, per-role bounds per group, the
``max-groups-in-flight`` cap) and the ordinal partition (protected groups stay and heal on their
own revision). Bounds are computed from the cluster by ``ms_helpers.read``, independently of the
planner's observe, on top of the runner's own invariants."""

from __future__ import annotations

import pytest
from conftest import REPO_ROOT
from support.ms_helpers import (
    NS,
    ROLE,
    Harness,
    Override,
    kubelet,
    ms_manifest,
    parse,
    read,
    role,
    row_chars,
    run,
    scenario,
    with_image,
)

from pulumi_lws.modelserving.revision import modelserving_revision
from pulumi_lws.modelserving.rollout.servinggroup import SURGE_NOT_READY
from pulumi_lws.sim.driver.runner import Runner
from pulumi_lws.sim.driver.scenario import load_scenario

EXAMPLE = REPO_ROOT / "examples" / "modelserving-pd"
SEED_ROWS = ["UUUU", "ooou", "oouU", "ouUU", "uUUU", "UUUU"]
SEED_NOTES = [
    "before the rolling update",
    "R-3 updating",
    "R-3 becomes ready; R-2 updating",
    "R-2 becomes ready; R-1 updating",
    "R-1 becomes ready; R-0 updating",
    "R-0 becomes ready; rolling update complete",
]


def _run_scenario(path, engine=None):
    from support.ms_helpers import Bounds

    runner = Runner(load_scenario(path), engine)
    bounds = Bounds(spec=lambda: runner.spec.parsed())
    runner.probe = bounds
    return runner.run(), bounds


# ---- 1. the seed's six-stage table -----------------------------------------------------------------
@pytest.mark.parametrize("engine", ["pulumi", "pure"])
def test_seed_six_stage_table_through_the_example_program(engine: str) -> None:
    result, bounds = _run_scenario(EXAMPLE / "scenario.yaml", engine)
    assert result.exit_code == 0 and result.trace.converged and not result.trace.violations, result.reason
    assert result.engine == engine
    assert row_chars(result) == SEED_ROWS
    notes = [row.note for row in result.trace.rows]
    assert notes[0] == SEED_NOTES[0] and notes[1].endswith(SEED_NOTES[1]) and notes[2:] == SEED_NOTES[2:]
    # R-3 first ... R-0: the order in which groups start updating
    order = [int(c) for row in result.trace.rows for c, g in enumerate(row.groups) if g.state == "u"]
    assert order == [3, 2, 1, 0]
    assert [row.live for row in result.trace.rows] == [4] * 6
    assert [row.available for row in result.trace.rows] == [4, 3, 3, 3, 3, 4]
    assert not bounds.violations and bounds.max_live == 4 and bounds.min_available == 3


# ---- 2. maxUnavailable 0, maxSurge 1 ------------------------------------------------------------------
def surge_ms(**kw):
    return ms_manifest(replicas=4, roles=[role("prefill", **kw), role("decode", **kw)], mu=0, surge=1)


def test_surge_example_keeps_four_available_and_at_most_five_live_and_ends_on_1_to_4() -> None:
    old = surge_ms()
    result, bounds = run(scenario(old, with_image(old, "img:2")))
    assert result.exit_code == 0 and result.trace.converged and not result.trace.violations, result.reason
    assert not bounds.violations, bounds.violations
    for row in result.trace.rows:  # per-row checks on the trace itself
        assert row.live <= 5 and row.available >= 4, row
    for t, groups in bounds.history:  # ... and on every observed tick
        assert len(groups) <= 5 and sum(g.available for g in groups.values()) >= 4, (t, groups)
    assert bounds.max_live == 5 and bounds.min_available == 4
    # E2E-SG-MAXSURGE: five Running groups with both revisions at some point
    target = modelserving_revision(parse(with_image(old, "img:2")))
    assert any(
        len(gs) == 5
        and all(g.available for g in gs.values())
        and {g.revision == target for g in gs.values()} == {True, False}
        for _, gs in bounds.history
    )
    final = read(result.cluster, parse(with_image(old, "img:2")))
    assert sorted(final) == [1, 2, 3, 4]  # upstream-addenda §3.9: group 0 is never recreated
    assert all(g.revision == target and g.available for g in final.values())


def test_surge_example_scenario_file_through_the_program() -> None:
    result, bounds = _run_scenario(EXAMPLE / "scenario-surge.yaml")
    assert result.exit_code == 0 and result.trace.converged and not result.trace.violations, result.reason
    assert not bounds.violations and bounds.max_live == 5 and bounds.min_available == 4
    assert [g.id for g in result.trace.rows[-1].groups] == ["1", "2", "3", "4"]


def _surge_blocked(sc):
    result, bounds = run(sc)
    assert result.exit_code == 1 and not result.trace.converged and not result.trace.violations
    assert result.final_blocker.code == SURGE_NOT_READY and "ms-4" in result.final_blocker.message
    assert result.trace.blocked.startswith(f"{SURGE_NOT_READY}: ")
    assert not bounds.violations and bounds.max_live == 5 and bounds.min_available == 4
    # no capacity deleted: groups 0-3 keep every pod (same uids) and nothing terminates
    first = {o: {k: r.uids for k, r in g.roles.items()} for o, g in bounds.history[0][1].items()}
    assert sorted(first) == [0, 1, 2, 3, 4]
    for _, groups in bounds.history:
        assert all(not g.terminating for g in groups.values())
        assert {o: {k: r.uids for k, r in g.roles.items()} for o, g in groups.items() if o < 4} == {
            o: v for o, v in first.items() if o < 4
        }
    assert row_chars(result)[-1] == "oooou"
    return result


def test_surge_group_that_cannot_be_scheduled_waits_without_deleting_capacity() -> None:
    old = surge_ms(cpu="1")  # 2 pods of 1 cpu per group, one 8-cpu node: room for exactly 4 groups
    nodes = [{"name": "n0", "labels": {"kubernetes.io/hostname": "n0"}, "capacity": {"cpu": 8, "memory": "64Gi"}}]
    result = _surge_blocked(scenario(old, with_image(old, "img:2"), nodes=nodes, max_time=60))
    pending = [
        p
        for p in result.cluster.list("Pod", NS)
        if p["metadata"]["labels"].get("modelserving.volcano.sh/group-name") == "ms-4"
    ]
    assert pending and all(not p["spec"].get("nodeName") for p in pending)


def test_surge_group_that_never_becomes_ready_waits_without_deleting_capacity() -> None:
    old = surge_ms()
    sc = scenario(
        old, with_image(old, "img:2"), max_time=60, kubelet=kubelet(overrides=[Override(group="4", never_ready=True)])
    )
    _surge_blocked(sc)


# ---- 3. RoleRollingUpdate ---------------------------------------------------------------------------
def role_ms(annotations=None):
    return ms_manifest(
        replicas=2,
        strategy=ROLE,
        annotations=annotations,
        roles=[role("prefill", 2, 1, maxUnavailable=1), role("decode", 1, 1)],
    )


def _uids(groups, name):
    return {(o, k): r.uids for o, g in groups.items() for k, r in g.roles.items() if k[0] == name}


@pytest.mark.parametrize("cap", [None, "1"], ids=["independent", "max-groups-in-flight-1"])
def test_role_rolling_update_changes_only_the_changed_role(cap) -> None:
    old = role_ms({"pulumi-lws.io/max-groups-in-flight": cap} if cap else None)
    new = with_image(old, "img:2", ("prefill",))
    result, bounds = run(scenario(old, new))
    assert result.exit_code == 0 and result.trace.converged and not result.trace.violations, result.reason
    assert not bounds.violations, bounds.violations
    decode0 = _uids(bounds.history[0][1], "decode")
    assert len(decode0) == 2 and all(_uids(gs, "decode") == decode0 for _, gs in bounds.history)
    final = read(result.cluster, parse(new))
    assert sorted(final) == [0, 1]
    for g in final.values():
        assert [r.ordinal for r in g.replicas_of("prefill")] == [0, 1] and len(g.replicas_of("decode")) == 1
        assert all(r.images == {"img:2"} and r.ready for r in g.replicas_of("prefill"))
        assert all(r.images == {"img:1"} for r in g.replicas_of("decode"))
    # per-role bounds per group at every tick (also asserted by Bounds): prefill live <= 2 + 0, ready >= 1
    assert all(v <= 2 for (g, r), v in bounds.max_role_live.items() if r == "prefill")
    if cap:
        assert bounds.max_below_ready == 1
        # at most one ServingGroup below ready at ANY row
        assert all(sum(c.state in "ux" for c in row.groups) <= 1 for row in result.trace.rows)
    else:
        assert bounds.max_below_ready == 2  # upstream: every group rolls its roles at once


def test_role_example_scenario_file_through_the_program() -> None:
    result, bounds = _run_scenario(EXAMPLE / "scenario-role.yaml")
    assert result.exit_code == 0 and result.trace.converged and not result.trace.violations, result.reason
    assert not bounds.violations
    rollout = [gs for t, gs in bounds.history if t >= 20]  # the prefill image change (t < 20: the scale-up)
    assert rollout and max(sum(not g.available for g in gs.values()) for gs in rollout) == 1
    decode = [_uids(gs, "decode") for gs in rollout]
    assert all(d == decode[0] for d in decode)
    prefill = [_uids(gs, "prefill") for gs in rollout]
    assert prefill[0] != prefill[-1]


def test_regression_unchanged_role_keeps_its_pods_when_its_group_moves_to_the_update_revision() -> None:
    """Bug fixed in reconcile._role_stage: once every changed replica was updated the group moved to
    the update revision and the unchanged decode replica was re-rendered from that revision (same
    hash, new ``revision`` pod label), replacing its pods. It now keeps the revision its pods run."""
    old = ms_manifest(replicas=1, strategy=ROLE, roles=[role("prefill", 1, 0), role("decode", 1, 0)])
    h = Harness.create(old)
    before = h.cluster.get("Pod", "ms-0-decode-0-0")["metadata"]["uid"]
    h.change_spec(with_image(old, "img:2", ("prefill",)))
    for _ in range(20):
        h.up()
        if h.converged():
            break
        h.advance(2)
    assert h.converged()
    assert h.cluster.get("Pod", "ms-0-decode-0-0")["metadata"]["uid"] == before
    target = modelserving_revision(h.spec)
    assert (
        h.cluster.get("StatefulSet", "ms-0-decode-0")["metadata"]["labels"]["modelserving.volcano.sh/revision"]
        == target
    )


# ---- 4. partition --------------------------------------------------------------------------------------
def _roll(h: Harness, stages: int = 40) -> None:
    for _ in range(stages):
        h.up()
        h.check()
        if h.converged():
            return
        h.advance(2)
    raise AssertionError("not converged:\n" + "\n".join(h.log[-6:]))


def test_partition_2_of_4_keeps_groups_0_1_on_the_old_revision_and_heals_them_on_it() -> None:
    old = ms_manifest(replicas=4, roles=[role("prefill", 1, 1), role("decode", 1, 1)], mu=1, partition=2)
    h = Harness.create(old)
    initial = modelserving_revision(h.spec)
    h.change_spec(with_image(old, "img:2"))
    target = modelserving_revision(h.spec)
    _roll(h)
    assert h.last.stage.complete and h.last.stage.blocker is None
    revs = {o: g.revision for o, g in h.groups().items()}
    assert revs == {0: initial, 1: initial, 2: target, 3: target}
    for _ in range(3):  # forever: re-running changes nothing
        h.advance(5)
        h.up()
        assert h.last.stage.complete and {o: g.revision for o, g in h.groups().items()} == revs
    # a deleted pod of group 0 and a deleted StatefulSet of group 1 come back on THEIR revision
    h.cluster.store.delete("Pod", NS, "ms-0-prefill-0-0")
    h.cluster.store.delete("StatefulSet", NS, "ms-1-decode-0-w", propagation="Background")
    h.cluster.settle()
    h.bounds.disarm()  # a fault: the availability floor re-arms once every group is ready again
    h.advance(3)
    _roll(h)
    groups = h.groups()
    assert {o: g.revision for o, g in groups.items()} == revs
    for o in (0, 1):
        for r in groups[o].roles.values():
            assert r.revision == initial and r.images == {"img:1"} and r.ready, (o, r)
    assert all(r.images == {"img:2"} for o in (2, 3) for r in groups[o].roles.values())
