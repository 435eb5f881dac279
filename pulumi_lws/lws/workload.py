"""LeaderWorkerSet as the shells see it: the :class:`~pulumi_lws.core.contract.workload.Workload` contract.

Registered on import; the shells reach it through :func:`pulumi_lws.core.contract.workload.workload_for`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pulumi_lws.core.contract.facts import (
    ArgumentSchema,
    GangChoice,
    KindRef,
    Nested,
    Option,
    RbacFacts,
    Words,
    int_or_percent,
    one_of,
    queue_name,
)
from pulumi_lws.core.contract.ports import Scope
from pulumi_lws.core.contract.simulation import GroupLabels, Placement
from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.core.contract.stage import Stage
from pulumi_lws.core.contract.stagetable import Lanes
from pulumi_lws.core.contract.trace import GroupsView, Trace
from pulumi_lws.core.contract.workload import Budgets, Reconciled, UpstreamController, Workload, register
from pulumi_lws.core.features.adoption import held_for_pod_owners, with_adoption, with_field_ownership
from pulumi_lws.core.features.control import control_choices, controlled
from pulumi_lws.core.features.terminating import without_terminating
from pulumi_lws.lws import labels as L
from pulumi_lws.lws import reconcile as _reconcile_module
from pulumi_lws.lws.api.leaderworkerset import API_VERSION, KIND, LeaderWorkerSet
from pulumi_lws.lws.api.per_pod_rules import PER_POD_VALUES
from pulumi_lws.lws.observe import lws_scope
from pulumi_lws.lws.reconcile import ReconcileOptions
from pulumi_lws.lws.revision import build_catalog, revision_key
from pulumi_lws.lws.rollout.ordinal.cases import CASE_WORDS
from pulumi_lws.lws.rollout.placement import needs_nodes
from pulumi_lws.lws.status.summary import lws_status
from pulumi_lws.lws.trace_view import read_groups

#: a LeaderWorkerSet pod's workload and group: the name and group-index labels; a pod without the
#: group label is ``<lws>-<group>[-<worker>]``
GROUP_LABELS = GroupLabels(owner=L.NAME, group=L.GROUP_INDEX, ordinal_in_name=True)


GANG = GangChoice(("kubernetes", "volcano"))

#: the kinds a LeaderWorkerSet reconcile lists (:data:`pulumi_lws.lws.observe.LWS_KINDS`, Nodes
#: for exclusive placement) and renders, with their API versions
OBSERVES: tuple[KindRef, ...] = (
    KindRef("StatefulSet", "apps/v1"),
    KindRef("Deployment", "apps/v1"),
    KindRef("Pod", "v1"),
    KindRef("ControllerRevision", "apps/v1"),
    KindRef("Service", "v1"),
    *(GANG.podgroup(p) for p in GANG.providers),
    KindRef("Workload", "scheduling.k8s.io/v1beta1", optional=True),
    KindRef("Node", "v1", namespaced=False),
)
RENDERS: tuple[KindRef, ...] = tuple(k for k in OBSERVES if k.kind not in ("Pod", "Node"))
#: per-pod values admission-policy only: cluster-scoped, rendered, never read back
CONFIGURES: tuple[KindRef, ...] = (
    KindRef(
        "MutatingAdmissionPolicy",
        "admissionregistration.k8s.io/v1beta1",
        "mutatingadmissionpolicies",
        False,
        optional=True,
    ),
    KindRef(
        "MutatingAdmissionPolicyBinding",
        "admissionregistration.k8s.io/v1beta1",
        "mutatingadmissionpolicybindings",
        False,
        optional=True,
    ),
)
#: the (verb, kind) actions the LeaderWorkerSet planners emit (DisaggregatedSet's children too)
ACTIONS: frozenset[tuple[str, str]] = frozenset(
    {
        ("label", "Pod"),
        ("annotate", "Pod"),
        ("ungate", "Pod"),
        ("set-condition", "Pod"),
        ("finalize", "Pod"),
        ("delete", "Pod"),
        ("annotate", "StatefulSet"),
        ("annotate", "Deployment"),
    }
)
#: the children's gang choices, as the LeaderWorkerSet component takes them (DisaggregatedSet reuses them)
GANG_OPTIONS: tuple[Option, ...] = (
    Option("gang_provider", one_of(*GANG.providers)),
    Option("volcano_queue", queue_name),
)

#: the component arguments: top-level field name (snake_case) -> path inside the manifest; the
#: ``rollout`` object key by key; ``update_order``, ``gang_provider``, ``volcano_queue``
ARGUMENTS = ArgumentSchema(
    fields={
        "replicas": ("spec", "replicas"),
        "size": ("spec", "leaderWorkerTemplate", "size"),
        "leader_template": ("spec", "leaderWorkerTemplate", "leaderTemplate"),
        "worker_template": ("spec", "leaderWorkerTemplate", "workerTemplate"),
        "restart_policy": ("spec", "leaderWorkerTemplate", "restartPolicy"),
        "partition": ("spec", "rolloutStrategy", "rollingUpdateConfiguration", "partition"),
        "startup_policy": ("spec", "startupPolicy"),
        "subdomain_policy": ("spec", "networkConfig", "subdomainPolicy"),
        "group_identity": ("spec", "groupIdentity"),
        "group_replacement_policy": ("spec", "groupReplacementPolicy"),
        "namespace": ("metadata", "namespace"),
        "name": ("metadata", "name"),
        "per_pod_values": ("metadata", "annotations", PER_POD_VALUES),
    },
    # a manifest's values are taken as written (upstream rejects maxSurge: "5"); only the typed
    # ``rollout`` argument, which the provider delivers as strings, is coerced
    nested={
        "rollout": Nested(
            ("spec", "rolloutStrategy", "rollingUpdateConfiguration"),
            {"max_unavailable": "maxUnavailable", "max_surge": "maxSurge", "partition": "partition"},
            coerce=int_or_percent,
            expected="expected an object with maxUnavailable/maxSurge/partition",
        )
    },
    options=(Option("update_order", one_of("ScaleFirst", "RolloutFirst")), *GANG_OPTIONS),
    model=LeaderWorkerSet,
)


class LeaderWorkerSetWorkload(Workload):
    """``leaderworkerset.x-k8s.io/v1`` LeaderWorkerSet (Ordinal and Hash identity)."""

    kind = KIND
    api_version = API_VERSION
    #: the simulated kubelet finds a pod's workload and group by these (leader and worker pods)
    group_labels = GROUP_LABELS
    words = Words(
        "LeaderWorkerSet", "leader + worker pods per group, group-level rolling updates (kubernetes-sigs/lws)"
    )
    arguments = ARGUMENTS
    gang = GANG
    rbac = RbacFacts(actions=ACTIONS, renders=RENDERS, configures=CONFIGURES)
    observes = OBSERVES
    case_words = CASE_WORDS
    #: the leader StatefulSet's / Deployment's restart counts, written before the actions they account for
    reconcile_written_annotations = (L.GROUP_RESTART_COUNTS,)
    upstream = UpstreamController(
        group="leaderworkerset.x-k8s.io",
        plural="leaderworkersets",
        controller="the LeaderWorkerSet controller (kubernetes-sigs/lws; its release manifests or Helm chart install "
        "the CRD leaderworkersets.leaderworkerset.x-k8s.io)",
        model="Ordinal: exact (upstream's rollingUpdateParameters, checked against its conformance vectors); "
        "Hash: the Deployment + group-replacement-gate model is exact for admission, approximate for the "
        "Deployment controller's own pacing; updateOrder RolloutFirst is pulumi-lws only",
        event_reasons={"ungate": "GroupReplacementAdmitted", "delete": "RecreateGroup"},
        owner_kinds=(KIND,),
    )

    def parse(
        self, manifest: Mapping[str, Any], *, namespace: str | None = None, validate: bool = True
    ) -> LeaderWorkerSet:
        return LeaderWorkerSet.from_manifest(dict(manifest), namespace=namespace, validate=validate)

    def validate_update(self, spec: LeaderWorkerSet, old: LeaderWorkerSet) -> None:
        spec.validate(old)

    def identity(self, spec: LeaderWorkerSet) -> tuple[str, str]:
        return spec.namespace, spec.name

    def options(self, **choices: Any) -> ReconcileOptions:
        known = ("update_order", "gang_provider", "volcano_queue")
        return ReconcileOptions(
            **{k: v for k, v in choices.items() if k in known and v}, control=control_choices(choices)
        )

    def scope(self, spec: LeaderWorkerSet, *, nodes: bool | None = None) -> Scope:
        return lws_scope(spec.namespace, spec.name, nodes=needs_nodes(spec) if nodes is None else nodes)

    def reconcile(
        self, spec: LeaderWorkerSet, snapshot: Snapshot, options: ReconcileOptions | None = None
    ) -> Reconciled:
        # through the module, so tests can monkeypatch ``pulumi_lws.lws.reconcile.reconcile``
        options = options or ReconcileOptions()
        result = _reconcile_module.reconcile(spec, snapshot, options)
        result = without_terminating(result, snapshot)  # never declared again while terminating
        result = controlled(
            KIND,
            spec,
            spec.name,
            result,
            snapshot,
            options.control,
            total=spec.replicas,
            held_view=lambda stage: self.held_stage(spec, snapshot, stage),
        )
        # a fleet upstream created: hold a moving stage while leader-Pod owners remain (Ordinal),
        # drop its ownerReferences, force the apply over its field manager (core.features.adoption)
        result = held_for_pod_owners(result, snapshot, lambda stage: self.held_stage(spec, snapshot, stage))
        result = with_adoption(result, snapshot, self.upstream)
        adopted: Reconciled = with_field_ownership(result, snapshot, (self.upstream,))
        return adopted

    def required_apis(
        self, spec: LeaderWorkerSet, gang_provider: str | None = None, *, field: str = "spec"
    ) -> tuple[tuple[str, str, str], ...]:
        """The per-pod values policy API (``admission-policy``) and the gang objects' APIs
        (``spec.scheduling``, by ``gang_provider``); ``field``: where this spec sits in the
        user's manifest (a DisaggregatedSet role's ``spec.roles[i].spec``)."""
        from pulumi_lws.lws.render.admission import required_api
        from pulumi_lws.lws.render.scheduling import required_gang_apis

        needed = required_api(spec)
        gang = required_gang_apis(spec, gang_provider or ReconcileOptions().gang_provider, f"{field}.scheduling")
        return ((needed,) if needed else ()) + gang

    def mode_notes(self, spec: LeaderWorkerSet) -> dict[str, str]:
        """``perPodValues`` when the manifest chooses (``pulumi-lws.io/per-pod-values`` set)."""
        from pulumi_lws.lws.render.admission import mode_line

        return {"perPodValues": mode_line(spec)} if PER_POD_VALUES in spec.metadata.annotations else {}

    def budgets(self, spec: LeaderWorkerSet) -> dict[str, Budgets]:
        return {
            "": Budgets(
                spec.replicas,
                spec.max_surge(),
                spec.max_unavailable(),
                min(spec.user_partition(), spec.replicas),
                path="spec.rolloutStrategy.rollingUpdateConfiguration",
            )
        }

    def status(self, spec: LeaderWorkerSet, snapshot: Snapshot, stage: Stage) -> dict[str, Any]:
        return lws_status(spec, snapshot, stage)  # with the progress-deadline condition

    def covered(self, spec: Any, snapshot: Snapshot | None = None) -> dict[Any, Any]:
        """Rollback (:class:`pulumi_lws.core.features.rollback.Revertible`): the revision-covered values by path."""
        from pulumi_lws.lws import rollback

        return rollback.covered(spec)

    def recorded_revisions(self, spec: Any, snapshot: Snapshot) -> list[Any]:
        """Rollback: the revisions the cluster records (:mod:`pulumi_lws.lws.rollback`)."""
        from pulumi_lws.lws import rollback

        return rollback.recorded_revisions(spec, snapshot)

    def target_revision(self, spec: LeaderWorkerSet) -> str:
        return revision_key(spec)

    def observed_target_revision(self, spec: LeaderWorkerSet, snapshot: Snapshot) -> str:
        """The catalog's target: an adopted fleet keeps the key of upstream's matching ControllerRevision."""
        return build_catalog(spec, snapshot.list("ControllerRevision", **{L.NAME: spec.name})).target.key

    def placement(self, spec: LeaderWorkerSet) -> Placement:
        """How the groups take nodes (the simulator's assumed pool, ``sim.expansion``): one domain
        of the exclusive-topology key per group; with the subgroup-exclusive annotation one node per
        subgroup, each labelled with its own value of that key; a group is its leader + size - 1 workers."""
        from pulumi_lws.lws.rollout.placement import exclusive_topology

        lwt = spec.spec.leader_worker_template
        sub_key = spec.metadata.annotations.get(L.SUBGROUP_EXCLUSIVE_TOPOLOGY) or None
        policy = lwt.sub_group_policy
        per_domain = math.ceil(spec.size / policy.sub_group_size) if sub_key and policy and policy.sub_group_size else 1
        return Placement(
            exclusive_topology(spec),
            spec.replicas,
            ((lwt.leader_pod_template(), 1), (lwt.worker_template, spec.size - 1)),
            nodes_per_domain=per_domain,
            subgroup_key=sub_key,
        )

    def first_render_header(self, spec: LeaderWorkerSet, result: Reconciled) -> str:
        """``pulumi-lws render``'s line above the first stage's objects (:mod:`pulumi_lws.lws.render.headers`)."""
        from pulumi_lws.lws.render.headers import lws_first_header

        return lws_first_header(spec, result)

    def steady_render_header(self, spec: LeaderWorkerSet, expansion: Any) -> str:
        """``pulumi-lws render --stage steady``'s line above the converged fleet's objects."""
        from pulumi_lws.lws.render.headers import lws_steady_header

        return lws_steady_header(spec, expansion)

    def predict_trace(
        self, old: LeaderWorkerSet, new: LeaderWorkerSet, choices: Mapping[str, Any] | None = None
    ) -> Trace:
        """``pulumi-lws plan``'s rows for OLD -> NEW from the exact models (Ordinal readiness order,
        Hash gate model; ``choices["update_order"]``, else NEW's update-order annotation, else ScaleFirst): :mod:`pulumi_lws.lws.rollout.plan_trace`."""
        from pulumi_lws.lws.rollout.plan_trace import build_trace, check_pair

        check_pair(old, new)
        # the shell's choice wins over NEW's own update-order annotation (default ScaleFirst)
        order = (choices or {}).get("update_order") or ReconcileOptions().for_lws(new).update_order
        return build_trace(old, new, order)

    def stage_lanes(self, spec: LeaderWorkerSet) -> Lanes:
        """One ``R-<ordinal>`` (Ordinal) or ``G-<key>`` (Hash) column per group."""
        return Lanes.GROUPS

    def trace_view(self, spec: LeaderWorkerSet, snapshot: Snapshot) -> GroupsView:
        # the catalog's target, not revision_key(spec): an adopted fleet keeps upstream's key
        target = build_catalog(spec, snapshot.list("ControllerRevision", **{L.NAME: spec.name})).target.key
        return read_groups(snapshot, spec.name, spec.replicas, spec.size, target, spec.spec.group_identity == "Hash")


WORKLOAD = register(LeaderWorkerSetWorkload())
