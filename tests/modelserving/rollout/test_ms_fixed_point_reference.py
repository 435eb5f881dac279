"""The indexed ServingGroup fixed point decides exactly what the straightforward one did.

``reference_fixed_point`` is the fixed point as first written: for every group the rolling
deletion picks it re-runs ``sync_servinggroup_replicas`` over every other group (O(picks x
groups)). ``servinggroup.fixed_point`` answers the same question with ``ResyncIndex``; on random
observations, budgets, partitions, partition modes and stored revisions both must return the same
groups, error and trace — and so the same plans and predicted stages.
"""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pulumi_lws.modelserving.groups import (
    CREATING,
    DELETING,
    GROUP_STATUSES,
    GroupState,
    by_ordinal,
)
from pulumi_lws.modelserving.rollout.budgets import (
    PULUMI_LWS,
    UPSTREAM,
    Choices,
    ServingGroupBudget,
)
from pulumi_lws.modelserving.rollout.deletion import (
    servinggroup_rolling_deletion,
    sync_servinggroup_replicas,
)
from pulumi_lws.modelserving.rollout.resync import ResyncIndex
from pulumi_lws.modelserving.rollout.servinggroup import (
    CREATE,
    MAX_LOOP,
    REPLACE,
    PlannedGroup,
    _delete,
    fixed_point,
    plan_servinggroup_rollout,
)

REVISIONS = ("old", "new", "older", "gone")


def reference_fixed_point(
    budget, update_revision, observed, *, current_revision=None, known_revisions=(), choices=PULUMI_LWS
):
    """The fixed point before indexing, verbatim (but for the observed deletion cost, carried since:
    test_ms_deletion_cost.py): the per-pick sync over the state without the pick."""
    state = {
        g.ordinal: PlannedGroup(g.ordinal, g.revision, g.status, deletion_cost=g.deletion_cost)
        for g in by_ordinal(observed)
    }
    stored = set(known_revisions) | {update_revision}
    trace: list[str] = []

    def snapshot():
        return [state[o].state() for o in sorted(state)]

    def sync(groups):
        return sync_servinggroup_replicas(
            groups,
            budget,
            update_revision,
            current_revision=current_revision,
            controller_revisions=stored,
            choices=choices,
        )

    for _ in range(MAX_LOOP):
        changed = False
        r = sync(snapshot())
        for c in r.created:
            state[c.ordinal] = PlannedGroup(c.ordinal, c.revision, CREATING, CREATE, observed=False)
            trace.append(f"sync: create {c.ordinal}:{c.revision}")
            changed = True
        for o in r.deleted:
            changed |= _delete(state, o, trace, "sync: delete")
        if r.error:
            trace.append(f"sync: error {r.error}")
            return state, r.error, trace
        d = servinggroup_rolling_deletion(snapshot(), budget, update_revision, choices)
        for o in d.deleted:
            if state[o].status == DELETING:
                continue
            without = [g for g in snapshot() if g.ordinal != o]
            again = {c.ordinal: c for c in sync(without).created}
            if o in again:
                c = again[o]
                prev = state[o]
                state[o] = PlannedGroup(
                    o, c.revision, CREATING, CREATE if prev.change == CREATE else REPLACE, prev.observed
                )
                trace.append(f"rolling update: replace {o}:{prev.revision} -> {c.revision}")
            else:
                _delete(state, o, trace, "rolling update: delete")
            changed = True
        if not changed:
            return state, None, trace
    raise RuntimeError("ServingGroup fixed point did not converge")


observations = st.dictionaries(
    st.integers(0, 14),
    st.tuples(st.sampled_from(REVISIONS[:3]), st.sampled_from(GROUP_STATUSES), st.sampled_from((0, 0, -1, 3))),
    max_size=12,
).map(lambda d: [GroupState(o, r, s, c) for o, (r, s, c) in d.items()])
budgets = st.builds(
    ServingGroupBudget,
    replicas=st.integers(0, 10),
    partition=st.integers(0, 12),
    max_unavailable=st.integers(-1, 5),
    max_surge=st.integers(0, 4),
)
all_choices = st.sampled_from(
    [
        PULUMI_LWS,
        UPSTREAM,
        Choices(partition="position"),
        Choices(partition="ordinal", subtract_protected_unavailable=False, clamp_min_available=False),
    ]
)


def _same(budget, observed, current, known, choices):
    kwargs = {"current_revision": current, "known_revisions": known, "choices": choices}
    got = fixed_point(budget, "new", observed, **kwargs)
    want = reference_fixed_point(budget, "new", observed, **kwargs)
    assert got[1] == want[1], "error differs"
    assert got[2] == want[2], "trace differs"
    assert got[0] == want[0], "planned groups differ"


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    budgets,
    observations,
    st.sampled_from([None, "old", "older", "gone", "new"]),
    st.sets(st.sampled_from(REVISIONS[:3])),
    all_choices,
)
@example(ServingGroupBudget(4, 2, 1, 1), [GroupState(o, "old", "Running") for o in range(4)], "gone", set(), UPSTREAM)
@example(
    ServingGroupBudget(5, 1, 2, 0), [GroupState(o, "old", "Running") for o in (0, 2, 3, 7)], "old", {"old"}, PULUMI_LWS
)
def test_fixed_point_matches_the_per_pick_sync(budget, observed, current, known, choices):
    _same(budget, observed, current, known, choices)


@settings(max_examples=300, deadline=None)
@given(budgets, observations, st.sampled_from([None, "old", "gone"]), all_choices)
def test_plans_and_predictions_unchanged_along_a_rollout(budget, observed, current, choices):
    """Every predicted stage re-runs the fixed point: the walk the plan predicts equals the
    reference's walk stage by stage (settled observations fed back, as ``predict_remaining`` does)."""
    obs = observed
    for _ in range(8):
        _same(budget, obs, current, {"old"}, choices)
        plan = plan_servinggroup_rollout(
            budget, "new", obs, current_revision=current, known_revisions={"old"}, choices=choices, predict=False
        )
        obs = [GroupState(g.ordinal, g.revision, "Running", g.deletion_cost) for g in plan.groups if g.declared]


def test_index_answers_protected_failures_at_the_lowest_missing_ordinal():
    """A missing protected ordinal whose revision is not stored stops every recreation above it."""
    budget = ServingGroupBudget(4, partition=2, max_unavailable=1)
    index = ResyncIndex({1: "old", 2: "old", 3: "old"}, budget, "new", "gone", {"new"}, PULUMI_LWS)
    assert index.recreated_revision(3) is None  # ordinal 0 is missing and protected: the sync errors first
    ok = ResyncIndex({0: "old", 1: "old", 2: "old", 3: "old"}, budget, "new", "old", {"new", "old"}, PULUMI_LWS)
    assert ok.recreated_revision(3) == "new"
    assert ok.recreated_revision(1) == "old"  # protected: rebuilt on the current revision


def test_fixed_point_stays_linear_at_scale():
    """10,000 groups mid-rollout, maxUnavailable 1,000: the reference would run 1,000 syncs of
    10,000 groups per pass; the indexed one plans in well under a second of CPU."""
    import time

    budget = ServingGroupBudget(10_000, 0, 1_000, 0)
    observed = [GroupState(o, "old" if o < 5_000 else "new", "Running") for o in range(10_000)]
    start = time.process_time()
    state, error, _trace = fixed_point(budget, "new", observed, current_revision="old", known_revisions={"old"})
    assert time.process_time() - start < 2.0
    assert error is None
    assert sum(1 for g in state.values() if g.change == REPLACE) == 1_000
    assert all(g.revision == "new" for o, g in state.items() if o >= 4_000)


@settings(max_examples=800, deadline=None)
@given(
    budgets,
    observations,
    st.sampled_from([None, "old", "gone", "new"]),
    st.sets(st.sampled_from(REVISIONS[:3])),
    all_choices,
)
def test_index_answers_what_the_sync_without_the_group_creates(budget, observed, current, known, choices):
    """For every group (protected ones too, which the deletion never picks), the index's answer is
    what ``sync_servinggroup_replicas`` over the other groups creates at its ordinal."""
    stored = set(known) | {"new"}
    groups = list(by_ordinal(observed))
    index = ResyncIndex({g.ordinal: g.revision for g in groups}, budget, "new", current, stored, choices)
    for g in groups:
        r = sync_servinggroup_replicas(
            [x for x in groups if x is not g],
            budget,
            "new",
            current_revision=current,
            controller_revisions=stored,
            choices=choices,
        )
        want = next((c.revision for c in r.created if c.ordinal == g.ordinal), None)
        assert index.recreated_revision(g.ordinal) == want, g
