"""Per-pod values at pod creation through Kubernetes' own MutatingAdmissionPolicy (no webhook).

Opt-in per LeaderWorkerSet with the annotation ``pulumi-lws.io/per-pod-values: admission-policy``
(component argument ``per_pod_values``); the default ``template`` renders what every pod of a
StatefulSet shares and adds per-pod labels at the next reconcile (docs/rendering.md). With the
admission policy, the expansion adds one ``MutatingAdmissionPolicy`` and its
``MutatingAdmissionPolicyBinding`` (both cluster-scoped, named ``pulumi-lws.<namespace>.<lws>``),
bound to pods CREATEd in the LeaderWorkerSet's namespace with its ``name`` label, and the API
server sets at creation what upstream's pod webhook sets (reference §7.1, §7.2, §7.5):

* leaders: ``group-index`` (the pod's ``apps.kubernetes.io/pod-index``), ``group-key`` (a CEL map
  ordinal -> ``sha1("<ns>/<lws>-<i>")``, precomputed here: CEL has no sha1), ``role: leader``;
  with a subGroupPolicy that is not LeaderExcluded ``subgroup-index: "0"`` and ``subgroup-key``
  (map ordinal -> ``sha1("<lws>-<i>/0")``); exclusive topology: upstream's group-key terms;
* workers: ``worker-index`` (the pod index), ``role: worker``; with a subGroupPolicy
  ``subgroup-index`` (upstream ``getSubGroupIndex`` in CEL arithmetic) and ``subgroup-key`` (read
  from the worker template's table ``pulumi-lws.io/subgroup-key.<s>``, precomputed per group);
  TPU workers: the per-pod annotations their Downward-API env vars read, ``TPU_WORKER_ID`` per
  container and, with subgroups, the subgroup's ``TPU_WORKER_HOSTNAMES`` /
  ``TPU_PROCESS_ADDRESSES`` (tables ``pulumi-lws.io/subgroup-tpu-*.<s>`` on the worker template);
* subgroup exclusive topology: upstream's subgroup-key terms, appended by JSONPatch.

Invariants:
* Pure: a function of the LeaderWorkerSet, the stage's replicas and the rendered revisions.
* Every expression uses only the CEL subset :mod:`pulumi_lws.sim.cluster.cel` evaluates (its
  docstring lists it); tests evaluate every rendered policy with it.
* The policy never needs a value the pod does not carry at admission: the StatefulSet controller
  creates each pod with its name, ``apps.kubernetes.io/pod-index`` label (GA in Kubernetes 1.32,
  the first release serving the policy API) and the template's labels and annotations.
* ``failurePolicy: Fail``: a pod the policy cannot evaluate is refused (the StatefulSet controller
  retries) rather than started without its values; ``reinvocationPolicy: Never`` (the JSONPatch
  appends are not idempotent).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from pulumi_lws.core.k8s.manifests import owned_labels
from pulumi_lws.lws import labels as L
from pulumi_lws.lws import names
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.api.per_pod_rules import (  # noqa: F401  (re-exported)
    ADMISSION_POLICY,
    DEFAULT_POLICY_VERSION,
    MODES,
    PER_POD_VALUES,
    POLICY_API_VERSION,
    POLICY_VERSIONS,
    TEMPLATE,
)
from pulumi_lws.lws.render.admission_pods import (
    POD_TPU_ADDRESSES,
    POD_TPU_HOSTNAMES,
    POD_TPU_WORKER_ID,
    SUBGROUP_KEY_TABLE,
    SUBGROUP_TPU_ADDRESSES_TABLE,
    SUBGROUP_TPU_HOSTNAMES_TABLE,
    TPU_CONTAINERS,
)

API_GROUP = "admissionregistration.k8s.io"
POLICY_KIND = "MutatingAdmissionPolicy"
BINDING_KIND = "MutatingAdmissionPolicyBinding"
#: version -> the first Kubernetes release serving it, and what that release needs (KEP-3962)
SERVED_SINCE = {
    "v1alpha1": (
        "1.32",
        "the MutatingAdmissionPolicy feature gate and --runtime-config=admissionregistration.k8s.io/v1alpha1=true",
    ),
    "v1beta1": (
        "1.34",
        "the MutatingAdmissionPolicy feature gate and --runtime-config=admissionregistration.k8s.io/v1beta1=true",
    ),
    "v1": ("1.36", "nothing (GA, on by default)"),
}

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
LEADER_EXCLUDED = "LeaderExcluded"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"


def per_pod_mode(lws: LeaderWorkerSet) -> str:
    """``template`` (default) or ``admission-policy`` (validated by the API rules)."""
    return str(lws.metadata.annotations.get(PER_POD_VALUES) or TEMPLATE)


def uses_admission_policy(lws: LeaderWorkerSet) -> bool:
    return per_pod_mode(lws) == ADMISSION_POLICY


def policy_version(lws: LeaderWorkerSet) -> str:
    return str(lws.metadata.annotations.get(POLICY_API_VERSION) or DEFAULT_POLICY_VERSION)


def policy_api_version(lws: LeaderWorkerSet) -> str:
    return f"{API_GROUP}/{policy_version(lws)}"


def policy_name(lws: LeaderWorkerSet) -> str:
    """Cluster-scoped, so the namespace is part of the name: ``pulumi-lws.<ns>.<lws>``."""
    return f"pulumi-lws.{lws.namespace}.{lws.name}"


def mode_line(lws: LeaderWorkerSet) -> str:
    """One sentence for ``plan``/``render``: which per-pod-values mode is in force."""
    if uses_admission_policy(lws):
        since, needs = SERVED_SINCE[policy_version(lws)]
        return (
            f"per-pod values: admission-policy ({POLICY_KIND} {policy_api_version(lws)} "
            f"{policy_name(lws)}; Kubernetes >= {since} with {needs})"
        )
    return "per-pod values: template (labels per pod at the next reconcile; docs/rendering.md)"


def required_api(lws: LeaderWorkerSet) -> tuple[str, str, str] | None:
    """``(apiVersion, kind, why)`` of the policy API this LeaderWorkerSet needs, or None (template)."""
    if not uses_admission_policy(lws):
        return None
    version = policy_version(lws)
    since, needs = SERVED_SINCE[version]
    why = (
        f"{PER_POD_VALUES}: {ADMISSION_POLICY} needs {POLICY_KIND} {policy_api_version(lws)}, served from "
        f"Kubernetes {since} with {needs}"
        + ("" if version == "v1" else f" (or {API_GROUP}/v1 from Kubernetes 1.36: {POLICY_API_VERSION}: v1)")
        + f'; or use per_pod_values "{TEMPLATE}" (the default: per-pod labels at the next reconcile)'
    )
    return policy_api_version(lws), POLICY_KIND, why


# ---- the policy's CEL --------------------------------------------------------------------------


def _s(value: str) -> str:
    """A CEL string literal (JSON escapes are CEL escapes for these characters)."""
    return json.dumps(value)


def _label(key: str) -> str:
    return f"object.metadata.labels[{_s(key)}]"


def _ann(key: str) -> str:
    return f"object.metadata.annotations[{_s(key)}]"


def _has_ann(key: str) -> str:
    return f"{_s(key)} in object.metadata.annotations"


def _map(entries: Mapping[str, str]) -> str:
    return "{" + ", ".join(f"{_s(k)}: {v}" for k, v in entries.items()) + "}"


def _obj(type_name: str, fields: Mapping[str, str]) -> str:
    return f"{type_name}{{" + ", ".join(f"{k}: {v}" for k, v in fields.items()) + "}"


def _metadata_patch(labels: Mapping[str, str] | None = None, annotations: Mapping[str, str] | None = None) -> str:
    fields = {}
    if labels:
        fields["labels"] = _map(labels)
    if annotations:
        fields["annotations"] = _map(annotations)
    return _obj("Object", {"metadata": _obj("Object.metadata", fields)})


def _term(kind: str, key: str, value: str, topology: str, *, anti: bool) -> str:
    """A PodAffinityTerm of upstream ``SetExclusiveAffinities`` as a typed CEL object."""
    t = f"Object.spec.affinity.{kind}.{REQUIRED}"
    if anti:
        exprs = [
            _obj(f"{t}.labelSelector.matchExpressions", {"key": _s(key), "operator": _s("Exists")}),
            _obj(
                f"{t}.labelSelector.matchExpressions", {"key": _s(key), "operator": _s("NotIn"), "values": f"[{value}]"}
            ),
        ]
    else:
        exprs = [
            _obj(f"{t}.labelSelector.matchExpressions", {"key": _s(key), "operator": _s("In"), "values": f"[{value}]"})
        ]
    selector = _obj(f"{t}.labelSelector", {"matchExpressions": "[" + ", ".join(exprs) + "]"})
    return _obj(t, {"labelSelector": selector, "topologyKey": _s(topology)})


def _patch(path: str, value: str) -> str:
    return _obj("JSONPatch", {"op": _s("add"), "path": _s(path), "value": value})


def exclusive_affinity_patch(key: str, value: str, topology: str) -> str:
    """JSONPatch appending upstream's exclusive terms (podAffinity ``key In [value]``,
    podAntiAffinity ``key Exists, NotIn [value]``) to whatever affinity the pod has: each missing
    parent is added with the term inside it, an existing list gets the term at ``/-``."""
    terms = {
        "podAffinity": _term("podAffinity", key, value, topology, anti=False),
        "podAntiAffinity": _term("podAntiAffinity", key, value, topology, anti=True),
    }
    whole = _obj(
        "Object.spec.affinity",
        {kind: _obj(f"Object.spec.affinity.{kind}", {REQUIRED: f"[{term}]"}) for kind, term in terms.items()},
    )

    def section(kind: str, term: str) -> str:
        base, here = f"/spec/affinity/{kind}", f"object.spec.affinity.{kind}"
        return (  # CEL: the middle of ?: is a conditional-or, so a nested ?: is parenthesised
            f"!has({here}) ? {_patch(base, _obj(f'Object.spec.affinity.{kind}', {REQUIRED: f'[{term}]'}))} : "
            f"(!has({here}.{REQUIRED}) ? {_patch(f'{base}/{REQUIRED}', f'[{term}]')} : "
            f"{_patch(f'{base}/{REQUIRED}/-', term)})"
        )

    sections = ", ".join(section(kind, term) for kind, term in terms.items())
    return f"!has(object.spec.affinity) ? [{_patch('/spec/affinity', whole)}] : [{sections}]"


def _variables(lws: LeaderWorkerSet, ordinals: Iterable[int], subgrouped: bool) -> list[dict[str, str]]:
    ns, name = lws.namespace, lws.name
    ordinals = list(ordinals)
    out = {
        "isLeader": f'{_s(L.WORKER_INDEX)} in object.metadata.labels && {_label(L.WORKER_INDEX)} == "0"',
        "index": f"int({_label(L.POD_INDEX)})",
        "groupKeys": _map({str(i): _s(names.group_key(ns, name, i)) for i in ordinals}),
        "leaderTPUs": f'{_has_ann(L.LEADER_REQUESTS_TPUS)} && {_ann(L.LEADER_REQUESTS_TPUS)} == "true"',
        "tpuContainers": f"{_has_ann(TPU_CONTAINERS)} ? int({_ann(TPU_CONTAINERS)}) : 0",
        "subgroupSize": f"{_has_ann(L.SUBGROUP_SIZE)} ? int({_ann(L.SUBGROUP_SIZE)}) : 0",
    }
    if subgrouped:
        out |= {
            "size": f"int({_ann(L.SIZE)})",
            "leaderExcluded": f"{_has_ann(L.SUBGROUP_POLICY_TYPE)} && {_ann(L.SUBGROUP_POLICY_TYPE)} == {_s(LEADER_EXCLUDED)}",
            "subgrouped": "variables.subgroupSize > 0 && !(variables.isLeader && variables.leaderExcluded)",
            # upstream getSubGroupIndex; the leader always lives in subgroup 0
            "subgroup": "variables.isLeader ? 0 : ((variables.size - 1) % variables.subgroupSize == 0 && "
            "variables.size % variables.subgroupSize != 0 ? (variables.index - 1) / variables.subgroupSize : "
            "variables.index / variables.subgroupSize)",
            "leaderSubgroupKeys": _map(
                {str(i): _s(names.subgroup_key(names.leader_pod(name, i), 0)) for i in ordinals}
            ),
            # string(...): a real API server types object.metadata values dyn, and a dyn in a
            # label or annotation map literal fails compilation ("expected type 'string' but found 'dyn'")
            "subgroupKey": "string(variables.isLeader ? variables.leaderSubgroupKeys[string(variables.index)] : "
            f"object.metadata.annotations[{_s(SUBGROUP_KEY_TABLE)} + string(variables.subgroup)])",
        }
    # upstream TPU_WORKER_ID of a worker (one container); container i gets id * n + i
    out["tpuWorkerID"] = (
        "variables.subgroupSize > 0 ? (variables.leaderTPUs ? variables.index % variables.subgroupSize : "
        "(variables.index - 1) % variables.subgroupSize) : (variables.leaderTPUs ? variables.index : variables.index - 1)"
    )
    return [{"name": k, "expression": v} for k, v in out.items()]


def _mutations(lws: LeaderWorkerSet, subgrouped: bool, tpu_containers: int) -> list[dict[str, Any]]:
    def apply(expression: str) -> dict[str, Any]:
        return {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": expression}}

    def patch(expression: str) -> dict[str, Any]:
        return {"patchType": "JSONPatch", "jsonPatch": {"expression": expression}}

    leader = _metadata_patch(
        {
            L.GROUP_INDEX: "string(variables.index)",
            L.GROUP_KEY: "variables.groupKeys[string(variables.index)]",
            L.ROLE: _s("leader"),
        }
    )
    worker = _metadata_patch({L.WORKER_INDEX: "string(variables.index)", L.ROLE: _s("worker")})
    out = [apply(f"variables.isLeader ? {leader} : {worker}")]
    if subgrouped:
        labels = _metadata_patch(
            {L.SUBGROUP_INDEX: "string(variables.subgroup)", L.SUBGROUP_KEY: "variables.subgroupKey"}
        )
        out.append(apply(f"variables.subgrouped ? {labels} : Object{{}}"))
    if tpu_containers:
        values = {
            f"{POD_TPU_WORKER_ID}{i}": f"string(variables.tpuWorkerID * variables.tpuContainers + {i})"
            for i in range(tpu_containers)
        }
        if subgrouped:
            values[POD_TPU_HOSTNAMES] = (
                f"string(object.metadata.annotations[{_s(SUBGROUP_TPU_HOSTNAMES_TABLE)} + string(variables.subgroup)])"
            )
            values[POD_TPU_ADDRESSES] = (
                f"string(object.metadata.annotations[{_s(SUBGROUP_TPU_ADDRESSES_TABLE)} + string(variables.subgroup)])"
            )
        out.append(
            apply(
                f"!variables.isLeader && variables.tpuContainers > 0 ? {_metadata_patch(annotations=values)} : Object{{}}"
            )
        )
    topology = lws.metadata.annotations.get(L.EXCLUSIVE_TOPOLOGY)
    if topology:
        terms = exclusive_affinity_patch(L.GROUP_KEY, "variables.groupKeys[string(variables.index)]", topology)
        out.append(patch(f"variables.isLeader ? ({terms}) : []"))
    sg_topology = lws.metadata.annotations.get(L.SUBGROUP_EXCLUSIVE_TOPOLOGY)
    if subgrouped and sg_topology:
        terms = exclusive_affinity_patch(L.SUBGROUP_KEY, "variables.subgroupKey", sg_topology)
        out.append(patch(f"variables.subgrouped ? ({terms}) : []"))
    return out


def admission_objects(lws: LeaderWorkerSet, ordinals: Iterable[int], tpu_containers: int = 0) -> list[dict[str, Any]]:
    """The policy and its binding for the groups ``ordinals`` (the leader StatefulSet's replicas,
    surge included). ``tpu_containers``: the most TPU containers a rendered worker template has
    (one ``TPU_WORKER_ID`` annotation per container index)."""
    subgrouped = lws.spec.leader_worker_template.sub_group_policy is not None  # immutable: every revision agrees
    api_version, name = policy_api_version(lws), policy_name(lws)
    labels = owned_labels({L.NAME: lws.name})
    policy = {
        "apiVersion": api_version,
        "kind": POLICY_KIND,
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "matchConstraints": {
                "resourceRules": [
                    {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}
                ]
            },
            "matchConditions": [
                {"name": "statefulset-pod", "expression": f"{_s(L.POD_INDEX)} in object.metadata.labels"},
                {
                    "name": "leaderworkerset-pod",
                    "expression": f"has(object.metadata.annotations) && {_has_ann(L.SIZE)}",
                },
            ],
            "variables": _variables(lws, ordinals, subgrouped),
            "mutations": _mutations(lws, subgrouped, tpu_containers),
            "reinvocationPolicy": "Never",
            "failurePolicy": "Fail",
        },
    }
    binding = {
        "apiVersion": api_version,
        "kind": BINDING_KIND,
        "metadata": {"name": name, "labels": dict(labels)},
        "spec": {
            "policyName": name,
            "matchResources": {
                "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: lws.namespace}},
                "objectSelector": {"matchLabels": {L.NAME: lws.name}},
            },
        },
    }
    return [policy, binding]


def admission_dependencies(
    lws: LeaderWorkerSet, manifests: Iterable[Mapping[str, Any]]
) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """Every StatefulSet after the policy and its binding (a pod created before them would miss
    its values); the binding after its policy."""
    name = policy_name(lws)
    policy, binding = (POLICY_KIND, name), (BINDING_KIND, name)
    out: dict[tuple[str, str], list[tuple[str, str]]] = {binding: [policy]}
    for m in manifests:
        if m.get("kind") in ("StatefulSet", "Deployment"):
            out[(m["kind"], m["metadata"]["name"])] = [policy, binding]
    return out
