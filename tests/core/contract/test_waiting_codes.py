"""The one notion of "waiting for pods" (``core/contract/stage.py``): the blocker codes the cluster
clears by itself are exactly the planners' own waiting codes, and every loop that runs ``pulumi up``
again and again reads them the same (``pulumi-lws up --until-complete`` here; ``pulumi-lws
rollout`` in tests/cli/test_rollout_driver.py)."""

from __future__ import annotations

import pytest

from pulumi_lws.cli.stack.commands import Run, _settled
from pulumi_lws.core.contract.stage import (
    WAITING_CODES,
    WAITING_FOR_CLUSTER_CODES,
    Blocker,
    Stage,
    is_waiting,
    waits_for_cluster,
)


def test_the_codes_the_cluster_clears_are_the_planners_own_waiting_codes() -> None:
    from pulumi_lws.core.features.adoption import POD_OWNERS_HELD
    from pulumi_lws.disaggregatedset.rollout import blockers as ds
    from pulumi_lws.lws.rollout.hash import blockers as hash_mode
    from pulumi_lws.lws.rollout.ordinal import planner as ordinal
    from pulumi_lws.modelserving.rollout import role_planner, servinggroup

    planners = {
        ordinal.WAITING,  # Ordinal LWS and Hash LWS: groups becoming ready, removed, replaced
        hash_mode.DEFERRED,  # Hash PostTermination: terminating groups going away
        servinggroup.WAITING,
        servinggroup.WAITING_DELETION,
        role_planner.WAITING,
        role_planner.CAPPED,  # max-groups-in-flight: the groups in flight becoming ready
        ds.WAITING,
        POD_OWNERS_HELD,  # adoption: cleared by the next pulumi up, once the disowns of this one ran
    }
    assert planners == WAITING_FOR_CLUSTER_CODES
    assert WAITING_FOR_CLUSTER_CODES < WAITING_CODES  # timelines: not a failure either
    assert {ordinal.SURGE_HELD, "paused"} == WAITING_CODES - WAITING_FOR_CLUSTER_CODES


@pytest.mark.parametrize(
    ("code", "waits"),
    [
        ("waiting-for-groups", True),
        ("groups-in-flight-cap", True),
        ("group-replacement-deferred", True),
        ("surge-held-by-partition", False),  # waits for a person to reset the partition
        ("paused", False),  # waits for a person to resume
        ("resource-deadlock-717", False),
        ("insufficient-capacity", False),
        (None, False),
    ],
)
def test_waits_for_cluster(code, waits) -> None:
    assert waits_for_cluster(code) is waits
    if waits:
        assert is_waiting(code)


def _run(**blockers: Blocker | None) -> Run:
    stages = {
        name: Stage("lws/ordinal", "rev", 2, 0, {}, blocker=blocker, complete=blocker is None)
        for name, blocker in blockers.items()
    }
    return Run(preview=False, changes=[], logs=[], outputs={}, previous_outputs={}, stages=stages)


def test_up_until_complete_keeps_going_on_every_code_the_cluster_clears_and_stops_on_the_others() -> None:
    """Was a ``waiting-for-`` prefix of its own: a ModelServing's groups-in-flight cap or a Hash
    LWS's PostTermination wait ended ``--until-complete`` blocked (exit 1) mid-rollout."""
    for code in sorted(WAITING_FOR_CLUSTER_CODES):
        assert _settled(_run(web=Blocker(code, "pacing"), done=None)) == (False, []), code
    complete, blocked = _settled(_run(web=Blocker("surge-held-by-partition", "partition 2 keeps ...")))
    assert not complete and blocked == ["web: surge-held-by-partition: partition 2 keeps ..."]
    assert _settled(_run(a=None, b=None)) == (True, [])
