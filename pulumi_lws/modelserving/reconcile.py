"""The one place where observe -> plan -> render is wired for ModelServing (pure: no Pulumi, no I/O).

``reconcile(ms, snapshot)`` is what one ``pulumi up``, one simulator tick and one test step do:
read the ServingGroups the cluster shows (:func:`~pulumi_lws.modelserving.observe.observe_groups`),
plan exactly one safe stage (the fixed point of upstream's loop for that observation:
:mod:`pulumi_lws.modelserving.rollout`), and render the objects of every group the stage declares
(:func:`~pulumi_lws.modelserving.render.render_modelserving`). No state between calls: the current
revision is derived from what the groups run, never stored, so a re-run after a crash at any point
can only move the rollout as far as the observed readiness allows.

Invariants:
* the stage declares at most ``replicas + maxSurge`` live groups (Deleting ones included) and keeps
  ``replicas - maxUnavailable`` available from a healthy start (ServingGroupRollingUpdate); per role
  and per group the role budgets (RoleRollingUpdate);
* every revision a declared group or role replica renders from is declared as a ControllerRevision
  that its StatefulSets depend on (written before anything uses it).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

from pulumi_lws.core.contract.errors import FieldError, SpecError
from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.core.contract.stage import Stage
from pulumi_lws.core.contract.workload import Reconciled
from pulumi_lws.core.features.adoption import pruned
from pulumi_lws.core.features.control import Control
from pulumi_lws.modelserving import labels as L
from pulumi_lws.modelserving import names
from pulumi_lws.modelserving.api.modelserving import KIND, ROLE_ROLLING_UPDATE, ModelServing
from pulumi_lws.modelserving.groups import DELETING, RUNNING, GroupState
from pulumi_lws.modelserving.legacy import adopt_legacy, legacy_replicas
from pulumi_lws.modelserving.observe import legacy_worker_replicas, observe_groups
from pulumi_lws.modelserving.recovery import plan_recovery
from pulumi_lws.modelserving.render import DeclaredGroup, DeclaredRole, modelserving_dependencies, render_modelserving
from pulumi_lws.modelserving.replicas import ObservedReplicas, observed_replicas
from pulumi_lws.modelserving.revision import RevisionCatalog, build_catalog, role_template_hash
from pulumi_lws.modelserving.rollout.budgets import scale_role_budget, scale_servinggroup_budget
from pulumi_lws.modelserving.rollout.role import RoleSpec
from pulumi_lws.modelserving.rollout.role_plan import RolePlan
from pulumi_lws.modelserving.rollout.role_planner import plan_role_rollout
from pulumi_lws.modelserving.rollout.servinggroup import ServingGroupPlan, plan_servinggroup_rollout
from pulumi_lws.modelserving.rollout.stage import role_stage, servinggroup_stage

#: Annotation that caps, from YAML, how many ServingGroups may have roles in flight at once
#: under RoleRollingUpdate (the component's ``max_groups_in_flight`` wins when both are set).
MAX_GROUPS_IN_FLIGHT_ANNOTATION = "pulumi-lws.io/max-groups-in-flight"


@dataclass(frozen=True)
class ModelServingOptions:
    """Choices that are not part of the upstream API. ``max_groups_in_flight``: RoleRollingUpdate
    only; None = upstream's independent per-group behaviour."""

    max_groups_in_flight: int | None = None
    #: pause / progress deadline (:mod:`pulumi_lws.core.features.control`), applied by ``Workload.reconcile``
    control: Control | None = None

    def for_ms(self, ms: ModelServing) -> ModelServingOptions:
        if self.max_groups_in_flight is not None:
            return self
        return replace(self, max_groups_in_flight=max_groups_in_flight_annotation(ms))  # keeps ``control``


def max_groups_in_flight_annotation(ms: ModelServing) -> int | None:
    """The annotation's value; SpecError naming it when it is not an integer >= 1."""
    raw = ms.metadata.annotations.get(MAX_GROUPS_IN_FLIGHT_ANNOTATION)
    if raw is None:
        return None
    if not str(raw).isdigit() or int(raw) < 1:
        path = f"metadata.annotations[{MAX_GROUPS_IN_FLIGHT_ANNOTATION}]"
        raise SpecError(KIND, ms.name, [FieldError(path, "must be an integer >= 1", raw)])
    return int(raw)


def current_revision(groups: tuple[GroupState, ...], update_revision: str) -> str | None:
    """What upstream keeps in ``status.currentRevision``, derived instead of stored: the revision
    most live, non-updated groups run (ties: the smallest key), None when every group is updated."""
    old = Counter(g.revision for g in groups if g.status != DELETING and g.revision != update_revision)
    if not old:
        return None
    return min(old, key=lambda rev: (-old[rev], rev))


def carried_revision(
    ms: ModelServing, snapshot: Snapshot, groups: tuple[GroupState, ...], target: str, catalog: RevisionCatalog
) -> str | None:
    """``status.currentRevision`` when no live group runs an old revision any more but the rollout
    is not complete (a group is relabelled to the target and not ready yet): upstream keeps the
    previous current revision until every group is updated and available. That revision is the
    OLDEST observed ControllerRevision of this ModelServing other than the target (every newer
    one never completed: had it, the older ones would have been dropped), and its
    ControllerRevision is kept declared until the rollout completes, so it stays observable
    across reconciles and crashes. None when the rollout is complete or there is none."""
    live = [g for g in groups if g.status != DELETING]
    complete = len(groups) == ms.replicas == len(live) and all(
        g.revision == target and g.status == RUNNING for g in live
    )
    if complete:
        return None
    older = [
        cr
        for cr in snapshot.list("ControllerRevision", **{L.NAME: ms.name})
        if (cr.get("metadata") or {}).get("labels", {}).get(L.REVISION) not in (None, target)
        and cr["metadata"]["labels"][L.REVISION] in catalog
    ]
    if not older:
        return None
    oldest = min(
        older, key=lambda cr: (str(cr["metadata"].get("creationTimestamp") or ""), str(cr["metadata"]["name"]))
    )
    return str(oldest["metadata"]["labels"][L.REVISION])


def reconcile(ms: ModelServing, snapshot: Snapshot, options: ModelServingOptions = ModelServingOptions()) -> Reconciled:
    """Plan one stage for ``ms`` against ``snapshot`` and render the objects it needs."""
    options = options.for_ms(ms)
    catalog = build_catalog(ms, snapshot.list("ControllerRevision", **{L.NAME: ms.name}))
    replicas = observed_replicas(ms.name, snapshot)  # every pod and StatefulSet by role replica, read once
    groups = observe_groups(snapshot, ms, catalog, replicas)
    recovery = plan_recovery(ms, snapshot, groups, replicas)  # docs/modelserving.md "Recovery"
    groups = recovery.mark(groups)  # role replicas being recovered count as Creating
    target = catalog.target  # the spec's revision, or the content-matched one it adopts
    current = current_revision(groups, target)
    if ms.strategy == ROLE_ROLLING_UPDATE:
        stage, declared = _role_stage(ms, groups, target, current, catalog, options, snapshot, replicas)
    else:
        stage, declared = _servinggroup_stage(ms, groups, target, current, catalog)
    stage = recovery.apply_to(stage)  # uid-guarded pod deletes appended to the stage's actions
    stage = forced_rollback(ms, snapshot, stage)
    shown = current if current is not None else carried_revision(ms, snapshot, groups, target, catalog)
    keep = (shown,) if shown is not None and shown in catalog else ()  # status.currentRevision's record
    manifests = render_modelserving(ms, declared, catalog, keep_revisions=keep)
    # adopted Kthena pods: kept without StatefulSets, or deleted to be recreated (docs/modes.md)
    legacy = legacy_replicas(ms.name, snapshot, replicas)
    if legacy:
        manifests, stage = adopt_legacy(
            ms.name, snapshot, manifests, stage, legacy_worker_replicas(ms, catalog, snapshot, replicas), legacy
        )
    del declared  # one value per group, not needed past the render (issue 27: the peak is reached below)
    observed = tuple(_as_observed(m, snapshot) if m.get("kind") == "ControllerRevision" else m for m in manifests)
    del manifests
    dependencies = modelserving_dependencies(observed, check_order=True)  # raises if one comes after its dependent
    return Reconciled(stage=stage, manifests=observed, catalog=catalog, dependencies=dependencies)


def forced_rollback(ms: ModelServing, snapshot: Snapshot, stage: Stage) -> Stage:
    """``stage`` plus a uid-guarded delete of every outdated, unready pod its StatefulSet will not
    replace (:mod:`pulumi_lws.core.features.forced_rollback`): a group relabelled to a newer revision after a
    bad one gets its pods replaced, as Kthena's delete-and-recreate of the ServingGroup does. Pods
    recovery already deletes are skipped."""
    from pulumi_lws.core.features.forced_rollback import with_forced_rollback

    statefulsets = snapshot.by_label("StatefulSet", L.NAME).get(ms.name, ())  # as list(...), without the copy
    if not statefulsets:
        return stage
    actions = with_forced_rollback(
        stage.actions,
        statefulsets,
        snapshot.list("Pod"),  # filtered by the name label in forced rollback's one pass over them
        now=snapshot.now,
        reuse=snapshot.reuse,
        selector=(L.NAME, ms.name),
    )
    return stage if len(actions) == len(stage.actions) else replace(stage, actions=actions)


def _as_observed(manifest: dict[str, Any], snapshot: Snapshot) -> dict[str, Any]:
    """A ControllerRevision with the observed ``data`` when that is the same content in another
    serialisation (Kthena's Go JSON keeps ``creationTimestamp: null``): an adopted revision is
    re-declared as is, never replaced (its data is immutable)."""
    if manifest.get("kind") != "ControllerRevision":
        return manifest
    seen = snapshot.get("ControllerRevision", manifest["metadata"]["name"])
    if (
        seen is None
        or seen.get("data") == manifest.get("data")
        or pruned(seen.get("data")) != pruned(manifest.get("data"))
    ):
        return manifest
    return {**manifest, "data": seen["data"]}


def _servinggroup_stage(
    ms: ModelServing, groups: tuple[GroupState, ...], target: str, current: str | None, catalog: RevisionCatalog
) -> tuple[Stage, list[DeclaredGroup]]:
    cfg = ms.rolling_update_configuration()
    budget = scale_servinggroup_budget(ms.replicas, cfg.max_unavailable, cfg.max_surge, cfg.partition)
    plan: ServingGroupPlan = plan_servinggroup_rollout(
        budget, target, groups, current_revision=current, known_revisions=catalog.keys(), ms=ms.name
    )
    return servinggroup_stage(plan), [DeclaredGroup(o, rev) for o, rev in sorted(plan.desired.items())]


def role_specs(ms: ModelServing) -> tuple[RoleSpec, ...]:
    """The current spec's roles as the role planner takes them (budgets scaled per role)."""
    return tuple(
        RoleSpec(
            r.name,
            r.replicas,
            role_template_hash(r),
            scale_role_budget(r.replicas, r.max_unavailable, r.max_surge, r.partition),
        )
        for r in ms.roles
    )


def _role_stage(
    ms: ModelServing,
    groups: tuple[GroupState, ...],
    target: str,
    current: str | None,
    catalog: RevisionCatalog,
    options: ModelServingOptions,
    snapshot: Snapshot | None = None,
    replicas: ObservedReplicas | None = None,
) -> tuple[Stage, list[DeclaredGroup]]:
    legacy = {
        g.ordinal: {r.name: h for r in ms.roles if (h := catalog.role_hash(g.revision, r.name)) is not None}
        for g in groups
    }
    current_hashes = {r.name: h for r in ms.roles if current and (h := catalog.role_hash(current, r.name))}
    plan: RolePlan = plan_role_rollout(
        role_specs(ms),
        target,
        groups,
        replicas=ms.replicas,
        legacy_hashes=legacy,
        current_revision=current,
        current_role_hashes=current_hashes,
        max_groups_in_flight=options.max_groups_in_flight,
        ms=ms.name,
    )
    running = _template_revisions(ms, snapshot, replicas) if snapshot is not None else {}
    declared = []
    for g, revision in sorted(plan.group_revisions.items()):
        roles = tuple(
            DeclaredRole(
                r.role,
                r.ordinal,
                _template_revision(
                    catalog, r.role, r.template_hash, revision, target, running.get((g, r.role, r.ordinal))
                ),
            )
            for r in plan.roles
            if r.group == g and r.declared
        )
        declared.append(DeclaredGroup(g, revision if revision in catalog else target, roles))
    return role_stage(plan), declared


def _template_revision(
    catalog: RevisionCatalog,
    role: str,
    template_hash: str,
    group_revision: str,
    target: str,
    running: str | None = None,
) -> str:
    """The revision to render a role replica's template from: one whose role has ``template_hash``
    (the revision its entry StatefulSet's pod template already carries first, then its group's
    revision, so an unchanged replica keeps its pods even when its group moves to the update
    revision), else the target; the running revision also when its role is the found one's content
    in another serialisation (adopted from Kthena)."""
    prefer = (running, group_revision) if running else (group_revision,)
    found = catalog.revision_with_role_hash(role, template_hash, prefer=prefer) or target
    if running and running != found and running in catalog and catalog.same_role(running, found, role):
        return running  # an adopted revision: same template under upstream's serialisation (no pod change)
    return found


def _template_revisions(
    ms: ModelServing, snapshot: Snapshot, replicas: ObservedReplicas | None = None
) -> dict[tuple[int, str, int], str]:
    """``(group, role, ordinal)`` -> the ``revision`` label of its entry StatefulSet's pod template
    (what its pods run), for every live entry StatefulSet of ``ms``, and of every legacy (adopted)
    replica's pods."""
    out: dict[tuple[int, str, int], str] = {}
    for sts in snapshot.list("StatefulSet", **{L.NAME: ms.name}):
        meta = sts.get("metadata") or {}
        lbl = meta.get("labels") or {}
        if meta.get("deletionTimestamp"):
            continue
        group, role, rid = str(lbl.get(L.GROUP_NAME, "")), str(lbl.get(L.ROLE, "")), str(lbl.get(L.ROLE_ID, ""))
        tmpl = (((sts.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels") or {}
        try:
            key = (int(group.rsplit("-", 1)[1]), role, int(rid.rsplit("-", 1)[1]))
        except (IndexError, ValueError):
            continue
        if meta.get("name") == names.entry_statefulset(ms.name, *key) and tmpl.get(L.REVISION):
            out[key] = str(tmpl[L.REVISION])
    for key, rep in legacy_replicas(ms.name, snapshot, replicas).items():  # adopted pods: the revision they run
        if rep.revision:
            out[key] = rep.revision
    return out


def label_selector(ms: ModelServing) -> str:
    """Upstream ``status.labelSelector``: one entry pod per ServingGroup (HPA/KEDA count groups)."""
    first = ms.roles[0].name
    return ",".join(
        f"{k}={v}" for k, v in ((L.ENTRY, L.ENTRY_VALUE), (L.NAME, ms.name), (L.ROLE, first), (L.ROLE_ID, f"{first}-0"))
    )


def status_of(ms: ModelServing, snapshot: Snapshot) -> dict[str, Any]:
    """Upstream ``UpdateModelServingStatus`` over what the cluster shows, as the component publishes
    it. RoleRollingUpdate: a ServingGroup counts as available only while every role is ready (#1344)."""
    from pulumi_lws.modelserving.status import update_modelserving_status

    catalog = build_catalog(ms, snapshot.list("ControllerRevision", **{L.NAME: ms.name}))
    replicas = observed_replicas(ms.name, snapshot)
    groups = observe_groups(snapshot, ms, catalog, replicas)
    groups = plan_recovery(ms, snapshot, groups, replicas).mark(groups)  # a recovering group is Creating, as upstream
    target = catalog.target  # the spec's revision, or the content-matched one it adopts
    current = current_revision(groups, target) or carried_revision(ms, snapshot, groups, target, catalog)
    status = update_modelserving_status(
        groups,
        ms.replicas,
        target,
        current or "",
        ms.partition(),
        partition_mode="ordinal",
        roles_must_be_ready=ms.strategy == ROLE_ROLLING_UPDATE,
    )
    return {**status.as_dict(), "labelSelector": label_selector(ms)}
