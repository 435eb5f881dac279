"""A ModelServing prediction (``plan``'s rows, ``remainingStages``): its bounded walk and its waves.

Both planners (:mod:`.servinggroup`, :mod:`.role_planner`) predict by replaying themselves on the
observation each stage leaves (every declared group ready, every deletion finished); each
predicted stage replans every group, so a walk of S stages over N groups costs O(N x S).

**Waves** (as DisaggregatedSet's prediction, ``disaggregatedset/rollout/predict.py``). A walk is
shown stage by stage up to :data:`MAX_PREDICTED` stages — a rollout that fits them is shown
exactly as before. Past that the walk goes on to its end all the same, bounded by **work**: it
stops once it has visited :data:`MAX_WORK` planner groups (Σ groups replanned over its stages;
1,000 ServingGroups at maxUnavailable 1, ~1,000 stages of 1,000 groups, fit), and never before
``MAX_PREDICTED`` stages. A walk longer than ``MAX_PREDICTED`` stages is shown **in waves**: at
most :data:`MAX_WAVES` rows of consecutive stages, each the exact state the last stage of its wave
leaves (every row a stage the exact walk reaches; the last row the walk's last stage); a note says
so ("prediction in waves: ..."). A walk cut at its work bound says so ("prediction stopped after N
stages"): the rollout continues past the last row (10,000 ServingGroups at maxUnavailable 1 stop
there).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from pulumi_lws.core.contract.stage import PredictedStage
from pulumi_lws.core.contract.waves import waves as group_waves
from pulumi_lws.core.contract.waves import waves_note

MAX_PREDICTED = 200  # stages shown one by one; a longer walk is shown in waves
MAX_WAVES = 50  # rows of a prediction in waves
MAX_WORK = 2_000_000  # planner-group visits per prediction past MAX_PREDICTED stages

#: one predicted stage, the groups its planner call visited, and whether the walk ends with it
Step = tuple[PredictedStage, int, bool]


@dataclass(frozen=True)
class MsPrediction:
    """The stages shown after the planned one and how they were predicted."""

    stages: tuple[PredictedStage, ...]
    walked: int  # stages the walk predicted (== len(stages) unless shown in waves)
    finished: bool = True  # the walk ended within its bounds
    waves: bool = False
    shown: int = MAX_PREDICTED  # the most stages shown one by one
    visits: int = 0  # planner-group visits the walk cost

    def notes(self) -> tuple[str, ...]:
        """What a reader must know about this prediction (empty when it is shown stage by stage
        and ended)."""
        out = []
        if self.waves:
            out.append(waves_note(self.walked, self.shown, len(self.stages)))
        if not self.finished:
            out.append(
                f"prediction stopped after {self.walked:,} stages ({self.visits:,} planner-group visits); "
                "the rollout continues past the last one shown"
            )
        return tuple(out)


def waves(stages: Sequence[PredictedStage], rows: int = MAX_WAVES) -> tuple[PredictedStage, ...]:
    """``stages`` grouped into at most ``rows`` waves (:func:`pulumi_lws.core.contract.waves.waves`)."""
    return group_waves(stages, rows)


def prediction(
    walk: Iterator[Step], *, shown: int | None = None, work: int | None = None, rows: int | None = None
) -> MsPrediction:
    """The stages of ``walk`` (module doc): one by one when it ends within ``shown`` stages
    (default :data:`MAX_PREDICTED`), else in at most ``rows`` (:data:`MAX_WAVES`) waves of a walk
    bounded by ``work`` (:data:`MAX_WORK`) planner-group visits. The defaults are read at each call
    (tests lower them)."""
    shown = MAX_PREDICTED if shown is None else shown
    work = MAX_WORK if work is None else work
    rows = MAX_WAVES if rows is None else rows
    out: list[PredictedStage] = []
    visits, ended = 0, False
    while not ended and (len(out) < shown or visits < work):
        step = next(walk, None)
        if step is None:
            ended = True
            break
        stage, cost, ended = step
        out.append(stage)
        visits += cost
    if len(out) <= shown:
        return MsPrediction(tuple(out), len(out), ended, False, shown, visits)
    return MsPrediction(waves(out, rows), len(out), ended, True, shown, visits)
