"""What the DisaggregatedSet stage planner returns: per child, per role, per slice, per reconcile.

Plain frozen values, apart from :mod:`~pulumi_lws.disaggregatedset.rollout.stage_planner` so that
module holds only the decisions: nothing here decides, it only derives. A :class:`ChildPlan` with
``declared`` False is a deletion; its ``changed`` compares it with the observed child and leaves
``replaces`` out (the annotation records the rollout, it moves no replica). A :class:`SlicePlan`'s
``mode`` is :data:`STEADY`, :data:`INIT`, :data:`ROLLOUT` or :data:`REMOVED_SLICE`; its ``branch``
is the planner's branch, one of the values below, or empty (a steady slice that holds nothing).
:attr:`DisaggregatedPlan.blocker` merges the slices' blockers under one code: progress deadline
exceeded when any slice has it, else the first slice's.
"""

from __future__ import annotations

from dataclasses import dataclass

from pulumi_lws.core.contract.stage import Blocker
from pulumi_lws.disaggregatedset.planner import UpdateStep
from pulumi_lws.disaggregatedset.rollout.apply import Applied
from pulumi_lws.disaggregatedset.rollout.blockers import PROGRESS_DEADLINE_EXCEEDED
from pulumi_lws.disaggregatedset.rollout.observation import ChildObservation

STEADY, INIT, ROLLOUT = "steady", "init", "rollout"
#: ``SlicePlan.branch`` when no planner step applies: the barrier holds / the slice is removed
BARRIER, REMOVED_SLICE, PLANNER_DONE = "barrier", "removed-slice", "planner-done"
#: ``SlicePlan.branch`` when upstream's step would break the floor and new is raised first instead
RAISE_FIRST = "raise-first"


@dataclass(frozen=True)
class ChildPlan:
    """One child LWS after the stage (declared) — or deleted (``declared`` False)."""

    slice: int
    revision: str
    role: str
    replicas: int  # desired spec.replicas (0 for a deleted child)
    observed: ChildObservation | None  # None: created by this stage
    initial_replicas: int | None = None  # the annotation to render (None: none)
    declared: bool = True
    #: the replaces-revisions annotation to render on a target child (None: none; labels.REPLACES).
    #: Not part of :attr:`changed`: it records the rollout, it moves no replica
    replaces: str | None = None

    @property
    def key(self) -> str:
        return f"{self.slice}/{self.role}/{self.revision}"

    @property
    def created(self) -> bool:
        return self.observed is None and self.declared

    @property
    def changed(self) -> bool:
        if not self.declared:
            return self.observed is not None
        return (
            self.observed is None
            or self.observed.replicas != self.replicas
            or self.observed.initial_replicas != self.initial_replicas
        )


@dataclass(frozen=True)
class RoleLine:
    """One role of one slice, in planner order: before and after the stage."""

    role: str
    in_spec: bool
    target: int
    old_before: int
    new_before: int
    old_ready: int
    new_ready: int
    old_after: int
    new_after: int
    initial_old: int = 0  # Σ initial-replicas of the old revisions (the planner's baseline)

    @property
    def cell(self) -> str:
        """``old|new`` after the stage (the stage table's cell)."""
        return f"{self.old_after}|{self.new_after}"


@dataclass(frozen=True)
class SlicePlan:
    """What one reconcile declares for one slice."""

    slice: int
    target_revision: str
    mode: str  # STEADY | INIT | ROLLOUT | REMOVED_SLICE
    children: tuple[ChildPlan, ...]  # declared and deleted children
    roles: tuple[RoleLine, ...]
    stable: bool = True  # the barrier (always True outside a rollout)
    step: UpdateStep | None = None  # upstream's decision this stage
    applied: Applied | None = None
    branch: str = ""  # the planner branch, or BARRIER / PLANNER_DONE / REMOVED_SLICE
    blocker: Blocker | None = None
    complete: bool = False
    notes: tuple[str, ...] = ()
    ceiling_relaxed: bool = False  # upstream's own step exceeds maxSurge and was applied as is (apply module doc)

    @property
    def declared(self) -> tuple[ChildPlan, ...]:
        return tuple(c for c in self.children if c.declared)

    @property
    def deleted(self) -> tuple[ChildPlan, ...]:
        return tuple(c for c in self.children if not c.declared)

    @property
    def changed(self) -> bool:
        return any(c.changed for c in self.children)


@dataclass(frozen=True)
class DisaggregatedPlan:
    """Every slice's plan for one reconcile, in slice order (removed slices last)."""

    target_revision: str
    roles: tuple[str, ...]  # spec roles
    slices: tuple[SlicePlan, ...]

    @property
    def children(self) -> tuple[ChildPlan, ...]:
        return tuple(c for s in self.slices for c in s.children)

    @property
    def declared(self) -> tuple[ChildPlan, ...]:
        return tuple(c for c in self.children if c.declared)

    @property
    def blocker(self) -> Blocker | None:
        blockers = [s.blocker for s in self.slices if s.blocker is not None]
        if not blockers:
            return None
        if len(blockers) == 1:
            return blockers[0]
        deadline = [b for b in blockers if b.code == PROGRESS_DEADLINE_EXCEEDED]
        code = deadline[0].code if deadline else blockers[0].code
        return Blocker(
            code,
            "; ".join(b.message for b in blockers),
            tuple(g for b in blockers for g in b.groups),
            tuple(dict.fromkeys(r for b in blockers for r in b.remedies)),
        )

    @property
    def complete(self) -> bool:
        return all(s.complete for s in self.slices)

    @property
    def changed(self) -> bool:
        return any(s.changed for s in self.slices)

    @property
    def notes(self) -> tuple[str, ...]:
        return tuple(n for s in self.slices for n in s.notes)
