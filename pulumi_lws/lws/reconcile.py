"""The one place where observe -> plan -> render is wired (pure: no Pulumi, no I/O).

``reconcile(lws, snapshot)`` is what one ``pulumi up``, one simulator tick and one test step do:
given the desired spec and what the cluster shows, pick exactly one safe stage and return the
objects to declare plus the actions to take. It keeps no state between calls: re-running it on
the same snapshot returns the same result, and re-running it after a partial apply can only
move the rollout as far as the observed readiness allows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pulumi_lws.core.contract.dependencies import Ref, check_dependency_order
from pulumi_lws.core.contract.snapshot import Snapshot, sts_partition, sts_replicas
from pulumi_lws.core.contract.stage import Stage
from pulumi_lws.core.contract.workload import Reconciled
from pulumi_lws.core.features.adoption import pod_owner_actions
from pulumi_lws.core.features.control import Control, is_paused
from pulumi_lws.core.features.hold import RECOVERY_PARAM
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.revision import RevisionCatalog, build_catalog

#: Annotation that opts one LWS into the budget-driven combined rollout (#1018) from YAML.
UPDATE_ORDER_ANNOTATION = "pulumi-lws.io/update-order"
UpdateOrder = Literal["ScaleFirst", "RolloutFirst"]
#: the annotation's accepted values, as the option's type (any other value: the option as given)
_UPDATE_ORDERS: dict[str, UpdateOrder] = {"ScaleFirst": "ScaleFirst", "RolloutFirst": "RolloutFirst"}


@dataclass(frozen=True)
class ReconcileOptions:
    """Choices that are not part of the upstream API.

    ``update_order``: ``ScaleFirst`` is upstream's behaviour for a template change combined with
    a scale-up; ``RolloutFirst`` is the opt-in budget-driven order that avoids the #717 deadlock
    (replace old groups first within maxUnavailable, counting ready added groups toward the
    floor). ``gang_provider``: which gang-scheduling objects ``spec.scheduling`` expands into.
    """

    update_order: UpdateOrder = "ScaleFirst"
    gang_provider: Literal["kubernetes", "volcano"] = "kubernetes"
    volcano_queue: str | None = None
    #: pause / progress deadline (:mod:`pulumi_lws.core.features.control`), applied by ``Workload.reconcile``
    control: Control | None = None

    def for_lws(self, lws: LeaderWorkerSet) -> ReconcileOptions:
        order = _UPDATE_ORDERS.get(lws.metadata.annotations.get(UPDATE_ORDER_ANNOTATION) or "")
        return dataclasses.replace(self, update_order=order) if order is not None else self


def reconcile(lws: LeaderWorkerSet, snapshot: Snapshot, options: ReconcileOptions = ReconcileOptions()) -> Reconciled:
    """Plan one stage for ``lws`` against ``snapshot`` and render the objects it needs."""
    options = options.for_lws(lws)
    revisions = [o for o in snapshot.list("ControllerRevision", **{L.NAME: lws.name})]
    catalog = build_catalog(lws, revisions)
    pipeline = _reconcile_hash if lws.spec.group_identity == "Hash" else _reconcile_ordinal
    stage, manifests = pipeline(lws, snapshot, catalog, options)
    stage = forced_rollback(lws, snapshot, stage)
    dependencies = manifest_dependencies(lws, manifests, check_order=True)
    return Reconciled(stage=stage, manifests=tuple(manifests), catalog=catalog, dependencies=dependencies)


def manifest_dependencies(
    lws: LeaderWorkerSet, manifests: Sequence[Mapping[str, Any]], *, check_order: bool = False
) -> dict[Ref, tuple[Ref, ...]]:
    """The apply order of one reconcile's manifests (pure; docs/leaderworkerset.md "Apply order").

    * every workload after its Service and its revision's ControllerRevision
      (:func:`render.lws.workload_dependencies`);
    * Ordinal: every worker StatefulSet after the leader StatefulSet, so a worker template update
      never lands unless the partition that admits its group landed first (lws#225;
      :func:`render.lws.ordinal_dependencies`);
    * every workload after the gang objects its pods belong to, PodGroups after their Workload
      (:func:`render.scheduling.gang_dependencies`);
    * per-pod values ``admission-policy``: every workload after the MutatingAdmissionPolicy and its
      binding, the binding after the policy (:func:`render.admission.admission_dependencies`);
    * Hash: worker StatefulSets do NOT depend on the leader Deployment — a worker StatefulSet is
      rendered on its observed leader pod's revision (it is owned by that pod), never on the
      Deployment's template, so no apply order can put workers ahead of their leader, and a failing
      Deployment update must not hold back the workers of leaders already admitted.

    The result is ``merge_dependencies(manifests, workload, gang, ordinal)`` of those three rules,
    built in one pass over the manifests (the rules are per manifest); ``check_order``: also
    ``check_dependency_order`` on it, in the same pass.
    """
    from pulumi_lws.lws.render.admission import BINDING_KIND, POLICY_KIND, policy_name
    from pulumi_lws.lws.render.ordinal import POD_BEARING_KINDS
    from pulumi_lws.lws.render.scheduling import gang_dependencies

    refs = [(m["kind"], m["metadata"]["name"]) for m in manifests]  # ref_of
    position = {ref: n for n, ref in enumerate(refs)}
    if len(position) != len(refs):  # the same object twice: the general merge decides (and the check)
        return _merged_dependencies(lws, manifests, check_order)
    crs = {
        (m["metadata"].get("labels") or {}).get(L.TEMPLATE_REVISION_HASH): ref
        for m, ref in zip(manifests, refs)
        if ref[0] == "ControllerRevision"
    }
    gang = gang_dependencies(manifests)  # {} without gang objects (one scan of the kinds)
    policy: Ref = (POLICY_KIND, policy_name(lws))
    binding: Ref = (BINDING_KIND, policy[1])
    admission = policy in position  # admission_dependencies: every workload after the policy and binding
    leader: Ref | None = ("StatefulSet", lws.name)
    if lws.spec.group_identity == "Hash" or leader not in position:
        leader = None
    out: dict[Ref, tuple[Ref, ...]] = {}
    first_late: ValueError | None = None
    for n, (m, ref) in enumerate(zip(manifests, refs)):
        deps: list[Ref] = []
        if ref[0] in POD_BEARING_KINDS:  # workload_dependencies: its Service, its revision's CR
            spec = m.get("spec") or {}
            template = spec.get("template") or {}
            if template:
                service = spec.get("serviceName") or (template.get("spec") or {}).get("subdomain")
                if service:
                    deps.append(("Service", service))
                key = ((template.get("metadata") or {}).get("labels") or {}).get(L.TEMPLATE_REVISION_HASH)
                if key in crs:
                    deps.append(crs[key])
        if gang and ref in gang:
            deps += gang[ref]
        if admission and ref[0] in POD_BEARING_KINDS:
            deps += [policy, binding]
        elif admission and ref == binding:
            deps.append(policy)
        # ordinal_dependencies: a worker StatefulSet (group-index label, not the leader's) after the leader
        if (
            leader is not None
            and ref[0] == "StatefulSet"
            and ref != leader
            and L.GROUP_INDEX in (m["metadata"].get("labels") or {})
        ):
            deps.append(leader)
        kept: list[Ref] = []
        for d in deps:  # merge_dependencies: declared, not itself, first seen
            if d != ref and d in position and d not in kept:
                kept.append(d)
        if not kept:
            continue
        if check_order and first_late is None:
            late = [d for d in kept if position[d] >= n]
            if late:
                first_late = ValueError(f"{ref} is declared before its dependencies {late}")
        out[ref] = tuple(kept)
    if first_late is not None:  # raised once every rule ran, as the check after the merge did
        raise first_late
    return out


def _merged_dependencies(
    lws: LeaderWorkerSet, manifests: Sequence[Mapping[str, Any]], check_order: bool
) -> dict[Ref, tuple[Ref, ...]]:
    """:func:`manifest_dependencies` by the general merge of the three rules' results."""
    from pulumi_lws.core.contract.dependencies import merge_dependencies
    from pulumi_lws.lws.render.admission import admission_dependencies, uses_admission_policy
    from pulumi_lws.lws.render.ordinal import ordinal_dependencies, workload_dependencies
    from pulumi_lws.lws.render.scheduling import gang_dependencies

    parts = [workload_dependencies(manifests), gang_dependencies(manifests)]
    if uses_admission_policy(lws):
        parts.append(admission_dependencies(lws, manifests))
    if lws.spec.group_identity != "Hash":
        parts.append(ordinal_dependencies(lws.name, manifests))
    out = merge_dependencies(manifests, *parts)
    if check_order:
        check_dependency_order(manifests, out)
    return out


def forced_rollback(lws: LeaderWorkerSet, snapshot: Snapshot, stage: Stage) -> Stage:
    """``stage`` plus a uid-guarded delete of every outdated, unready pod its StatefulSet will not
    replace (:mod:`pulumi_lws.core.features.forced_rollback`: a bad template fixed mid-rollout), leader pods
    (which own their group's workers) in the foreground as failure handling deletes them. Pods
    another action already deletes are skipped; a leader pod below the leader partition is never
    touched (the partition is the rollout's budget)."""
    from pulumi_lws.core.features.forced_rollback import with_forced_rollback

    statefulsets = snapshot.list("StatefulSet", **{L.NAME: lws.name})
    if not statefulsets:
        return stage
    actions = with_forced_rollback(
        stage.actions,
        statefulsets,
        snapshot.list("Pod", **{L.NAME: lws.name}),
        now=snapshot.now,
        propagation={lws.name: "Foreground"},
        reuse=snapshot.reuse,
    )
    return stage if len(actions) == len(stage.actions) else dataclasses.replace(stage, actions=actions)


def held_for_failure(lws: LeaderWorkerSet, snapshot: Snapshot, stage: Stage, options: ReconcileOptions) -> Stage:
    """The stage failure handling plans against. Paused (:mod:`pulumi_lws.core.features.control`): the
    held state — the observed leader partition and replicas, each group on its observed revision,
    no admission — so a group the planned stage would replace or scale away, but the pause keeps,
    is still recreated when it fails. Otherwise ``stage`` itself."""
    if stage.complete or not is_paused("LeaderWorkerSet", lws, options.control):
        return stage
    held = dataclasses.replace(
        stage,
        actions=tuple(
            a
            for a in stage.actions  # recovery admissions stay
            if a.verb != "ungate" or a.params.get(RECOVERY_PARAM) is True
        ),
    )
    sts = snapshot.get("StatefulSet", lws.name)
    if lws.spec.group_identity == "Hash" or sts is None:
        return held
    observed = {g.id: g.revision for g in stage.groups if g.exists and g.revision}
    return dataclasses.replace(
        held,
        partition=sts_partition(sts),
        replicas=sts_replicas(sts),
        group_revisions={**dict(stage.group_revisions), **observed},
    )


def _reconcile_ordinal(
    lws: LeaderWorkerSet, snapshot: Snapshot, catalog: RevisionCatalog, options: ReconcileOptions
) -> tuple[Stage, list[Mapping[str, Any]]]:
    """Ordinal identity: rollout stage -> failure handling -> placement -> pod labels -> the
    disowns of an adopted fleet's leader-Pod owners (first) -> render -> gang objects.

    Order matters: failure handling sees the rollout's stage (it never recreates a group the
    rollout is replacing); placement sees the failure state (halted groups get no workers); pod
    labelling comes last among the actions, so it skips pods a failure action deletes and keys
    another action already sets (docs/rendering.md "Labels added at reconcile"); the restart counts are
    carried on the rendered leader StatefulSet last, so a ``pulumi up`` never reverts a count an
    action wrote (docs/failure-handling.md, docs/group-features.md).
    """
    from pulumi_lws.lws.render.ordinal import render_ordinal
    from pulumi_lws.lws.render.scheduling import with_gang_scheduling
    from pulumi_lws.lws.rollout.failure.ordinal import plan_failure_actions, with_failure_state
    from pulumi_lws.lws.rollout.ordinal.planner import plan_ordinal
    from pulumi_lws.lws.rollout.ordinal.pod_labels import label_actions
    from pulumi_lws.lws.rollout.placement import place_groups, with_placement

    stage = plan_ordinal(lws, snapshot, catalog, options)
    failure = plan_failure_actions(lws, snapshot, held_for_failure(lws, snapshot, stage, options))
    stage = failure.apply_to(stage)
    placement = place_groups(lws, snapshot, stage, catalog)
    stage = with_placement(stage, placement)
    stage = dataclasses.replace(stage, actions=stage.actions + label_actions(lws, snapshot, stage))
    # an adopted fleet's worker StatefulSets (and per-group Services) owned by their leader Pod:
    # those references go first, before any action of this stage (core.features.adoption)
    pod_owned = pod_owner_actions(
        o for kind in ("StatefulSet", "Service") for o in snapshot.list(kind, **{L.NAME: lws.name})
    )
    if pod_owned:
        stage = dataclasses.replace(stage, actions=pod_owned + stage.actions)
    leader = snapshot.get("StatefulSet", lws.name)
    manifests = render_ordinal(
        lws,
        stage,
        catalog,
        options,
        group_domains=placement.group_domains,
        worker_groups=placement.worker_groups,
        # admission policy: keys for every leader ordinal the StatefulSet may (re)create until
        # this apply lands (a scale-down still running, a held stage)
        live_replicas=sts_replicas(leader) if leader is not None else 0,
    )
    manifests = with_gang_scheduling(manifests, lws, stage, catalog, options.gang_provider, options.volcano_queue)
    return stage, list(with_failure_state(manifests, lws, failure))


def _reconcile_hash(
    lws: LeaderWorkerSet, snapshot: Snapshot, catalog: RevisionCatalog, options: ReconcileOptions
) -> tuple[Stage, list[Mapping[str, Any]]]:
    """Hash identity: admission stage -> paused recovery admissions -> failure handling -> render
    (counts on the Deployment)."""
    from pulumi_lws.lws.render.hash import render_hash
    from pulumi_lws.lws.rollout.failure.hash import plan_hash_failure, with_hash_failure_state
    from pulumi_lws.lws.rollout.failure.hash_paused import with_paused_recovery
    from pulumi_lws.lws.rollout.hash.planner import plan_hash

    stage = plan_hash(lws, snapshot, catalog, options)
    stage = with_paused_recovery(lws, snapshot, stage, is_paused("LeaderWorkerSet", lws, options.control))
    failure = plan_hash_failure(lws, snapshot, held_for_failure(lws, snapshot, stage, options))
    stage = failure.apply_to(stage)
    manifests = render_hash(lws, stage, catalog, options)
    return stage, list(with_hash_failure_state(manifests, lws, failure))
