"""The stages still to come, assuming every declared replica becomes ready (``plan``'s table).

:func:`predict_remaining` replays the stage planner on the observation each stage would leave:
children as declared (deleted ones gone, created ones added to the target revision, the newest),
every replica ready, annotations as rendered. It stops at the first plan that is complete and
changes nothing (when ``first`` itself was the last move — a creation, a scale-up — that ready
state is the one predicted stage, as the other APIs predict it), at a blocker other than :data:`~pulumi_lws.disaggregatedset.rollout.
stage_planner.WAITING`, or after :data:`MAX_WALK` stages.

**Waves.** A rollout that needs more than :data:`MAX_PREDICTED` stages (1,000 groups per role at
the default budget, one group per role per stage: ~2,000 stages) is walked to its end all the
same — each stage is the planner's fixed point on a handful of counts per role, cheap — but shown
**in waves** (:func:`prediction`): consecutive stages are grouped, at most :data:`MAX_WAVES` of
them, and each wave is the exact state its last stage leaves (so every row is a stage the exact
walk reaches, within the budgets, and the last row is the walk's last stage); a note says so.
Work is bounded: at most :data:`MAX_WALK` planner calls per prediction (O(stages x slices x
roles)); a walk cut there says so ("prediction stopped after ..."). A rollout that fits
``MAX_PREDICTED`` stages is shown stage by stage, as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pulumi_lws.core.contract.waves import waves as group_waves
from pulumi_lws.core.contract.waves import waves_note
from pulumi_lws.disaggregatedset.rollout.blockers import WAITING
from pulumi_lws.disaggregatedset.rollout.observation import (
    ChildObservation,
    RevisionObservation,
    RoleTarget,
    SliceObservation,
)
from pulumi_lws.disaggregatedset.rollout.slice_plan import DisaggregatedPlan
from pulumi_lws.disaggregatedset.rollout.stage_planner import plan

MAX_PREDICTED = 500  # stages shown one by one; a longer walk is shown in waves
MAX_WAVES = 50  # rows of a prediction in waves
MAX_WALK = 100_000  # planner calls per prediction: 10,000 groups per role at one per stage fit


@dataclass(frozen=True)
class RoleCell:
    """One role of one slice after a predicted stage: old (Σ old revisions) | new replicas."""

    slice: int
    role: str
    old: int
    new: int

    @property
    def cell(self) -> str:
        return f"{self.old}|{self.new}"


@dataclass(frozen=True)
class PredictedDsStage:
    """A future stage: every (slice, role)'s ``old|new`` and the planner branch per slice."""

    cells: tuple[RoleCell, ...]
    branches: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    complete: bool = False  # every old replica gone and every spec role at its target

    def row(self) -> str:
        return " ".join(f"{c.slice}/{c.role}={c.cell}" for c in self.cells)


def cells_of(p: DisaggregatedPlan) -> tuple[RoleCell, ...]:
    return tuple(RoleCell(s.slice, line.role, line.old_after, line.new_after) for s in p.slices for line in s.roles)


def observed_after(p: DisaggregatedPlan, observations: Sequence[SliceObservation]) -> tuple[SliceObservation, ...]:
    """The observation the plan leaves once every declared replica is ready."""
    order = {o.slice: [r.revision for r in o.revisions] for o in observations}
    out = []
    for s in p.slices:
        revs: dict[str, dict[str, ChildObservation]] = {}
        for c in s.declared:
            revs.setdefault(c.revision, {})[c.role] = ChildObservation(
                c.replicas, c.replicas, c.initial_replicas, replaces=c.replaces
            )
        if not revs:
            continue
        known = [r for r in order.get(s.slice, []) if r in revs and r != p.target_revision]
        newest = [p.target_revision] if p.target_revision in revs else []
        out.append(SliceObservation(s.slice, tuple(RevisionObservation(r, revs[r]) for r in newest + known)))
    return tuple(out)


def _settled(p: DisaggregatedPlan) -> PredictedDsStage:
    """``p`` (a plan that changes nothing) as the stage where every declared replica is ready."""
    done = all(line.old_after == 0 and line.new_after == line.target for s in p.slices for line in s.roles)
    return PredictedDsStage(cells_of(p), tuple(s.branch for s in p.slices), p.notes, done)


def _walk(
    first: DisaggregatedPlan,
    observations: Sequence[SliceObservation],
    slices: int,
    roles: Sequence[RoleTarget],
    limit: int,
) -> tuple[list[PredictedDsStage], bool]:
    """The stages after ``first``, replicas becoming ready together, at most ``limit`` of them, and
    whether the walk ended (a plan that changes nothing, a blocker) before the limit."""
    out: list[PredictedDsStage] = []
    cur_plan, cur_obs = first, tuple(observations)
    for _ in range(limit):
        if cur_plan.blocker is not None and cur_plan.blocker.code != WAITING:
            return out, True
        cur_obs = observed_after(cur_plan, cur_obs)
        nxt = plan(cur_obs, slices, first.target_revision, roles)
        if not nxt.changed:
            if not out and not first.complete:  # ``first`` is the last move (a creation, a scale-up):
                out.append(_settled(nxt))  # its replicas becoming ready is the one stage left
            return out, True
        done = all(line.old_after == 0 and line.new_after == line.target for s in nxt.slices for line in s.roles)
        out.append(PredictedDsStage(cells_of(nxt), tuple(s.branch for s in nxt.slices), nxt.notes, done))
        cur_plan = nxt
    return out, False


@dataclass(frozen=True)
class DsPrediction:
    """The stages shown after the planned one and how they were predicted."""

    stages: tuple[PredictedDsStage, ...]
    walked: int  # stages the walk predicted (== len(stages) unless shown in waves)
    finished: bool = True  # the walk ended within MAX_WALK stages
    waves: bool = False
    shown: int = MAX_PREDICTED  # the most stages shown one by one
    limit: int = MAX_WALK  # the most stages walked

    def notes(self) -> tuple[str, ...]:
        """What a reader must know about this prediction (empty when it is shown stage by stage)."""
        out = []
        if self.waves:
            out.append(waves_note(self.walked, self.shown, len(self.stages)))
        if not self.finished:
            out.append(
                f"prediction stopped after {self.walked:,} stages ({self.limit:,} planner steps); "
                "the rollout continues past the last one shown"
            )
        return tuple(out)


def waves(stages: Sequence[PredictedDsStage], rows: int = MAX_WAVES) -> tuple[PredictedDsStage, ...]:
    """``stages`` grouped into at most ``rows`` waves (:func:`pulumi_lws.core.contract.waves.waves`)."""
    return group_waves(stages, rows)


def prediction(
    first: DisaggregatedPlan,
    observations: Sequence[SliceObservation],
    slices: int,
    roles: Sequence[RoleTarget],
    *,
    shown: int | None = None,
    limit: int | None = None,
    rows: int | None = None,
) -> DsPrediction:
    """The stages after ``first`` (module doc): one by one when the walk ends within ``shown``
    stages (default :data:`MAX_PREDICTED`), else in at most ``rows`` (:data:`MAX_WAVES`) waves of a
    walk of at most ``limit`` (:data:`MAX_WALK`) stages. The defaults are read at each call (tests
    lower them)."""
    shown = MAX_PREDICTED if shown is None else shown
    limit = MAX_WALK if limit is None else limit
    rows = MAX_WAVES if rows is None else rows
    out, ended = _walk(first, observations, slices, roles, max(shown, limit))
    if len(out) <= shown:
        return DsPrediction(tuple(out), len(out))
    return DsPrediction(waves(out, rows), len(out), ended, True, shown, limit)


def predict_remaining(
    first: DisaggregatedPlan, observations: Sequence[SliceObservation], slices: int, roles: Sequence[RoleTarget]
) -> tuple[PredictedDsStage, ...]:
    """The stages after ``first`` (the plan of ``observations``), replicas becoming ready together
    (:func:`prediction`'s stages)."""
    return prediction(first, observations, slices, roles).stages
