"""Least-privilege RBAC for the identity that runs ``pulumi up`` of a pulumi-lws program (pure).

One ``pulumi up`` is one reconcile, done by one identity (a developer, CI, or the Pulumi Kubernetes
Operator's workspace ServiceAccount). What it needs depends on the component's ``mode``
(docs/modes.md). **Operator-free** (default) needs exactly:

* **observe** — ``list`` on every kind of the API's :class:`~pulumi_lws.core.contract.ports.Scope` in the
  workload's namespace (one LIST per kind, :mod:`pulumi_lws.cluster.live`), ``list`` on Nodes
  (cluster-scoped) only when the scope reads them (exclusive topology / placement);
* **act** — per planned :class:`~pulumi_lws.core.contract.stage.Action` verb the requests the live
  actuator sends (:data:`VERB_REQUESTS`: ``ungate`` = GET + PATCH of the pod, ``set-condition``
  = GET of the pod + PATCH of ``pods/status``, ...) on the kinds that API acts on
  (the API's ``rbac.actions`` fact, :func:`~pulumi_lws.rbac.policy.api_actions`); ``disown`` (adoption from the upstream controller) on every scope kind
  only with ``adoption=True``;
* **events** — the reconcile records its stage as Events (LIST of the workload's Events, CREATE,
  GET + PATCH to bump a repeated one: :mod:`pulumi_lws.core.features.events`);
* **pulumi-kubernetes** — for every rendered kind: ``get``, ``create``, ``patch`` (server-side
  apply), ``delete``, ``list``/``watch`` (its await's informer on the object); what an awaited kind
  owns (:data:`AWAIT_WATCHES`, ``provider/pkg/await/{statefulset,deployment,service}.go``) — not
  for ``pulumi.com/skipAwait: "true"`` objects (every rendered StatefulSet and Deployment), so only
  the Services' Endpoints — and every object's Events (``NewEventAggregator``,
  ``provider/pkg/await/watchers.go``, observed whatever the condition).

**Controller** mode (:mod:`pulumi_lws.components.controller`) registers the upstream custom
resource instead and lets the upstream controller act, so it needs exactly: the same **observe**
LISTs (the component still plans against the controller's native objects, for the preview), a
``get`` of the API's CustomResourceDefinition (cluster-scoped, ``resourceNames`` = that one CRD:
the "controller not installed" check, ``LiveCluster.serves_crd``), and **pulumi-kubernetes**'
management of the custom resource kind (group and plural from ``Workload.upstream``; its
``pulumi.com/waitFor: condition=...`` await watches the CR itself — ``condition.NewCustom`` ->
``NewObjectObserver`` — and its Events). No action, no Event is written, nothing is expanded.

Everything is namespaced (a Role + RoleBinding per workload namespace) except what must be
cluster-scoped (a ClusterRole): Nodes, read for exclusive placement, and, in controller mode, the
one CRD read by name. No CustomResourceDefinition is ever written (the DisaggregatedSetRoleScaler
CRD and the controllers' CRDs are cluster prerequisites an admin installs).

Layout: :mod:`pulumi_lws.rbac.policy` (kinds, grants, :func:`policy`), :mod:`pulumi_lws.rbac.documents`
(manifests and YAML from policies). Invariants: :func:`policy` is a pure function of its arguments; every :class:`Grant` says who
needs it and why; :meth:`Policy.allows` is the RBAC authorizer's rule match (group, resource
incl. subresource, verb, namespaced-or-cluster, resourceNames).
"""

from __future__ import annotations

from pulumi_lws.rbac.documents import (
    manifests,
    merge,
    object_name,
    parse_service_account,
    policy_for_manifest,
    rbac_yaml,
    skips_await,
)
from pulumi_lws.rbac.policy import (
    AWAIT_WATCHES,
    CONTROLLER,
    CRD,
    KINDS,
    MANAGED_VERBS,
    MODES,
    OPERATOR_FREE,
    PULUMI_KUBERNETES,
    RECONCILE,
    VERB_REQUESTS,
    Grant,
    Kind,
    Policy,
    adoption_kinds,
    api_actions,
    api_renders,
    check_mode,
    controller_grants,
    fixed_gang_provider,
    key_of,
    kind_of_manifest,
    kinds,
    managed_grants,
    observe_grants,
    policy,
    reconcile_grants,
    resolve,
    upstream_owns_unrendered,
)

__all__ = [
    "AWAIT_WATCHES",
    "CONTROLLER",
    "CRD",
    "KINDS",
    "MANAGED_VERBS",
    "MODES",
    "OPERATOR_FREE",
    "PULUMI_KUBERNETES",
    "RECONCILE",
    "VERB_REQUESTS",
    "Grant",
    "Kind",
    "Policy",
    "adoption_kinds",
    "api_actions",
    "api_renders",
    "check_mode",
    "controller_grants",
    "fixed_gang_provider",
    "key_of",
    "kind_of_manifest",
    "kinds",
    "managed_grants",
    "manifests",
    "merge",
    "object_name",
    "observe_grants",
    "parse_service_account",
    "policy",
    "policy_for_manifest",
    "rbac_yaml",
    "reconcile_grants",
    "resolve",
    "skips_await",
    "upstream_owns_unrendered",
]
