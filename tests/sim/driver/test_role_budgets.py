"""The simulator checks the budget invariants per role for the multi-role APIs (issue 24 gap i):
a DisaggregatedSet role's groups (over every slice) and a ModelServing RoleRollingUpdate role's
replicas (over every ServingGroup) stay within ``replicas + maxSurge`` and, once armed, at least
``replicas - maxUnavailable`` — a role breaking its own bound is a violation even where the
workload's sums hold. Rollouts of both APIs run clean under the per-role checks."""

from __future__ import annotations

from support import ds_helpers as DS
from support import ms_helpers as MS
from support.harness import inline_scenario

from pulumi_lws.core.contract.stage import Lane
from pulumi_lws.core.contract.trace import TraceRow
from pulumi_lws.core.contract.workload import Budgets
from pulumi_lws.sim.driver.budgets import RoleBudgets, WorkloadBudget
from pulumi_lws.sim.driver.runner import Runner, simulate

DS_BUDGETS = {
    "prefill": Budgets(2, 1, 0),
    "decode": Budgets(1, 1, 1),
    "": Budgets(3, 2, 1),
}


def row(t: float, *lanes: Lane) -> TraceRow:
    live = sum(lane.old + lane.new for lane in lanes)
    ready = sum(lane.old_ready + lane.new_ready for lane in lanes)
    return TraceRow(time=t, replicas=3, partition=None, groups=(), live=live, available=ready, lanes=lanes)


def test_a_role_over_its_own_ceiling_is_a_violation_where_the_sums_hold():
    roles, whole = RoleBudgets(), WorkloadBudget()
    roles.use(DS_BUDGETS)
    whole.use(DS_BUDGETS[""])
    ok = row(0, Lane("prefill", 2, 0, 2, 0), Lane("decode", 1, 0, 1, 0))
    assert roles.check(ok) == [] and whole.check(ok) == []
    # prefill surges by 2 (its maxSurge is 1) while decode surges by none: the workload's 5 <= 3 + 2
    over = row(1, Lane("prefill", 2, 2, 2, 0), Lane("decode", 1, 0, 1, 0))
    assert whole.check(over) == []
    assert roles.check(over) == ["t=1: role prefill: 4 live groups > replicas 2 + maxSurge 1"]


def test_a_role_under_its_own_floor_is_a_violation_where_the_sums_hold():
    roles, whole = RoleBudgets(), WorkloadBudget()
    roles.use(DS_BUDGETS)
    whole.use(DS_BUDGETS[""])
    for r in (roles, whole):
        r.check(row(0, Lane("prefill", 2, 0, 2, 0), Lane("decode", 1, 0, 1, 0)))  # armed
    # prefill (maxUnavailable 0) loses a ready group; decode is intact: the workload's 2 >= 3 - 1
    under = row(1, Lane("prefill", 2, 0, 1, 0), Lane("decode", 1, 0, 1, 0))
    assert whole.check(under) == []
    assert roles.check(under) == ["t=1: role prefill: 1 available groups < replicas 2 - maxUnavailable 0"]


def test_lanes_of_every_slice_sum_into_their_role():
    roles = RoleBudgets()
    roles.use({"prefill": Budgets(2, 0, 0), "": Budgets(2, 0, 0)})  # 1 per slice, 2 slices
    fine = row(0, Lane("prefill", 1, 0, 1, 0), Lane("1/prefill", 1, 0, 1, 0))
    assert roles.check(fine) == []
    over = row(1, Lane("prefill", 1, 1, 1, 0), Lane("1/prefill", 1, 0, 1, 0))
    assert roles.check(over) == ["t=1: role prefill: 3 live groups > replicas 2 + maxSurge 0"]


def test_modelserving_role_replicas_are_bounded_per_servinggroup_times_groups():
    roles = RoleBudgets()
    roles.use({"prefill": Budgets(1, 1, 0), "": Budgets(3, 0, 3)})  # 3 ServingGroups of 1 prefill replica
    fine = row(0, Lane("prefill", 3, 3, 3, 0, unit="replicas"))
    assert roles.check(fine) == []
    over = row(1, Lane("prefill", 4, 3, 3, 0, unit="replicas"))
    assert roles.check(over) == ["t=1: role prefill: 7 live role replicas > replicas 3 + maxSurge 3"]


def run(scenario):
    runner = Runner(scenario)
    result = runner.run()
    return runner, result


def test_a_disaggregatedset_rollout_is_checked_per_role_and_runs_clean():
    old = DS.ds_manifest(DS.role("prefill", 3, surge=1, unavailable=0), DS.role("decode", 2, surge=1, unavailable=1))
    runner, result = run(inline_scenario(old, DS.with_image(old, "img:2"), name="ds-roles"))
    assert result.reason is None, result.reason
    assert set(runner.role_budgets.roles) == {"prefill", "decode"}  # both roles' bounds were checked


def test_a_modelserving_role_rolling_update_is_checked_per_role_and_runs_clean():
    old = MS.ms_manifest(
        replicas=2,
        strategy=MS.ROLE,
        roles=[MS.role("prefill", 2, maxSurge=1), MS.role("decode", 1)],
    )
    runner, result = run(inline_scenario(old, MS.with_image(old, "img:2"), name="ms-roles"))
    assert result.reason is None, result.reason
    assert set(runner.role_budgets.roles) == {"prefill", "decode"}


# ---- gap ii: ModelServing role partitions are reported held, as ServingGroup partitions are


def role_partition_case(partition: int = 1, image: str = "img:2"):
    old = MS.ms_manifest(
        replicas=2, strategy=MS.ROLE, roles=[MS.role("prefill", 3, partition=partition), MS.role("decode", 1)]
    )
    return old, MS.with_image(old, image)


def test_a_role_rolling_update_held_at_its_role_partition_exits_0_and_says_so():
    old, new = role_partition_case()
    result = simulate(inline_scenario(old, new, name="ms-role-partition", max_time=300))
    assert result.exit_code == 0, result.reason
    assert not result.trace.converged and result.trace.held
    assert result.trace.held_at_role_partitions == {"prefill": 1} and result.trace.held_at_partition is None
    assert result.trace.to_json()["heldAtRolePartitions"] == {"prefill": 1}
    assert result.end_time < 300  # stops once held, like a converged run
    last = result.trace.rows[-1]
    lanes = {lane.name: lane for lane in last.lanes}
    assert (lanes["prefill"].old, lanes["prefill"].new) == (2, 4)  # 1 of 3 kept in each of 2 ServingGroups
    assert (lanes["decode"].old, lanes["decode"].new) == (0, 2)


def test_role_partitions_whose_replicas_never_become_ready_are_not_held():
    from fault_helpers import faulty_kubelet

    old, new = role_partition_case(image="img:bad")
    result = simulate(inline_scenario(old, new, name="ms-role-bad", max_time=60, kubelet=faulty_kubelet("probe")))
    assert result.exit_code == 1 and result.trace.held_at_role_partitions is None


def test_the_cli_says_held_at_role_partitions(tmp_path, capsys):
    import yaml

    from pulumi_lws.cli import main

    old, new = role_partition_case()
    a, b = tmp_path / "old.yaml", tmp_path / "new.yaml"
    a.write_text(yaml.safe_dump(old))
    b.write_text(yaml.safe_dump(new))
    assert main(["simulate", "--from", str(a), "--to", str(b)]) == 0
    assert "held at role partitions prefill=1 as specified" in capsys.readouterr().out


def test_held_at_role_partitions_reads_the_lanes():
    from pulumi_lws.sim.driver.budgets import held_at_role_partitions

    budgets = {"prefill": Budgets(3, 0, 1, partition=1), "decode": Budgets(1, 0, 1), "": Budgets(2, 0, 2)}

    def lanes_row(prefill: Lane, decode: Lane) -> TraceRow:
        return TraceRow(time=0, replicas=2, partition=None, groups=(), live=2, available=2, lanes=(prefill, decode))

    held = lanes_row(Lane("prefill", 2, 4, 2, 4, "replicas"), Lane("decode", 0, 2, 0, 2, "replicas"))
    assert held_at_role_partitions(held, budgets) == {"prefill": 1}
    not_ready = lanes_row(Lane("prefill", 2, 4, 2, 3, "replicas"), Lane("decode", 0, 2, 0, 2, "replicas"))
    assert held_at_role_partitions(not_ready, budgets) is None
    decode_old = lanes_row(Lane("prefill", 2, 4, 2, 4, "replicas"), Lane("decode", 2, 0, 2, 0, "replicas"))
    assert held_at_role_partitions(decode_old, budgets) is None  # an unpartitioned role must be rolled
    surge = lanes_row(Lane("prefill", 2, 5, 2, 5, "replicas"), Lane("decode", 0, 2, 0, 2, "replicas"))
    assert held_at_role_partitions(surge, budgets) is None
