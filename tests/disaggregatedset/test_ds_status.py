"""DisaggregatedSet status: roleStatuses sums, Available/Progressing (upstream reasons, messages,
mutual exclusion; addenda §4.7: Available needs Σreplicas == Σready == Σupdated == target × slices)."""

from __future__ import annotations

from pulumi_lws.disaggregatedset.status import (
    ALL_ROLES_READY,
    AVAILABLE,
    AVAILABLE_MESSAGE,
    FALSE,
    PROGRESSING,
    PROGRESSING_MESSAGE,
    ROLLOUT_IN_PROGRESS,
    TRUE,
    ChildStatus,
    Condition,
    RoleStatus,
    role_statuses,
    set_condition,
    update_status,
)

NEW, OLD = "bbbbbbbb", "aaaaaaaa"


def ready(role: str, rev: str, n: int, slice_: int = 0) -> ChildStatus:
    return ChildStatus(role, rev, n, n, n, slice_)


def test_role_statuses_sum_slices_and_revisions_updated_only_on_target() -> None:
    children = [
        ready("prefill", NEW, 2),
        ready("prefill", OLD, 4),
        ready("prefill", NEW, 6, 1),
        ChildStatus("decode", NEW, 2, 1, 2),
        ready("decode", OLD, 1),
        ready("gone", OLD, 3),
    ]
    assert role_statuses(["prefill", "decode"], children, NEW) == (
        RoleStatus("prefill", 12, 12, 8),
        RoleStatus("decode", 3, 2, 2),
    )  # a removed role has no entry


def test_available_needs_every_sum_equal_to_target_times_slices() -> None:
    roles = [("prefill", 6), ("decode", 2)]
    done = [ready("prefill", NEW, 6, s) for s in (0, 1)] + [ready("decode", NEW, 2, s) for s in (0, 1)]
    st = update_status(roles, done, NEW, slices=2, generation=3)
    assert st.available
    assert [c.to_wire() for c in st.conditions] == [
        {
            "type": AVAILABLE,
            "status": TRUE,
            "reason": ALL_ROLES_READY,
            "message": AVAILABLE_MESSAGE,
            "observedGeneration": 3,
        }
    ]
    assert (
        AVAILABLE_MESSAGE
        == "All roles have reached their desired replica count, ready and updated to the current revision"
    )
    for bad in (
        done[:-1],  # a slice short
        done + [ChildStatus("decode", OLD, 1, 1, 0)],  # an old replica still counted
        done[:-1] + [ChildStatus("decode", NEW, 2, 1, 2, 1)],  # not ready
        done[:-1] + [ChildStatus("decode", NEW, 2, 2, 1, 1)],
    ):  # not updated
        st = update_status(roles, bad, NEW, slices=2)
        assert not st.available
        (c,) = st.conditions
        assert (c.type, c.status, c.reason, c.message) == (PROGRESSING, TRUE, ROLLOUT_IN_PROGRESS, PROGRESSING_MESSAGE)
    assert PROGRESSING_MESSAGE == (
        "Not all roles have reached their desired replica count, ready and updated to the current revision"
    )


def test_external_role_without_scaler_is_never_available() -> None:
    st = update_status([("prefill", 0), ("decode", None)], [], NEW, slices=1)
    assert not st.available


def test_conditions_are_mutually_exclusive_and_transition_times_move_on_flips_only() -> None:
    prog = set_condition((), Condition(PROGRESSING, TRUE, ROLLOUT_IN_PROGRESS, PROGRESSING_MESSAGE, 1), now="t1")
    assert [(c.type, c.status, c.last_transition_time) for c in prog] == [(PROGRESSING, TRUE, "t1")]
    avail = set_condition(prog, Condition(AVAILABLE, TRUE, ALL_ROLES_READY, AVAILABLE_MESSAGE, 1), now="t2")
    assert [(c.type, c.status, c.reason, c.last_transition_time) for c in avail] == [
        (PROGRESSING, FALSE, ALL_ROLES_READY, "t2"),
        (AVAILABLE, TRUE, ALL_ROLES_READY, "t2"),
    ]
    again = set_condition(avail, Condition(AVAILABLE, TRUE, ALL_ROLES_READY, AVAILABLE_MESSAGE, 2), now="t3")
    assert [(c.type, c.status, c.observed_generation, c.last_transition_time) for c in again] == [
        (PROGRESSING, FALSE, 2, "t2"),
        (AVAILABLE, TRUE, 2, "t2"),
    ]
    other = set_condition(
        (Condition("Custom", TRUE, "x", "y"),), Condition(AVAILABLE, TRUE, ALL_ROLES_READY, AVAILABLE_MESSAGE), now="t4"
    )
    assert other[0] == Condition("Custom", TRUE, "x", "y")  # other condition types are left alone
