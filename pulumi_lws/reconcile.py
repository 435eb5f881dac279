"""The one place where observe -> plan -> render is wired (pure: no Pulumi, no I/O).

``reconcile(lws, snapshot)`` is what one ``pulumi up``, one simulator tick and one test step do:
given the desired spec and what the cluster shows, pick exactly one safe stage and return the
objects to declare plus the actions to take. It keeps no state between calls: re-running it on
the same snapshot returns the same result, and re-running it after a partial apply can only
move the rollout as far as the observed readiness allows.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Mapping

from pulumi_lws import labels as L
from pulumi_lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.observe import Snapshot
from pulumi_lws.revision import RevisionCatalog, build_catalog
from pulumi_lws.rollout.stage import Stage

#: Annotation that opts one LWS into the budget-driven combined rollout (#1018) from YAML.
UPDATE_ORDER_ANNOTATION = "pulumi-lws.io/update-order"


@dataclass(frozen=True)
class ReconcileOptions:
    """Choices that are not part of the upstream API.

    ``update_order``: ``ScaleFirst`` is upstream's behaviour for a template change combined with
    a scale-up; ``RolloutFirst`` is the opt-in budget-driven order that avoids the #717 deadlock
    (replace old groups first within maxUnavailable, counting ready added groups toward the
    floor). ``gang_provider``: which gang-scheduling objects ``spec.scheduling`` expands into.
    """

    update_order: Literal["ScaleFirst", "RolloutFirst"] = "ScaleFirst"
    gang_provider: Literal["kubernetes", "volcano"] = "kubernetes"
    volcano_queue: str | None = None

    def for_lws(self, lws: LeaderWorkerSet) -> "ReconcileOptions":
        order = lws.metadata.annotations.get(UPDATE_ORDER_ANNOTATION)
        if order in ("ScaleFirst", "RolloutFirst"):
            return ReconcileOptions(order, self.gang_provider, self.volcano_queue)  # type: ignore[arg-type]
        return self


@dataclass(frozen=True)
class Reconciled:
    stage: Stage
    manifests: tuple[Mapping[str, Any], ...]
    catalog: RevisionCatalog = field(repr=False)


def reconcile(lws: LeaderWorkerSet, snapshot: Snapshot, options: ReconcileOptions = ReconcileOptions()) -> Reconciled:
    """Plan one stage for ``lws`` against ``snapshot`` and render the objects it needs."""
    options = options.for_lws(lws)
    revisions = [o for o in snapshot.list("ControllerRevision", **{L.NAME: lws.name})]
    catalog = build_catalog(lws, revisions)
    if lws.spec.group_identity == "Hash":
        from pulumi_lws.render.lws_hash import render_hash
        from pulumi_lws.rollout.hash import plan_hash

        stage = plan_hash(lws, snapshot, catalog, options)
        # ---- failure handling (Hash): rollout/failure_hash.py; see docs/failure-handling.md ----
        from pulumi_lws.rollout.failure_hash import plan_hash_failure, with_hash_failure_state

        hash_failure = plan_hash_failure(lws, snapshot, stage)
        stage = hash_failure.apply_to(stage)
        # ---- end failure handling -------------------------------------------------------------
        manifests = render_hash(lws, stage, catalog, options)
        manifests = with_hash_failure_state(manifests, lws, hash_failure)  # failure handling: counts
    else:
        from pulumi_lws.render.lws import render_ordinal
        from pulumi_lws.rollout.ordinal import plan_ordinal

        stage = plan_ordinal(lws, snapshot, catalog, options)
        # ---- failure handling (restart policies, restart budget, podTerminationPolicy) -------
        # rollout/failure.py; see docs/failure-handling.md. Appends actions to the stage.
        from pulumi_lws.rollout.failure import plan_failure_actions, with_failure_state

        failure = plan_failure_actions(lws, snapshot, stage)
        stage = failure.apply_to(stage)
        # ---- end failure handling ---------------------------------------------------------
        # ---- group features (startupPolicy, exclusive topology, gang scheduling) -------------
        # rollout/placement.py + render/scheduling.py; see docs/group-features.md.
        from pulumi_lws.render.scheduling import with_gang_scheduling
        from pulumi_lws.rollout.placement import place_groups, with_placement

        placement = place_groups(lws, snapshot, stage, catalog)
        stage = with_placement(stage, placement)
        manifests = render_ordinal(lws, stage, catalog, options, group_domains=placement.group_domains,
                                   worker_groups=placement.worker_groups)
        manifests = with_gang_scheduling(manifests, lws, stage, catalog, options.gang_provider, options.volcano_queue)
        # ---- end group features -------------------------------------------------------------
        manifests = with_failure_state(manifests, lws, failure)  # failure handling: counts, halted groups
    return Reconciled(stage=stage, manifests=tuple(manifests), catalog=catalog)
