"""The stages still to come, assuming every declared replica becomes ready (``plan``'s table).

:func:`predict_remaining` replays the stage planner on the observation each stage would leave:
children as declared (deleted ones gone, created ones added to the target revision, the newest),
every replica ready, annotations as rendered. It stops at the first plan that is complete and
changes nothing (when ``first`` itself was the last move — a creation, a scale-up — that ready
state is the one predicted stage, as the other APIs predict it), at a blocker other than :data:`~pulumi_lws.disaggregatedset.rollout.
stage_planner.WAITING`, or after :data:`MAX_PREDICTED` stages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pulumi_lws.disaggregatedset.rollout.blockers import WAITING
from pulumi_lws.disaggregatedset.rollout.observation import (
    ChildObservation,
    RevisionObservation,
    RoleTarget,
    SliceObservation,
)
from pulumi_lws.disaggregatedset.rollout.stage_planner import (
    DisaggregatedPlan,
    plan,
)

MAX_PREDICTED = 500


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


def predict_remaining(
    first: DisaggregatedPlan, observations: Sequence[SliceObservation], slices: int, roles: Sequence[RoleTarget]
) -> tuple[PredictedDsStage, ...]:
    """The stages after ``first`` (the plan of ``observations``), replicas becoming ready together."""
    out: list[PredictedDsStage] = []
    cur_plan, cur_obs = first, tuple(observations)
    for _ in range(MAX_PREDICTED):
        if cur_plan.blocker is not None and cur_plan.blocker.code != WAITING:
            break
        cur_obs = observed_after(cur_plan, cur_obs)
        nxt = plan(cur_obs, slices, first.target_revision, roles)
        if not nxt.changed:
            if not out and not first.complete:  # ``first`` is the last move (a creation, a scale-up):
                out.append(_settled(nxt))  # its replicas becoming ready is the one stage left
            break
        done = all(line.old_after == 0 and line.new_after == line.target for s in nxt.slices for line in s.roles)
        out.append(PredictedDsStage(cells_of(nxt), tuple(s.branch for s in nxt.slices), nxt.notes, done))
        cur_plan = nxt
    return tuple(out)
