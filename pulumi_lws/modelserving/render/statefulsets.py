"""The objects of one role replica ``(group g, role, r)``: entry StatefulSet, worker StatefulSet,
headless Service (docs/modelserving.md, "Expansion"). Pure.

Invariants:

* entry StatefulSet ``<ms>-<g>-<role>-<r>``: 1 replica from ``entryTemplate`` (pod
  ``<ms>-<g>-<role>-<r>-0``, upstream's entry pod name), ``serviceName`` = the headless Service
  name ``<ms>-<g>-<role>-<r>-0``; selector ``{name, group-name, role, role-id, entry: "true"}``;
* worker StatefulSet ``<ms>-<g>-<role>-<r>-w`` only when ``workerReplicas > 0``: ``ordinals.start:
  1`` (pod index = ``WORKER_INDEX`` 1..W), ``Parallel``, ``RollingUpdate`` with ``maxUnavailable:
  100%`` (a template change replaces the replica's workers as one unit); selector ``{name,
  group-name, role, role-id}`` and ``entry`` DoesNotExist, so entry and worker selectors never overlap;
* the Service exists only when ``workerTemplate`` is set (as upstream): ``clusterIP: None``,
  ``publishNotReadyAddresses``, selector ``{group-name, role, role-id, entry: "true"}``;
* selectors hold identity labels only (never ``revision`` / ``role-template-hash``: selectors are
  immutable); StatefulSet metadata carries the GROUP's revision (what observe reads) and the
  replica's ``role-template-hash``; pod templates carry the replica's template revision;
* StatefulSets carry ``pulumi.com/skipAwait: "true"``; no ownerReferences; all namespaced.
"""

from __future__ import annotations

from typing import Any

from pulumi_lws.core.k8s.manifests import WORKLOAD_ANNOTATIONS, headless_service, owned_labels
from pulumi_lws.modelserving import labels as L
from pulumi_lws.modelserving import names
from pulumi_lws.modelserving.api.modelserving import Role
from pulumi_lws.modelserving.render.pods import (
    entry_address,
    pod_template,
    role_env,
)
from pulumi_lws.modelserving.render.shared import SharedParts
from pulumi_lws.modelserving.revision import role_template_hash

APPS = "apps/v1"


def _sts(name: str, namespace: str, labels: dict[str, str], spec: dict[str, Any], parts: SharedParts) -> dict[str, Any]:
    """``labels``: already owned (``owned_labels``), shared by a replica's two StatefulSets."""
    annotations = parts.part("workload-annotations", lambda: dict(WORKLOAD_ANNOTATIONS))
    return {
        "apiVersion": APPS,
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": namespace, "labels": labels, "annotations": annotations},
        "spec": spec,
    }


def role_replica_objects(
    ms: str,
    namespace: str,
    scheduler: str,
    g: int,
    group_revision: str,
    role: Role,
    r: int,
    template_revision: str,
    template_hash: str | None = None,
    parts: SharedParts | None = None,
) -> list[dict[str, Any]]:
    """[Service?, entry StatefulSet, worker StatefulSet?] of role replica ``<role>-<r>`` of group ``g``.

    ``role`` is the role as stored in ``template_revision`` (its templates and workerReplicas);
    ``template_hash``: ``role_template_hash(role)`` when the caller has it (one per revision and role);
    ``parts``: the render's shared parts (:mod:`.shared`), so the objects of every replica share
    their constant parts (update strategies, selectors' expressions, env entries, labels and
    annotations equal in both StatefulSets of the replica, the name strings)."""
    parts = SharedParts() if parts is None else parts
    name = role.name
    group = parts.group_name(ms, g)
    rid = parts.part(("role-id", name, r), lambda: names.role_id(name, r))
    ident = {L.NAME: ms, L.GROUP_NAME: group, L.ROLE: name, L.ROLE_ID: rid}  # pods.role_labels
    template_hash = template_hash or role_template_hash(role)
    sts_labels = owned_labels({**ident, L.REVISION: group_revision, L.ROLE_TEMPLATE_HASH: template_hash})
    # the pod labels (pods.pod_labels) from the identity labels built once: same keys, same order
    worker_pod_labels = {**ident, L.REVISION: template_revision, L.ROLE_TEMPLATE_HASH: template_hash}
    entry_pod_labels = {**worker_pod_labels, L.ENTRY: L.ENTRY_VALUE}
    svc = names.service(ms, g, name, r)
    address = entry_address(ms, g, name, r, namespace)
    # pods.pod_annotations, from the shared name strings (names.podgroup(ms, g) is the group name)
    annotations = (
        {L.POD_GROUP_ANNOTATION: group, L.TASK_SPEC_ANNOTATION: rid} if scheduler == L.VOLCANO_SCHEDULER else {}
    )
    size = role.worker_replicas + 1
    out: list[dict[str, Any]] = []
    if role.worker_template is not None:
        out.append(
            headless_service(
                svc,
                namespace,
                ident,
                {L.GROUP_NAME: group, L.ROLE: name, L.ROLE_ID: rid, L.ENTRY: L.ENTRY_VALUE},
            )
        )
    entry = pod_template(
        role.entry_template,
        labels=entry_pod_labels,
        annotations=annotations,
        env=role_env(size, address, True, parts),
        scheduler=scheduler,
        entry=True,
    )
    entry_name = names.entry_statefulset(ms, g, name, r)
    out.append(
        _sts(
            entry_name,
            namespace,
            sts_labels,
            {
                "replicas": 1,
                "serviceName": svc,
                "podManagementPolicy": "Parallel",
                "selector": {"matchLabels": {**ident, L.ENTRY: L.ENTRY_VALUE}},
                "template": entry,
                "updateStrategy": parts.part("entry-update", lambda: {"type": "RollingUpdate"}),
            },
            parts,
        )
    )
    if role.worker_replicas > 0:
        worker = pod_template(
            role.worker_template,
            labels=worker_pod_labels,
            annotations=annotations,
            env=role_env(size, address, False, parts),
            scheduler=scheduler,
            entry=False,
        )
        out.append(
            _sts(
                names.worker_statefulset(ms, g, name, r),
                namespace,
                sts_labels,
                {
                    "replicas": role.worker_replicas,
                    "serviceName": svc,
                    "podManagementPolicy": "Parallel",
                    "ordinals": parts.part("worker-ordinals", lambda: {"start": 1}),
                    "selector": {
                        "matchLabels": ident,  # held by this selector only (the Service copies it)
                        "matchExpressions": parts.part(
                            "worker-selector", lambda: [{"key": L.ENTRY, "operator": "DoesNotExist"}]
                        ),
                    },
                    "template": worker,
                    "updateStrategy": parts.part(
                        "worker-update", lambda: {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "100%"}}
                    ),
                },
                parts,
            )
        )
    return out
