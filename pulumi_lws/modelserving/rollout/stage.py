"""Adapters from the ModelServing planners' results to :class:`pulumi_lws.core.contract.stage.Stage`.

Encoding (docs/modelserving.md, "Rollout decisions"):

* ServingGroupRollingUpdate (policy ``modelserving/servinggroup``): ``group_revisions`` =
  ``{str(ordinal): revision}`` of every **declared** group; ``groups`` = one ``GroupView`` per
  group in ordinal order (``id = str(ordinal)``, ``index = ordinal``), including groups being
  deleted (``phase="deleting"``, absent from ``group_revisions``); ``replicas`` = declared groups;
  ``partition`` = the resolved ServingGroup partition.
* RoleRollingUpdate (policy ``modelserving/role``): ``group_revisions`` holds ``str(g)`` -> the
  group's revision after the stage **and** ``"g/role/r"`` -> the template hash of every declared
  role replica; ``groups`` = one ``GroupView`` per ServingGroup (ready = every role at ready);
  ``partition`` None (partitions are per role); ``lanes`` = per role its declared replicas on an
  old template | on the role's template (``RolePlan.role_lanes``; stage tables draw these).
"""

from __future__ import annotations

from pulumi_lws.core.contract.stage import GroupView, Stage
from pulumi_lws.modelserving.groups import RUNNING
from pulumi_lws.modelserving.rollout import role_planner, servinggroup
from pulumi_lws.modelserving.rollout.role_plan import RolePlan
from pulumi_lws.modelserving.rollout.servinggroup import ServingGroupPlan

_PHASES = {"create": "creating", "replace": "replacing", "delete": "deleting"}


def servinggroup_stage(plan: ServingGroupPlan) -> Stage:
    views = []
    for g in plan.groups:
        phase = _PHASES.get(g.change, "deleting" if not g.declared else "")
        views.append(
            GroupView(
                id=str(g.ordinal),
                revision=g.revision,
                ready=g.declared and g.status == RUNNING,
                updated=g.revision == plan.update_revision,
                exists=g.observed,
                index=g.ordinal,
                surge=False,
                phase=phase,
            )
        )
    return Stage(
        policy=servinggroup.POLICY,
        target_revision=plan.update_revision,
        replicas=len(plan.desired),
        partition=plan.budget.partition,
        group_revisions={str(o): r for o, r in plan.desired.items()},
        groups=tuple(views),
        blocker=plan.blocker,
        complete=plan.complete,
        remaining=plan.remaining,
        notes=plan.notes,
    )


def role_stage(plan: RolePlan) -> Stage:
    revs: dict[str, str] = {str(g): r for g, r in plan.group_revisions.items()}
    revs.update(plan.desired)
    views = tuple(
        GroupView(
            id=str(g),
            revision=r,
            ready=plan.group_ready(g),
            updated=plan.group_updated(g),
            exists=g not in plan.new_groups,
            index=g,
            phase="creating" if g in plan.new_groups else "",
        )
        for g, r in plan.group_revisions.items()
    )
    return Stage(
        policy=role_planner.POLICY,
        target_revision=plan.update_revision,
        replicas=len(plan.group_revisions),
        partition=None,
        group_revisions=revs,
        groups=views,
        blocker=plan.blocker,
        complete=plan.complete,
        remaining=plan.remaining,
        notes=plan.warnings,
        lanes=plan.role_lanes(),
    )
