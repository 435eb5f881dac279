"""UpdateModelServingStatus: counts, revision promotion (PR #1626 hold), conditions, tie-break."""

from __future__ import annotations

from pulumi_lws.modelserving.groups import GroupState, RoleReplicaState
from pulumi_lws.modelserving.status import (
    AVAILABLE,
    PROGRESSING,
    UPDATE_IN_PROGRESS,
    most_common_revision,
    update_modelserving_status,
)


def G(o, rev, st="Running", roles=()):
    return GroupState(o, rev, st, 0, roles)


def test_available_when_complete():
    st = update_modelserving_status([G(0, "b"), G(1, "b")], 2, "b", "a")
    assert (st.current_revision, st.current_replicas, st.last_condition_type) == ("b", 2, AVAILABLE)
    assert st.conditions[-1].reason == "AllGroupsReady" and st.conditions[-1].message == "All Serving groups are ready"


def test_update_in_progress_message_is_go_formatted():
    st = update_modelserving_status([G(0, "a"), G(1, "b", "Creating"), G(2, "b")], 3, "b", "a")
    c = st.conditions[-1]
    assert (c.type, c.reason) == (UPDATE_IN_PROGRESS, "GroupsUpdating")
    assert c.message == "Some groups is progressing: [1], Updated Groups are: [1 2]"


def test_progressing_only_when_no_rollout_is_active():
    # partition 2 protects both old groups, counts match, but one is not Running -> active (available != R)
    st = update_modelserving_status([G(0, "a", "Creating"), G(1, "a")], 2, "b", "a", 2)
    assert st.last_condition_type == UPDATE_IN_PROGRESS
    # Progressing needs: nothing outdated past the partition, len == R, available == R, yet a group not
    # ready -- impossible with available == R, so upstream's Progressing is unreachable in PR1626 except
    # through roles_must_be_ready (pulumi-lws, #1344): available is computed with roles, active is too.
    roles = (RoleReplicaState("p", 0, "h", "Creating"),)
    st = update_modelserving_status([G(0, "b", roles=roles), G(1, "b")], 2, "b", "b", roles_must_be_ready=True)
    assert st.available_replicas == 1 and st.last_condition_type == UPDATE_IN_PROGRESS


def test_exclusive_conditions_flip():
    first = update_modelserving_status([G(0, "b")], 1, "b", "b")
    nxt = update_modelserving_status(
        [G(0, "b"), G(1, "c", "Creating")], 1, "c", "b", previous_conditions=first.conditions
    )
    kinds = {c.type: c.status for c in nxt.conditions}
    assert kinds == {AVAILABLE: "False", UPDATE_IN_PROGRESS: "True"}
    assert PROGRESSING not in kinds


def test_tie_break_is_by_count_then_lexicographic():
    assert most_common_revision(["v2", "v1", "v2", "v1"]) == "v1"
    assert most_common_revision(["z", "z", "a"]) == "z"
    st = update_modelserving_status([G(0, "v9"), G(1, "v3"), G(2, "new")], 3, "new", "")
    assert st.current_revision == "v3"


def test_deleting_groups_count_in_replicas_not_updated():
    st = update_modelserving_status([G(0, "b", "Deleting"), G(1, "b")], 1, "b", "b")
    assert (st.replicas, st.updated_replicas, st.current_replicas) == (2, 1, 2)


def test_roles_must_be_ready_marks_group_unavailable():
    roles = (RoleReplicaState("p", 0, "h", "Running"), RoleReplicaState("p", 1, "h", "Creating"))
    assert update_modelserving_status([G(0, "b", roles=roles)], 1, "b", "b").available_replicas == 1
    assert (
        update_modelserving_status([G(0, "b", roles=roles)], 1, "b", "b", roles_must_be_ready=True).available_replicas
        == 0
    )
