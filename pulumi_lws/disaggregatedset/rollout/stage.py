"""Adapter from a :class:`DisaggregatedPlan` to :class:`pulumi_lws.core.contract.stage.Stage`.

Encoding (docs/disaggregatedset.md, "Rollout decisions"):

* ``policy`` ``"disaggregatedset"``; ``target_revision`` the DS revision (8 hex); ``partition``
  None; ``replicas`` = Σ declared ``spec.replicas`` over every child (all slices, revisions, roles);
* ``group_revisions``: ``"<slice>/<role>/<revision>"`` -> ``str(replicas)`` for every **declared**
  child (a child absent from it is deleted by this stage), plus ``"<slice>/<role>"`` -> the target
  revision for every (slice, spec role) — the row key, as ModelServing's role stage keys groups;
* ``groups``: one ``GroupView`` per (slice, role) in slice then planner order (spec roles, then
  removed roles): ``id`` ``"<slice>/<role>"``, ``index`` the slice, ``revision`` the target,
  ``phase`` the role's ``"old|new"`` declared after the stage, ``ready`` = the new child's observed
  ready replicas reach its declared count and no old replica remains, ``updated`` = no old
  replica remains and new is at the target, ``exists`` = the new child is observed;
* ``remaining``: one ``PredictedStage`` per predicted stage with ``replicas`` = Σ declared and
  ``groups`` one char per replica, per (slice, role) in the same order: ``o`` × old then ``U`` ×
  new (the prediction assumes every replica ready), ``ids`` one per char,
  ``"<slice>/<role>/old|new/<i>"``, ``complete`` when every old replica is gone and every role is
  at its target; the per-role ``old|new`` is ``PredictedDsStage.cells`` / ``.row()``;
* ``case`` the planner branch of slice 0 (``scale-up``, ``proportional-drain``, ``force-drain``,
  ``new-at-target``, ``correct-abnormal-state``, ``barrier``, ``planner-done``) or ``steady``;
* ``notes``: held drains/raises per slice (the floor/ceiling rules), then one line per slice and
  role, ``"<slice>/<role> old|new -> old|new"``.
"""

from __future__ import annotations

from collections.abc import Sequence

from pulumi_lws.core.contract.stage import GroupView, Lane, PredictedStage, Stage, lane_title
from pulumi_lws.disaggregatedset.rollout.predict import PredictedDsStage
from pulumi_lws.disaggregatedset.rollout.slice_plan import STEADY, DisaggregatedPlan
from pulumi_lws.disaggregatedset.rollout.stage_planner import POLICY


def group_revisions(p: DisaggregatedPlan) -> dict[str, str]:
    out: dict[str, str] = {}
    for s in p.slices:
        for line in s.roles:
            if line.in_spec:
                out[f"{s.slice}/{line.role}"] = p.target_revision
        for c in s.declared:
            out[c.key] = str(c.replicas)
    return out


def group_views(p: DisaggregatedPlan) -> tuple[GroupView, ...]:
    views = []
    for s in p.slices:
        new_children = {c.role: c for c in s.children if c.revision == p.target_revision}
        for line in s.roles:
            c = new_children.get(line.role)
            observed = c.observed if c else None
            ready = (
                observed is not None
                and observed.ready >= line.new_after
                and line.old_after == 0
                and (c is not None and c.declared)
            )
            views.append(
                GroupView(
                    id=f"{s.slice}/{line.role}",
                    revision=p.target_revision,
                    ready=ready,
                    updated=line.old_after == 0 and line.new_after >= line.target,
                    exists=observed is not None,
                    index=s.slice,
                    phase=line.cell,
                )
            )
    return tuple(views)


def stage_lanes(p: DisaggregatedPlan) -> tuple[Lane, ...]:
    """Each (slice, role)'s old|new after the stage (titled by :func:`~pulumi_lws.core.contract.stage.lane_title`);
    ready = what is ready now, capped by the new counts."""
    return tuple(
        Lane(
            lane_title(s.slice, line.role),
            line.old_after,
            line.new_after,
            min(line.old_ready, line.old_after),
            min(line.new_ready, line.new_after),
        )
        for s in p.slices
        for line in s.roles
    )


def predicted_lanes(ps: PredictedDsStage) -> tuple[Lane, ...]:
    return tuple(Lane(lane_title(c.slice, c.role), c.old, c.new, c.old, c.new) for c in ps.cells)


class _ReplicaIds:
    """The ``"<slice>/<role>/old|new/<i>"`` ids of every predicted stage, each string made once:
    a stage's ids are prefixes of one tuple per (slice, role, old|new), so a prediction of S stages
    over R replicas builds max-R strings, not S x R (a 500-stage prediction of 10,000 replicas made
    five million)."""

    def __init__(self, stages: Sequence[PredictedDsStage]) -> None:
        longest: dict[tuple[int, str, str], int] = {}
        for ps in stages:
            for c in ps.cells:
                for kind, n in (("old", c.old), ("new", c.new)):
                    key = (c.slice, c.role, kind)
                    longest[key] = max(longest.get(key, 0), n)
        self._ids = {key: tuple(f"{key[0]}/{key[1]}/{key[2]}/{i}" for i in range(n)) for key, n in longest.items()}

    def of(self, ps: PredictedDsStage) -> tuple[str, ...]:
        out: list[str] = []
        for c in ps.cells:  # list += tuple slice: pointer copies in C (a chain() iterates per id)
            out += self._ids[(c.slice, c.role, "old")][: c.old]
            out += self._ids[(c.slice, c.role, "new")][: c.new]
        return tuple(out)


def predicted_stage(ps: PredictedDsStage, ids: _ReplicaIds | None = None) -> PredictedStage:
    return PredictedStage(
        replicas=sum(c.old + c.new for c in ps.cells),
        partition=None,
        groups="".join("o" * c.old + "U" * c.new for c in ps.cells),
        ids=(ids or _ReplicaIds((ps,))).of(ps),
        complete=ps.complete,
        lanes=predicted_lanes(ps),
    )


def to_stage(p: DisaggregatedPlan, remaining: Sequence[PredictedDsStage] = ()) -> Stage:
    first = p.slices[0] if p.slices else None
    case = None if first is None else (STEADY if first.mode == STEADY else first.branch)
    ids = _ReplicaIds(remaining)
    return Stage(
        policy=POLICY,
        target_revision=p.target_revision,
        replicas=sum(c.replicas for c in p.declared),
        partition=None,
        group_revisions=group_revisions(p),
        groups=group_views(p),
        blocker=p.blocker,
        complete=p.complete,
        case=case,
        remaining=tuple(predicted_stage(r, ids) for r in remaining),
        notes=p.notes,
        lanes=stage_lanes(p),
    )
