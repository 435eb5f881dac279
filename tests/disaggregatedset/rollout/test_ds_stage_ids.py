"""rollout/stage.py: the predicted stages' replica ids, built from one id tuple per (slice, role,
old|new) shared by every stage, equal the per-stage formula they replaced."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pulumi_lws.disaggregatedset.rollout.predict import PredictedDsStage, RoleCell
from pulumi_lws.disaggregatedset.rollout.stage import _ReplicaIds, predicted_stage


def reference_ids(ps: PredictedDsStage) -> tuple[str, ...]:
    return tuple(
        f"{c.slice}/{c.role}/{kind}/{i}"
        for c in ps.cells
        for kind, n in (("old", c.old), ("new", c.new))
        for i in range(n)
    )


cells = st.builds(
    RoleCell, st.integers(0, 2), st.sampled_from(("prefill", "decode")), st.integers(0, 6), st.integers(0, 6)
)
stages = st.builds(PredictedDsStage, st.lists(cells, max_size=4).map(tuple), complete=st.booleans())


@given(st.lists(stages, max_size=6))
def test_shared_ids_equal_the_per_stage_formula(remaining: list[PredictedDsStage]) -> None:
    ids = _ReplicaIds(remaining)
    for ps in remaining:
        shared, alone = predicted_stage(ps, ids), predicted_stage(ps)
        assert shared == alone
        assert shared.ids == reference_ids(ps)
        assert len(shared.ids) == len(shared.groups) == shared.replicas
