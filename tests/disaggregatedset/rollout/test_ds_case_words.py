"""DisaggregatedSet stage descriptions are the API's plain words, as LeaderWorkerSet's: every case
id its stage planner emits is described through ``Workload.case_words`` (never ``planner step
<id>`` or a bare branch id such as ``scale-up``), in the component's preview-log stage table."""

from __future__ import annotations

from support import ds_helpers as DS

from pulumi_lws.components.outputs import stage_table
from pulumi_lws.core.contract.workload import describe_case, workload_for
from pulumi_lws.disaggregatedset.planner import BRANCHES
from pulumi_lws.disaggregatedset.rollout.cases import CASE_WORDS
from pulumi_lws.disaggregatedset.rollout.slice_plan import (
    BARRIER,
    PLANNER_DONE,
    RAISE_FIRST,
    REMOVED_SLICE,
    STEADY,
)

EVERY_CASE = {*BRANCHES, STEADY, BARRIER, PLANNER_DONE, RAISE_FIRST, REMOVED_SLICE}


def test_every_case_id_has_words_through_the_workload():
    assert set(CASE_WORDS) == EVERY_CASE
    assert workload_for("DisaggregatedSet").case_words is CASE_WORDS
    for case in EVERY_CASE:
        words = describe_case(case)
        assert words == CASE_WORDS[case] and "planner" not in words and case not in words


def test_a_rollout_describes_each_stage_in_plain_words():
    old = DS.ds_manifest(
        DS.role("prefill", 3, size=2, surge=1, unavailable=0), DS.role("decode", 2, size=2, surge=1, unavailable=0)
    )
    h = DS.Harness.create(old)
    h.change_spec(DS.with_image(old, "img:2"))
    seen = set()
    for _ in range(60):
        result, _, _ = h.up()
        stage = result.stage
        seen.add(stage.case)
        first_row = stage_table(stage, h.WORKLOAD.stage_lanes(h.spec)).splitlines()[2]
        assert f"now: {CASE_WORDS[stage.case]}" in first_row
        assert "planner step" not in first_row and f" {stage.case} " not in first_row
        if h.converged():
            break
        h.advance(1.0)
    assert h.converged()
    # the lockstep rollout passes through growth, drains, the barrier and the final steady stage
    assert {"scale-up", "proportional-drain", STEADY} <= seen
