"""DisaggregatedSet rollouts end to end in the simulator (issue 13): A->B->C (a second image
change mid-rollout), a role removed from the spec, a new revision that never becomes ready (the
``progress-deadline-exceeded`` blocker with old capacity kept), two slices with ExclusiveSlice
placement on a zoned pool, slice-count changes (never a roll) and a groupIdentity switch on one
role. Every run has ``ds_helpers.Bounds`` as its per-tick probe (read from the cluster,
independently of the planner's observe) on top of the runner's own invariants."""

from __future__ import annotations

import pytest
from support.ds_helpers import (
    DEADLINE,
    Harness,
    Override,
    converged_on,
    ds_manifest,
    kubelet,
    parse,
    read,
    role,
    run,
    scenario,
    with_image,
)

from pulumi_lws.disaggregatedset.revision import compute_revision
from pulumi_lws.disaggregatedset.rollout.stage_planner import PROGRESS_DEADLINE_EXCEEDED
from pulumi_lws.sim.driver.quick import ZONE_LABEL, pool
from pulumi_lws.sim.driver.scenario import Update


def _ok(result, bounds) -> None:
    assert result.exit_code == 0 and result.trace.converged and not result.trace.violations, result.reason
    assert not bounds.violations, bounds.violations[:5]


def _uids(cluster, revision: str | None = None, slice_: str | None = None) -> dict[str, str]:
    out = {}
    for p in cluster if isinstance(cluster, list) else cluster.list("Pod"):
        lbl = p["metadata"]["labels"]
        if (revision is None or lbl.get("disaggregatedset.x-k8s.io/revision") == revision) and (
            slice_ is None or lbl.get("disaggregatedset.x-k8s.io/slice") == slice_
        ):
            out[p["metadata"]["name"]] = p["metadata"]["uid"]
    return out


# ---- A -> B -> C ---------------------------------------------------------------------------------
def test_a_b_c_second_image_change_mid_rollout_never_over_drains_and_converges() -> None:
    a = ds_manifest(role("prefill", 6), role("decode", 2))
    b, c = with_image(a, "img:2"), with_image(a, "img:3")
    rev = {k: compute_revision(parse(m)) for k, m in (("a", a), ("b", b), ("c", c))}
    sc = scenario(a, b, updates=[Update(at=22.0, manifest=c)], max_time=600)
    result, bounds = run(sc)
    _ok(result, bounds)
    assert converged_on(result.cluster, parse(c)) == []
    seen_b = seen_three = False
    for t, obs in bounds.history:
        for key, target in (((0, "prefill"), 6), ((0, "decode"), 2)):
            o = obs[key]
            spec = {r: ch.spec_replicas for r, ch in o.children.items()}
            # the fleet is never shrunk below its target: Σ spec over every revision >= target,
            # and ready (every revision) >= target (maxUnavailable 0)
            assert sum(spec.values()) >= target and o.ready >= target, (t, key, spec, o.ready)
            seen_b |= rev["b"] in spec and spec[rev["b"]] > 0 and t < 22
            seen_three |= {rev["a"], rev["b"], rev["c"]} <= set(spec)
    assert seen_b and seen_three  # C arrived while A and B both still had children
    # A and B were both drained and deleted
    assert {r for o in read(result.cluster).values() for r in o.children} == {rev["c"]}


def test_a_b_c_with_the_harness_old_revisions_drain_only_by_the_planners_step() -> None:
    """Stage by stage: between two reconciles an old revision's spec shrinks by at most the
    role's step (maxSurge + maxUnavailable = 1 here), and never grows (Bounds)."""
    a = ds_manifest(role("prefill", 3), role("decode", 1))
    h = Harness.create(a, ready=1.0)
    h.change_spec(with_image(a, "img:2"))
    changed = False
    prev = None
    for stage in range(60):
        h.up()
        h.check()
        obs = h.read()
        if prev is not None:
            for key, o in obs.items():
                for r, ch in o.children.items():
                    before = prev.get(key).children.get(r) if prev.get(key) else None
                    if before is not None and r != compute_revision(h.spec):
                        assert before.spec_replicas - ch.spec_replicas <= 1, (
                            stage,
                            key,
                            r,
                            before.spec_replicas,
                            ch.spec_replicas,
                        )
        prev = obs
        if not changed and stage == 3:
            h.change_spec(with_image(a, "img:3"))
            changed = True
        elif changed and h.converged():
            break
        h.advance(3)
    assert h.converged(), "\n".join(h.log[-6:])


# ---- a removed role --------------------------------------------------------------------------------
def test_removed_role_is_drained_and_cleaned_up() -> None:
    old = ds_manifest(role("prefill", 3), role("decode", 1), role("router", 2))
    new = ds_manifest(role("prefill", 3), role("decode", 1))
    result, bounds = run(scenario(old, new, max_time=400))
    _ok(result, bounds)
    assert converged_on(result.cluster, parse(new)) == []
    routers = [o.split("")[0] for _, obs in bounds.history for k, o in obs.items() if k[1] == "router"]
    assert routers[0] == 2 and 0 in routers  # drained (through 1 or at once) ...
    assert not any(
        p["metadata"]["labels"].get("disaggregatedset.x-k8s.io/role") == "router"
        for kind in ("Pod", "StatefulSet", "ControllerRevision", "Service")
        for p in result.cluster.list(kind)
    )


# ---- never ready: the progress deadline ---------------------------------------------------------------
def test_never_ready_new_revision_ends_on_the_progress_deadline_with_old_capacity_kept() -> None:
    old = ds_manifest(role("prefill", 3), role("decode", 1), annotations={DEADLINE: "30"})
    new = with_image(old, "img:2")
    target = compute_revision(parse(new))
    kl = kubelet(overrides=[Override(pod=f"pd-*-{target}-*", never_ready=True)])
    result, bounds = run(scenario(old, new, kubelet=kl, max_time=90, require_converged=False))
    assert result.exit_code == 1 and not result.trace.converged and not result.trace.violations
    assert not bounds.violations, bounds.violations
    assert result.final_blocker is not None and result.final_blocker.code == PROGRESS_DEADLINE_EXCEEDED
    assert result.trace.blocked.startswith(f"{PROGRESS_DEADLINE_EXCEEDED}: ")
    # named only after the deadline: the earlier stages wait on the barrier
    first = next(i for i, s in enumerate(result.stages) if s.blocker and s.blocker.code == PROGRESS_DEADLINE_EXCEEDED)
    assert first * sc_interval() >= 30
    # old capacity kept: every old group keeps its pods (same uids), none terminates, spec never drops
    old_rev = compute_revision(parse(old))
    before = bounds.history[0][1]
    old_uids = _uids(result.cluster, old_rev)
    assert len(old_uids) == 2 * (3 + 1)
    for _, obs in bounds.history:
        for key, n in (((0, "prefill"), 3), ((0, "decode"), 1)):
            ch = obs[key].children[old_rev]
            assert ch.spec_replicas == n and len(ch.ready) == n and ch.live == before[key].children[old_rev].live
    assert {
        p["metadata"]["name"]: p["metadata"]["uid"]
        for p in result.cluster.list("Pod")
        if p["metadata"]["labels"].get("disaggregatedset.x-k8s.io/revision") == old_rev
    } == old_uids


def sc_interval() -> float:
    return 5.0


# ---- slices ---------------------------------------------------------------------------------------------
def _zones(cluster) -> dict[str, str]:
    return {n["metadata"]["name"]: n["metadata"]["labels"][ZONE_LABEL] for n in cluster.store.list("Node")}


def test_two_slices_exclusive_slice_placement_on_a_zoned_pool_each_slice_in_its_own_zone() -> None:
    old = ds_manifest(
        role("prefill", 2), role("decode", 1), slices=2, placement={"type": "ExclusiveSlice", "topology": ZONE_LABEL}
    )
    new = with_image(old, "img:2")
    result, bounds = run(scenario(old, new, nodes=pool(6, zones=3), max_time=400))
    _ok(result, bounds)
    assert converged_on(result.cluster, parse(new)) == []
    zones = _zones(result.cluster)
    for t, obs in bounds.history:
        per_slice: dict[int, set] = {}
        for (s, _), o in obs.items():
            for ch in o.children.values():
                for nodes in ch.nodes.values():
                    per_slice.setdefault(s, set()).update(zones[n] for n in nodes if n)
        assert all(len(z) <= 1 for z in per_slice.values()), (t, per_slice)  # one domain per slice
        if len(per_slice) == 2:
            assert per_slice[0].isdisjoint(per_slice[1]), (t, per_slice)  # and exclusive
    final = {
        s: {zones[n] for ch in o.children.values() for ns in ch.nodes.values() for n in ns}
        for (s, _), o in read(result.cluster).items()
    }
    assert len(final) == 2 and all(len(z) == 1 for z in final.values()) and final[0] != final[1]


@pytest.mark.parametrize("before,after", [(1, 2), (2, 1), (1, 3)])
def test_slice_count_change_never_rolls(before: int, after: int) -> None:
    old = ds_manifest(role("prefill", 2), role("decode", 1), slices=before)
    new = ds_manifest(role("prefill", 2), role("decode", 1), slices=after)
    rev = compute_revision(parse(old))
    assert compute_revision(parse(new)) == rev  # slices are not in the revision
    result, bounds = run(scenario(old, new, max_time=200))
    _ok(result, bounds)
    assert converged_on(result.cluster, parse(new)) == []
    kept = {s: _uids(bounds.start_pods, rev, str(s)) for s in range(min(before, after))}
    for s, uids in kept.items():
        now = _uids(result.cluster, rev, str(s))
        assert now == uids, f"slice {s} was rolled"
    for _, obs in bounds.history:
        # one revision only, ever: no slice starts a rollout, a new slice starts at its target
        assert {r for o in obs.values() for r in o.children} == {rev}
        for (s, r), o in obs.items():
            spec = o.children[rev].spec_replicas
            assert spec in (0, {"prefill": 2, "decode": 1}[r]), (s, r, spec)


# ---- groupIdentity ------------------------------------------------------------------------------------
def test_group_identity_switch_on_one_role_is_a_normal_rollout_and_that_role_moves_to_hash() -> None:
    old = ds_manifest(role("prefill", 3), role("decode", 1))
    new = ds_manifest(role("prefill", 3, group_identity="Hash"), role("decode", 1))
    old_rev, new_rev = compute_revision(parse(old)), compute_revision(parse(new))
    assert new_rev != old_rev  # groupIdentity is in the revision: a template change
    result, bounds = run(scenario(old, new, max_time=400))
    _ok(result, bounds)
    assert converged_on(result.cluster, parse(new)) == []
    c = result.cluster
    assert c.get("Deployment", f"pd-0-{new_rev}-prefill") is not None  # Hash: the leader is a Deployment
    assert c.get("StatefulSet", f"pd-0-{new_rev}-decode") is not None  # Ordinal stays a StatefulSet
    assert not any(d["metadata"]["name"].endswith("-decode") for d in c.list("Deployment"))
    assert not _uids(c, old_rev)  # the whole old revision was drained (upstream: new LWS objects)


def test_regression_a_removed_roles_groups_are_outside_the_whole_workload_budget() -> None:
    """Bug fixed in disaggregatedset/workload.py ``trace_view``: the groups of a role removed from
    the spec counted as live against the spec roles' budget (``budgets()[""]``), so the
    simulator reported "8 live groups > replicas 4 + maxSurge 2" the moment the role was removed.
    They keep their cells and lane while they drain, outside the totals."""
    from pulumi_lws.disaggregatedset.workload import WORKLOAD

    old = ds_manifest(role("prefill", 3), role("decode", 1), role("router", 2))
    h = Harness.create(old)
    h.change_spec(ds_manifest(role("prefill", 3), role("decode", 1)))
    view = WORKLOAD.trace_view(h.spec, h.snapshot())
    assert view.live == 4 and view.available == 4 and view.replicas == 4
    assert sum(1 for c in view.cells if "/router/" in c.id) == 2
    assert [lane.name for lane in view.lanes] == ["prefill", "decode", "router"]


def test_regression_progress_deadline_also_fires_once_every_old_replica_was_drained() -> None:
    """Bug fixed in rollout/stage_planner.py ``_steady``: with maxUnavailable >= replicas on a
    role the planner may drain every old replica before the new revision is ready; the slice is
    then "steady" (no old revision left) and its barrier waited forever as ``waiting-for-roles``,
    never naming ``progress-deadline-exceeded``. Found by the hypothesis property."""
    old = ds_manifest(
        role("prefill", 1, 1, surge=1, unavailable=0),
        role("decode", 1, 1, surge=0, unavailable=1),
        annotations={DEADLINE: "40"},
    )
    new = with_image(old, "img:2")
    target = compute_revision(parse(new))
    kl = kubelet(0.0, overrides=[Override(pod=f"pd-0-{target}-decode-*", never_ready=True)])
    result, bounds = run(scenario(old, new, kubelet=kl, max_time=120, require_converged=False))
    assert not bounds.violations and not result.trace.violations
    assert result.final_blocker.code == PROGRESS_DEADLINE_EXCEEDED
    assert "no old revision is left" in result.final_blocker.message
    assert not [c for o in read(result.cluster).values() for r, c in o.children.items() if r != target]


# ---- lane titles ------------------------------------------------------------------------------------
def test_lane_title_is_one_rule_independent_of_the_slice_count() -> None:
    from pulumi_lws.core.contract.stage import lane_title

    assert [lane_title(s, "prefill") for s in range(3)] == ["prefill", "1/prefill", "2/prefill"]


@pytest.mark.parametrize("before,after", [(1, 2), (2, 1)])
def test_lane_titles_stay_stable_when_the_slice_count_changes_mid_run(before: int, after: int) -> None:
    """Slice 0's lanes are ``prefill``/``decode`` in every row, stage and prediction of the run —
    before and after the change — never ``0/prefill``; the other slices' are ``<slice>/<role>``;
    the narration therefore never reports slice 0's lane as a new one."""
    old = ds_manifest(role("prefill", 2), role("decode", 1), slices=before)
    new = ds_manifest(role("prefill", 2), role("decode", 1), slices=after)
    result, bounds = run(scenario(old, new, max_time=200))
    _ok(result, bounds)
    seen = {lane.name for row in result.trace.rows for lane in row.lanes}
    seen |= {lane.name for st in result.stages for lane in st.lanes}
    seen |= {lane.name for st in result.stages for p in st.remaining for lane in p.lanes}
    expected = {"prefill", "decode"} | {f"{s}/{r}" for s in range(1, max(before, after)) for r in ("prefill", "decode")}
    assert seen <= expected and {"prefill", "decode"} <= seen, seen
    assert not any(name.startswith("0/") for name in seen)
    notes = " ".join(row.note for row in result.trace.rows)
    assert "0/prefill" not in notes and "0/decode" not in notes
