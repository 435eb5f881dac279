"""Stage-table rows from a planner's :class:`Stage`, and the lane styles an API draws with.

One builder for every place a stage is shown before it happens: ``pulumi-lws plan`` (the first
reconcile of NEW and the planner's ``Stage.remaining``), the component's preview log and
controller-mode log, ``pulumi-lws status``. The table itself is drawn by
:func:`pulumi_lws.core.contract.trace.format_table`, the same function ``simulate`` prints its observed
rows with, so a planned and an observed row of the same state print alike.

Column meanings (the same for planned and observed rows, docs/trace-schema.md):
``Replicas`` = the replicas the workload's controllers are asked to run (LeaderWorkerSet: the
leader StatefulSet/Deployment's, surge included; ModelServing: ``spec.replicas``;
DisaggregatedSet: the sum over its role LeaderWorkerSets, old and new); ``Live`` = groups that
exist and are not terminating; ``Available`` = ready groups among them (LeaderWorkerSet and
ModelServing: at most ``replicas``, the quantity ``maxUnavailable`` bounds). A planned row counts
a group the stage deletes as live until it is gone (ModelServing's own count).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

from pulumi_lws.core.contract.stage import Lane, PredictedStage, Stage
from pulumi_lws.core.contract.trace import GroupCell, TraceRow


class Lanes(enum.Enum):
    """How an API's stage is drawn (``Workload.stage_lanes``): the table's lane columns."""

    #: one column per group: ``R-<ordinal>`` (``(Surge)`` past ``replicas``) or ``G-<key>`` (Hash),
    #: each a mark of :mod:`pulumi_lws.core.contract.glyphs` (LeaderWorkerSet; ModelServing's ServingGroups)
    GROUPS = "groups"
    #: one column per role, ``<role> old|new``: its groups on an old revision | on the target
    #: (DisaggregatedSet; ``<slice>/<role>`` past slice 0, :func:`pulumi_lws.core.contract.stage.lane_title`);
    #: Live and Available are the lanes' sums
    ROLES = "roles"
    #: one column per role, ``<role> old|new``: its replicas in every ServingGroup on an old
    #: template | on the target (ModelServing under RoleRollingUpdate, which rolls role replicas);
    #: Live and Available still count the groups
    ROLE_REPLICAS = "role-replicas"

    @property
    def by_role(self) -> bool:
        """The table draws one ``old|new`` column per role (``row.lanes``), not one per group."""
        return self is not Lanes.GROUPS

    @staticmethod
    def of_lanes(lanes: Sequence[Lane]) -> Lanes:
        """The style a stage's own lanes imply (``Lane.unit``), for a caller without the API at
        hand (the component's preview log, ``status``)."""
        if not lanes:
            return Lanes.GROUPS
        return Lanes.ROLES if all(lane.unit == "groups" for lane in lanes) else Lanes.ROLE_REPLICAS


def lanes_live(lanes: Sequence[Lane]) -> int:
    return sum(lane.old + lane.new for lane in lanes)


def lanes_available(lanes: Sequence[Lane]) -> int:
    return sum(lane.old_ready + lane.new_ready for lane in lanes)


def _is_surge(gid: str, replicas: int | None) -> bool:
    return replicas is not None and gid.isdigit() and int(gid) >= replicas


def _capped(count: int, replicas: int | None) -> int:
    return count if replicas is None else min(replicas, count)


def stage_row(
    n: int,
    stage: Stage,
    replicas: int | None = None,
    note: str = "",
    *,
    actions: tuple[str, ...] = (),
    labelled: tuple[str, ...] = (),
) -> TraceRow:
    """A reconcile's stage as a row: declared groups on their state, groups the stage deletes
    terminating (absent from ``group_revisions``). ``replicas``: the spec's (surge columns and
    the Available cap); None when the caller has only the stage (surge then from the groups)."""
    cells = []
    for g in stage.groups:
        declared = g.id in stage.group_revisions
        ready = g.ready and declared
        # a group this stage creates is drawn on the revision it is created on (a LeaderWorkerSet's
        # absent groups carry no revision: at creation they are the target's, as ModelServing's)
        updated = g.updated or (not g.exists and stage.group_revisions.get(g.id) == stage.target_revision)
        state = ("U" if ready else "u") if updated else ("o" if ready else "x")
        cells.append(
            GroupCell(
                id=g.id,
                state=state,
                revision=g.revision,
                surge=g.surge or _is_surge(g.id, replicas),
                detail="" if declared else "terminating",
            )
        )
    live = len(cells)  # terminating ones too (ModelServing counts them toward replicas + maxSurge)
    available = _capped(sum(1 for c in cells if c.state in "Uo" and not c.detail), replicas)
    if Lanes.of_lanes(stage.lanes) is Lanes.ROLES:  # the lanes count groups, the stage's views are per role
        live, available = lanes_live(stage.lanes), lanes_available(stage.lanes)
    return TraceRow(
        time=n,
        replicas=stage.replicas,
        partition=stage.partition or None,
        groups=tuple(cells),
        live=live,
        available=available,
        revision=stage.target_revision,
        note=note,
        case=stage.case,
        blocker=str(stage.blocker) if stage.blocker else None,
        blocker_code=stage.blocker.code if stage.blocker else None,
        lanes=stage.lanes,
        actions=actions,
        labelled=labelled,
    )


def predicted_row(
    n: int, p: PredictedStage, replicas: int | None = None, revision: str = "", note: str = ""
) -> TraceRow:
    """A ``Stage.remaining`` entry as a row (one char per declared group, ordinal order)."""
    cells = tuple(GroupCell(id=gid, state=c, surge=_is_surge(gid, replicas)) for gid, c in zip(p.group_ids(), p.groups))
    live, available = len(cells), _capped(sum(1 for c in cells if c.state in "Uo"), replicas)
    if Lanes.of_lanes(p.lanes) is Lanes.ROLES:  # a role's groups (role replicas leave the group counts)
        live, available = lanes_live(p.lanes), lanes_available(p.lanes)
    return TraceRow(
        time=n,
        replicas=p.replicas,
        partition=p.partition or None,
        groups=cells,
        live=live,
        available=available,
        revision=revision,
        lanes=p.lanes,
        note=note,
    )
