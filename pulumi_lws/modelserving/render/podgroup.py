"""The Volcano PodGroup ``<ms>-<g>`` of one ServingGroup (``scheduling.volcano.sh/v1beta1``), as
upstream's ``podgroupmanager`` builds it -- but from the group's OWN revision (beats upstream,
which rewrites every group's PodGroup from the live spec, addenda §3.3: a template raising
requests could make old groups' PodGroups unsatisfiable).

Invariants (``roles`` = the group's revision's roles; ``n(role)`` = the live spec's ``replicas``
of that role, or the number of declared replicas for a role the spec no longer has;
``m(role) = min(gangPolicy.minRoleReplicas[role] ?? n, n)``):

* ``minMember = Σ_roles (1 + workerReplicas) × m(role)``;
* ``minResources = Σ_roles m(role) × (requests(entry) + workerReplicas × requests(worker))``
  (container ``requests``, exact quantity sums);
* ``queue`` = the ModelServing annotation ``scheduling.volcano.sh/queue-name`` (omitted if unset);
* ``subGroupPolicy``: one entry per role (name, labelSelector ``{name, role}``, matchLabelKeys
  ``[role-id]``, ``subGroupSize = 1 + workerReplicas``, ``minSubGroups = m(role)``,
  ``networkTopology`` = ``rolePolicy`` when set); ``spec.networkTopology`` = ``groupPolicy``.
  gangPolicy / networkTopology / queue are not part of a revision: they come from the live spec
  and apply to every group in place (a PodGroup update restarts no pod).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_lws.core.k8s.manifests import metadata
from pulumi_lws.modelserving import labels as L
from pulumi_lws.modelserving import names
from pulumi_lws.modelserving.api.modelserving import ModelServing, Role
from pulumi_lws.modelserving.render.resources import sum_requests

VOLCANO_API = "scheduling.volcano.sh/v1beta1"


def min_role_replicas(ms: ModelServing, role: str, replicas: int) -> int:
    gang = ms.spec.template.gang_policy
    wanted = (gang.min_role_replicas or {}).get(role) if gang is not None else None
    return min(replicas if wanted is None else wanted, replicas)


def min_resources(ms: ModelServing, roles: Sequence[Role], replicas: Mapping[str, int]) -> dict[str, str]:
    """``spec.minResources`` of a PodGroup of ``roles`` (module invariants): a function of the
    group's revision and ``replicas`` only, so a renderer computes it once per pair."""
    parts = []
    for role in roles:
        m = min_role_replicas(ms, role.name, replicas.get(role.name, 0))
        parts += [(role.entry_template, m), (role.worker_template, m * role.worker_replicas)]
    return sum_requests(parts)


def podgroup_spec(
    ms: ModelServing, roles: Sequence[Role], replicas: Mapping[str, int], resources: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """``spec`` of a PodGroup of ``roles`` (module invariants): like :func:`min_resources`, a function
    of the group's revision and ``replicas`` only (and of the live spec's gang policy, topology and
    queue), so a renderer builds it once per pair and shares it (:mod:`.shared`). ``resources``:
    :func:`min_resources` of the same arguments when the caller has it (copied)."""
    topology = ms.spec.template.network_topology
    role_policy = topology.role_policy.to_wire() if topology is not None and topology.role_policy else None
    group_policy = topology.group_policy.to_wire() if topology is not None and topology.group_policy else None
    min_member, sub_groups = 0, []
    for role in roles:
        m = min_role_replicas(ms, role.name, replicas.get(role.name, 0))
        min_member += (1 + role.worker_replicas) * m
        entry: dict[str, Any] = {
            "name": role.name,
            "labelSelector": {"matchLabels": {L.NAME: ms.name, L.ROLE: role.name}},
            "matchLabelKeys": [L.ROLE_ID],
            "subGroupSize": 1 + role.worker_replicas,
            "minSubGroups": m,
        }
        if role_policy:
            entry["networkTopology"] = dict(role_policy)
        sub_groups.append(entry)
    spec: dict[str, Any] = {
        "minMember": min_member,
        "minResources": dict(resources) if resources is not None else min_resources(ms, roles, replicas),
    }
    queue = ms.metadata.annotations.get(L.QUEUE_NAME_ANNOTATION)
    if queue:
        spec["queue"] = queue
    if group_policy:
        spec["networkTopology"] = group_policy
    spec["subGroupPolicy"] = sub_groups
    return spec


def podgroup(
    ms: ModelServing,
    namespace: str,
    g: int,
    roles: Sequence[Role],
    replicas: Mapping[str, int],
    resources: Mapping[str, str] | None = None,
    *,
    spec: dict[str, Any] | None = None,
    name: str | None = None,
) -> dict[str, Any]:
    """PodGroup of group ``g``; ``replicas[role]`` = n(role) (module invariants). ``resources``:
    :func:`min_resources` of the same arguments when the caller has it (copied, never shared);
    ``spec``: :func:`podgroup_spec` of them, taken as it is (a renderer shares it between groups);
    ``name``: ``names.podgroup(ms.name, g)`` when the caller has it (also the ``group-name`` label)."""
    spec = podgroup_spec(ms, roles, replicas, resources) if spec is None else spec
    name = names.podgroup(ms.name, g) if name is None else name
    return {
        "apiVersion": VOLCANO_API,
        "kind": "PodGroup",
        "metadata": metadata(name, namespace, {L.NAME: ms.name, L.GROUP_NAME: name}, {L.POD_GROUP_ANNOTATION: name}),
        "spec": spec,
    }
