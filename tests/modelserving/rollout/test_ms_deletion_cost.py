"""Pod-deletion cost in the ServingGroup fixed point and its predicted stages.

Kthena's binpack scale-down (``scaleDownServingGroups``, reference §3.4) deletes, among the
groups the partition does not protect, the not-Running ones first, then the *cheapest* by
Σ ``controller.kubernetes.io/pod-deletion-cost`` over the group's pods, then the highest ordinal.
The fixed point runs that scale-down on its planned groups (:class:`PlannedGroup`), so the planned
groups must carry the observed cost: with it dropped, a scale-down during a rollout (replicas
lowered mid-rollout) deleted the highest-ordinal group — a Running *new* one — where Kthena deletes
the cheapest, old one. A group the stage creates or replaces has new pods, hence cost 0; a group
being deleted keeps its pods' cost. The same holds per role replica under RoleRollingUpdate
(``scaleDownRoles``, ``PlannedReplica``).
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st
from support.ms_helpers import SG, Harness, ms_manifest, role, with_image

from pulumi_lws.core.k8s.keys import POD_DELETION_COST
from pulumi_lws.modelserving import labels as L
from pulumi_lws.modelserving.groups import (
    DELETING,
    GROUP_STATUSES,
    RUNNING,
    GroupState,
    RoleReplicaState,
)
from pulumi_lws.modelserving.rollout.budgets import (
    PULUMI_LWS,
    ServingGroupBudget,
    scale_role_budget,
)
from pulumi_lws.modelserving.rollout.deletion import sync_servinggroup_replicas
from pulumi_lws.modelserving.rollout.role import RoleSpec
from pulumi_lws.modelserving.rollout.role_planner import plan_role_rollout
from pulumi_lws.modelserving.rollout.scale_down import scale_down_roles
from pulumi_lws.modelserving.rollout.servinggroup import (
    CREATE,
    REPLACE,
    PlannedGroup,
    fixed_point,
    plan_servinggroup_rollout,
)

#: replicas lowered from 4 to 2 mid-rollout; maxSurge 1 keeps expected at 3 while old groups remain
BUDGET = ServingGroupBudget(2, 0, 1, 1)
#: ordinal 0 (old) is the cheapest to delete (the binpack plugin or a user marked it -10)
OBSERVED = [
    GroupState(0, "old", RUNNING, -10),
    GroupState(1, "old", RUNNING, 0),
    GroupState(2, "new", RUNNING, 0),
    GroupState(3, "new", RUNNING, 0),
]


def test_the_cheapest_group_goes_first_in_a_scale_down_during_a_rollout():
    upstream = sync_servinggroup_replicas(
        OBSERVED, BUDGET, "new", current_revision="old", controller_revisions={"old", "new"}, choices=PULUMI_LWS
    )
    assert upstream.action == "down" and upstream.deleted == (0,)  # Kthena's scale-down on this observation
    plan = plan_servinggroup_rollout(BUDGET, "new", OBSERVED, current_revision="old", known_revisions={"old"})
    assert plan.trace[0] == "sync: delete 0:old", plan.trace
    assert 3 in plan.desired and plan.desired[3] == "new"  # the Running new group is kept (cost 0 would delete it)
    assert next(g for g in plan.groups if g.ordinal == 0).deletion_cost == -10  # a Deleting group keeps its cost


def test_a_predicted_surge_drain_keeps_the_costly_group():
    """The surge drain at the end of a rollout is a scale-down of Running groups: the predicted
    stages keep the group its pods mark costly (5) and delete a cheap new one, as Kthena would."""
    budget = ServingGroupBudget(3, 0, 2, 2)
    observed = [GroupState(3, "old", RUNNING, 0), GroupState(5, "new", RUNNING, 5)]
    plan = plan_servinggroup_rollout(budget, "new", observed, current_revision="old", known_revisions={"old"})
    assert plan.trace == (
        "sync: create 0:new",
        "sync: create 1:new",
        "sync: create 2:new",
        "rolling update: delete 3:old",
    )
    assert plan.remaining[0].ids == ("0", "1", "5")  # without the cost: ("0", "1", "2"), ordinal 5 deleted


def test_the_cost_of_a_creating_group_decides_a_predicted_stage():
    """A group Creating now keeps its pods (and their cost) once ready: the predicted drain deletes it."""
    budget = ServingGroupBudget(3, 0, 1, 2)
    observed = [
        GroupState(1, "new", "Creating", -5),
        GroupState(2, "new", "Creating", 0),
        GroupState(5, "old", RUNNING, 0),
    ]
    plan = plan_servinggroup_rollout(budget, "new", observed, current_revision="old", known_revisions={"old"})
    assert plan.trace == ("sync: create 0:new", "sync: create 3:new")
    assert [p.ids for p in plan.remaining[:2]] == [("0", "1", "2", "3"), ("0", "2", "3")]  # not ("0", "1", "2")


def test_created_and_replaced_groups_have_no_cost_deleted_ones_keep_theirs():
    budget = ServingGroupBudget(3, 0, 1, 1)
    observed = [GroupState(o, "old", RUNNING, 7) for o in range(3)]
    state, error, _ = fixed_point(budget, "new", observed, current_revision="old", known_revisions={"old"})
    assert error is None
    for g in state.values():
        if g.change in (CREATE, REPLACE):
            assert g.deletion_cost == 0, g
        else:
            assert g.deletion_cost == 7, g
    assert any(g.change == CREATE for g in state.values())
    assert PlannedGroup(4, "new", DELETING, deletion_cost=2).state() == GroupState(4, "new", DELETING, 2)


costly = st.dictionaries(
    st.integers(0, 9),
    st.tuples(st.sampled_from(("old", "new")), st.sampled_from(GROUP_STATUSES), st.integers(-3, 3)),
    max_size=8,
).map(lambda d: [GroupState(o, r, s, c) for o, (r, s, c) in d.items()])
budgets = st.builds(
    ServingGroupBudget,
    replicas=st.integers(0, 8),
    partition=st.integers(0, 4),
    max_unavailable=st.integers(0, 3),
    max_surge=st.integers(0, 3),
)


@settings(max_examples=400, deadline=None)
@given(budgets, costly)
def test_every_scale_down_of_the_fixed_point_is_upstreams_on_the_costed_state(budget, observed):
    """The first sync of the fixed point deletes what Kthena's sync deletes on the observation,
    costs included; with every cost equal the fixed point is what it was without costs."""
    plan = plan_servinggroup_rollout(
        budget, "new", observed, current_revision="old", known_revisions={"old"}, predict=False
    )
    upstream = sync_servinggroup_replicas(
        observed, budget, "new", current_revision="old", controller_revisions={"old", "new"}, choices=PULUMI_LWS
    )
    by_ordinal = {g.ordinal: g for g in observed}
    want = [f"sync: delete {o}:{by_ordinal[o].revision}" for o in upstream.deleted if by_ordinal[o].status != DELETING]
    assert plan.trace[: len(want)] == tuple(want)  # a re-picked Deleting group changes nothing (no trace line)
    flat = plan_servinggroup_rollout(
        budget,
        "new",
        [replace(g, deletion_cost=0) for g in observed],
        current_revision="old",
        known_revisions={"old"},
        predict=False,
    )
    uniform = plan_servinggroup_rollout(
        budget,
        "new",
        [replace(g, deletion_cost=2) for g in observed],
        current_revision="old",
        known_revisions={"old"},
        predict=False,
    )
    assert flat.trace == uniform.trace and flat.desired == uniform.desired


def test_a_reconcile_scales_down_by_the_pods_annotated_cost():
    """End to end on the simulator: the binpack plugin marks group 1's pods cheapest (-10); the
    user lowers replicas 4 -> 2 with a new image. Kthena's sync deletes group 1 first, then the
    rolling deletion (budget 2: the Deleting group 1 re-picked, then ordinal 3): groups 0 and 2 stay.
    With the cost dropped the sync deleted ordinal 3 and the deletion 3 and 2 (0 and 1 stayed)."""
    doc = ms_manifest(replicas=4, roles=[role("r", 1, workers=1)], mu=0, surge=1, strategy=SG)
    h = Harness.create(doc)
    for pod in h.cluster.store.list("Pod", "default"):  # the stored pods (cluster.list returns copies)
        if pod["metadata"]["labels"][L.GROUP_NAME] == "ms-1":
            pod["metadata"].setdefault("annotations", {})[POD_DELETION_COST] = "-10"
            h.cluster.store.touch(pod)
    h.change_spec(with_image({**doc, "spec": {**doc["spec"], "replicas": 2}}, "img:2"))
    result, _, _ = h.up()
    declared = {m["metadata"]["labels"][L.GROUP_NAME] for m in result.manifests if m["kind"] == "StatefulSet"}
    assert declared == {"ms-0", "ms-2"}, result.stage.summary()


def test_role_rolling_update_scales_a_role_down_by_its_replicas_cost():
    """RoleRollingUpdate, role ``r`` lowered 3 -> 2 with a new template: upstream's ``scaleDownRoles``
    deletes the cheapest Running replica (``r-0``, -10), not the highest ordinal; the role planner's
    replicas (``PlannedReplica``) carry the observed cost as the ServingGroup planner's groups do."""
    roles = tuple(RoleReplicaState("r", o, "old-hash", RUNNING, -10 if o == 0 else 0) for o in range(3))
    observed = [GroupState(0, "old", RUNNING, -10, roles)]
    spec = RoleSpec("r", 2, "new-hash", scale_role_budget(2, 1, 0))
    assert scale_down_roles(list(roles), 2) == ["r-0"]  # upstream's pick on the observation
    plan = plan_role_rollout([spec], "new", observed, replicas=1, current_revision="old")
    gone = {r.ordinal: r.deletion_cost for r in plan.roles if not r.declared}
    # the scale-down takes r-0, then the role budget (3 - (2 - 1) - 1 Deleting) the highest outdated, r-2;
    # with the cost dropped it took r-2, then r-1, and kept the cheapest replica r-0
    assert gone == {0: -10, 2: 0} and [r.ordinal for r in plan.roles if r.declared] == [1], plan.roles
