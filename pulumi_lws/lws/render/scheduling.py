"""Gang-scheduling objects for ``spec.scheduling`` (Ordinal mode), pure and deterministic.

Providers (``ReconcileOptions.gang_provider``):

* ``kubernetes`` — workload-aware scheduling, ``scheduling.k8s.io/v1beta1`` (reference §6.2):
  one ``Workload`` ``<lws>`` (KEP draft name) and runtime ``PodGroup`` s per scheduling level:
  replica ``<lws>-<i>-<rev>``; role ``<lws>-<i>-leader-<rev>`` + ``<lws>-<i>-worker-<rev>``;
  whole LWS ``<lws>-lws``. Pods reference them with ``spec.schedulingGroup.podGroupName``.
* ``volcano`` — ``scheduling.volcano.sh/v1beta1`` ``PodGroup`` ``<lws>-<i>-<rev>`` per group
  (§6.1); pods carry the annotation ``scheduling.k8s.io/group-name``.

Invariants:
* :func:`with_gang_scheduling` returns the manifests unchanged when ``spec.scheduling`` is unset;
  otherwise the gang objects come before the first StatefulSet and every PodGroup a pod template
  names is in the output; :func:`gang_dependencies` makes each workload depend on the gang
  objects its pods name (Pulumi orders by dependencies, not by registration order);
* a pod template names only a PodGroup it can name statically: the worker StatefulSet of group
  ``i`` names group ``i``'s; the leader StatefulSet's template is shared by every ordinal, so it
  names only the whole-LWS ``<lws>-lws`` group (no webhook can stamp per-ordinal names);
* every gang's minimum counts only pods that reference it, so a gang can always form: the
  replica-level gang (and Volcano's) holds the group's ``size - 1`` workers, not the leader.
See docs/group-features.md "Gang scheduling" for the differences from upstream.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from pulumi_lws.core.contract.stage import Stage
from pulumi_lws.core.k8s.manifests import metadata
from pulumi_lws.core.k8s.quantity import format_quantity, parse_quantity, sum_quantities  # noqa: F401  (re-exported)
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.revision import RevisionCatalog

WAS_API = "scheduling.k8s.io/v1beta1"
VOLCANO_API = "scheduling.volcano.sh/v1beta1"
SCHEDULING_LEVEL = f"{L.PREFIX}/scheduling-level"
WAS_MODE_ANNOTATION = f"{L.PREFIX}/workload-aware-scheduling"
WORKLOAD_NAME_ANNOTATION = f"{L.PREFIX}/workload-name"
VOLCANO_GROUP_NAME = "scheduling.k8s.io/group-name"
VOLCANO_QUEUE = "scheduling.volcano.sh/queue-name"
VOLCANO_ANNOTATION_PREFIX = "volcano.sh/"
GANG_KINDS = ("Workload", "PodGroup")
_TEMPLATE_FIELDS = ("schedulingConstraints", "disruptionMode", "resourceClaims")


def is_gang_object(manifest: Mapping[str, Any]) -> bool:
    """A Workload or PodGroup (either provider); :func:`gang_dependencies` orders their members after them."""
    return manifest.get("kind") in GANG_KINDS and str(manifest.get("apiVersion", "")).startswith("scheduling.")


def _template_gang_refs(manifest: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The gang objects a workload's pod template names: its PodGroup (``schedulingGroup`` or the
    Volcano annotation) and its Workload (``workload-name`` annotation)."""
    if manifest.get("kind") not in ("StatefulSet", "Deployment"):
        return []
    template = (manifest.get("spec") or {}).get("template") or {}
    annotations = (template.get("metadata") or {}).get("annotations") or {}
    group = ((template.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName") or annotations.get(
        VOLCANO_GROUP_NAME
    )
    refs = [("PodGroup", group)] if group else []
    if annotations.get(WORKLOAD_NAME_ANNOTATION):
        refs.append(("Workload", annotations[WORKLOAD_NAME_ANNOTATION]))
    return refs


def gang_dependencies(manifests: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """Member pods never exist before their gang: every workload after the PodGroup and Workload
    its pod template names; every runtime PodGroup (``kubernetes`` provider) after the Workload
    its ``workloadRef`` names. Pods that belong to no gang (e.g. replica-level leaders, see the
    module invariants) need no order. Only declared gang objects are named (callers filter)."""
    manifests = list(manifests)
    out: dict[tuple[str, str], list[tuple[str, str]]] = {}
    if not any(m.get("kind") in GANG_KINDS for m in manifests):
        return out  # nothing to depend on (no spec.scheduling)
    for m in manifests:
        ref = (m["kind"], m["metadata"]["name"])
        if is_gang_object(m) and m["kind"] == "PodGroup":
            workload_ref = ((m.get("spec") or {}).get("workloadRef") or {}).get("workloadName")
            if workload_ref:
                out[ref] = [("Workload", workload_ref)]
        elif refs := _template_gang_refs(m):
            out[ref] = refs
    return out


def required_gang_apis(
    lws: LeaderWorkerSet, provider: str | None, field: str = "spec.scheduling"
) -> tuple[tuple[str, str, str], ...]:
    """``(apiVersion, kind, why)`` of the gang objects :func:`with_gang_scheduling` renders for
    ``lws`` with ``provider`` (None: ``kubernetes``): none without ``spec.scheduling`` and in Hash
    mode (its pipeline renders no gang object). ``field`` names ``spec.scheduling`` in the
    manifest the user wrote (a DisaggregatedSet role's path)."""
    if lws.spec.scheduling is None or lws.spec.group_identity == "Hash":
        return ()
    if provider == "volcano":
        why = (
            f'{field} with gang_provider "volcano" renders a Volcano PodGroup per group ({VOLCANO_API}): '
            'install Volcano (its CRD podgroups.scheduling.volcano.sh), choose gang_provider "kubernetes", '
            f"or remove {field}"
        )
        return ((VOLCANO_API, "PodGroup", why),)
    why = (
        f"{field} renders a Workload and its PodGroups ({WAS_API}: workload-aware scheduling, Kubernetes "
        '>= 1.37 with the GenericWorkload feature gate): enable that API, choose gang_provider "volcano" '
        f"with Volcano installed, or remove {field}"
    )
    return ((WAS_API, "Workload", why), (WAS_API, "PodGroup", why))


# ---- Volcano minResources -----------------------------------------------------------------------


def pod_requests(template: Mapping[str, Any] | None) -> dict[str, tuple[Decimal, bool]]:
    """Upstream ``PodRequests`` on a template: sum of containers (+ sidecar initContainers) vs the
    largest regular initContainer, per resource. A limit stands in for an absent request (the API
    server defaults requests from limits)."""
    spec = _dict(_dict(template).get("spec"))

    def one(container: Mapping[str, Any]) -> dict[str, tuple[Decimal, bool]]:
        res = _dict(container.get("resources"))
        merged = {**_dict(res.get("limits")), **_dict(res.get("requests"))}
        return {name: parse_quantity(q) for name, q in merged.items()}

    total: dict[str, tuple[Decimal, bool]] = {}
    inits = spec.get("initContainers") or []
    for c in list(spec.get("containers") or []) + [c for c in inits if c.get("restartPolicy") == "Always"]:
        for name, (v, b) in one(c).items():
            old = total.get(name, (Decimal(0), b))
            total[name] = (old[0] + v, old[1] or b)
    for c in inits:
        if c.get("restartPolicy") != "Always":
            for name, (v, b) in one(c).items():
                if v > total.get(name, (Decimal(0), b))[0]:
                    total[name] = (v, b)
    return total


def sum_requests(parts: Iterable[tuple[Mapping[str, Any] | None, int]]) -> dict[str, str]:
    """Sum of ``count`` x PodRequests(template) over ``parts``, as canonical quantity strings."""
    return sum_quantities((pod_requests(template), count) for template, count in parts)


# ---- names ----------------------------------------------------------------------------------


def workload_name(lws: str) -> str:
    """KEP/#982 draft ``<lws>`` (newest upstream adds a hash of the LWS UID, unknown before creation)."""
    return lws


def pod_group_name(lws: str, group: int | None, revision: str, role: str | None = None) -> str:
    """``<lws>-<i>-<rev>`` (replica, Volcano), ``<lws>-<i>-<role>-<rev>`` (role), ``<lws>-lws`` (group None)."""
    if group is None:
        return f"{lws}-lws"
    return f"{lws}-{group}-{role}-{revision}" if role else f"{lws}-{group}-{revision}"


# ---- spec.scheduling -> templates -----------------------------------------------------------


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def scheduling_wire(lws: LeaderWorkerSet) -> dict[str, Any]:
    return lws.spec.scheduling.to_wire() if lws.spec.scheduling is not None else {}


def _disruption_mode(value: Any) -> Any:
    """``disruptionMode`` as the v1beta1 union (``{all: {}}``); a bare string ``All`` is accepted."""
    return {str(value)[:1].lower() + str(value)[1:]: {}} if isinstance(value, str) else copy.deepcopy(value)


def common_priority_class(lws: LeaderWorkerSet) -> str | None:
    """The leader/worker templates' shared priorityClassName (validation requires them equal)."""
    spec = _dict(lws.spec.leader_worker_template.leader_pod_template().get("spec"))
    return spec.get("priorityClassName") or None


def _policy(block: Mapping[str, Any], default_gang: bool, min_count: int) -> dict[str, Any]:
    """``schedulingPolicy`` with gang ``minCount`` set to the enrolled membership."""
    policy = _dict(block.get("schedulingPolicy"))
    if "basic" in policy or (not policy and not default_gang):
        return {"basic": copy.deepcopy(_dict(policy.get("basic")))}
    gang = {k: copy.deepcopy(v) for k, v in _dict(policy.get("gang")).items() if k != "minCount"}
    return {"gang": {**gang, "minCount": max(1, min_count)}}


def template_body(lws: LeaderWorkerSet, block: Mapping[str, Any], default_gang: bool, min_count: int) -> dict[str, Any]:
    """Fields shared by a Workload ``podGroupTemplates[]`` entry and its runtime PodGroups."""
    body: dict[str, Any] = {"schedulingPolicy": _policy(block, default_gang, min_count)}
    for key in _TEMPLATE_FIELDS:
        if block.get(key) is not None:
            body[key] = _disruption_mode(block[key]) if key == "disruptionMode" else copy.deepcopy(block[key])
    priority = common_priority_class(lws)
    if priority:
        body["priorityClassName"] = priority
    return body


def level_blocks(lws: LeaderWorkerSet) -> dict[str, dict[str, Any]]:
    """Template name -> the ``spec.scheduling`` block configuring it, for the active level."""
    s = scheduling_wire(lws)
    level = lws.spec.scheduling.level() if lws.spec.scheduling is not None else "replica"
    replica = _dict(s.get("replica"))
    if level == "lws":
        return {"lws": s}
    if level == "role":
        return {"leader": _dict(replica.get("leader")), "worker": _dict(replica.get("worker"))}
    return {"replica": replica}


def enrolled(template: str, size: int) -> int:
    """Pods of one group that reference a PodGroup of ``template`` (leaders can't: shared template)."""
    return 1 if template == "leader" else max(1, size - 1)


def lws_members(lws: LeaderWorkerSet, sizes: Mapping[int, int]) -> int:
    """Whole-LWS gang: every replica with the size of the revision it runs (target when not yet
    created); at least 1 so the PodGroup stays valid with ``replicas: 0``."""
    return max(1, sum(sizes.get(i, lws.size) for i in range(lws.replicas)))


# ---- kubernetes provider -----------------------------------------------------------------------


def _labels(lws: LeaderWorkerSet, level: str, revision: str, group: int | None, role: str | None) -> dict[str, str]:
    out = {L.NAME: lws.name, L.TEMPLATE_REVISION_HASH: revision, SCHEDULING_LEVEL: level}
    if group is not None:
        out[L.GROUP_INDEX] = str(group)
    if role:
        out[L.ROLE] = role
    return out


def workload(lws: LeaderWorkerSet, sizes: Mapping[int, int]) -> dict[str, Any]:
    """The one Workload: ``controllerRef`` = the LWS, one template per pod-group kind of the level."""
    templates = []
    for name, block in level_blocks(lws).items():
        count = lws_members(lws, sizes) if name == "lws" else enrolled(name, lws.size)
        templates.append({"name": name, **template_body(lws, block, name != "lws", count)})
    return {
        "apiVersion": WAS_API,
        "kind": "Workload",
        "metadata": metadata(workload_name(lws.name), lws.namespace, {L.NAME: lws.name}),
        "spec": {
            "controllerRef": {"apiGroup": "leaderworkerset.x-k8s.io", "kind": "LeaderWorkerSet", "name": lws.name},
            "podGroupTemplates": templates,
        },
    }


def was_pod_group(
    lws: LeaderWorkerSet, template: str, block: Mapping[str, Any], group: int | None, revision: str, min_count: int
) -> dict[str, Any]:
    level = {"leader": "role", "worker": "role"}.get(template, template)
    role = template if level == "role" else None
    return {
        "apiVersion": WAS_API,
        "kind": "PodGroup",
        "metadata": metadata(
            pod_group_name(lws.name, group, revision, role), lws.namespace, _labels(lws, level, revision, group, role)
        ),
        "spec": {
            "workloadRef": {"workloadName": workload_name(lws.name), "templateName": template},
            **template_body(lws, block, template != "lws", min_count),
        },
    }


def was_objects(
    lws: LeaderWorkerSet, revisions: Mapping[int, str], sizes: Mapping[int, int], target: str
) -> tuple[list[dict[str, Any]], str | None, dict[int, str]]:
    """(objects, leader template's PodGroup, {ordinal: worker template's PodGroup})."""
    blocks = level_blocks(lws)
    out = [workload(lws, sizes)]
    if "lws" in blocks:
        pg = was_pod_group(lws, "lws", blocks["lws"], None, target, lws_members(lws, sizes))
        out.append(pg)
        name = pg["metadata"]["name"]
        return out, name, {i: name for i in revisions}
    workers: dict[int, str] = {}
    for i, rev in revisions.items():
        for template, block in blocks.items():
            pg = was_pod_group(lws, template, block, i, rev, enrolled(template, sizes[i]))
            out.append(pg)
            if template != "leader":
                workers[i] = pg["metadata"]["name"]
    return out, None, workers


# ---- volcano provider -----------------------------------------------------------------------


def volcano_pod_group(
    lws: LeaderWorkerSet, at: LeaderWorkerSet, group: int, revision: str, queue: str | None
) -> dict[str, Any]:
    """§6.1 PodGroup of group ``group`` on revision ``revision`` (``at`` = the LWS at it)."""
    lwt = at.spec.leader_worker_template
    min_member = 1 if lws.spec.startup_policy == "LeaderReady" else enrolled("replica", at.size)
    spec: dict[str, Any] = {
        "minMember": min_member,
        "minResources": sum_requests([(lwt.leader_pod_template(), 1), (lwt.worker_template, at.size - 1)]),
    }
    queue = lws.metadata.annotations.get(VOLCANO_QUEUE) or queue
    if queue:
        spec["queue"] = queue
    annotations = {k: v for k, v in sorted(lws.metadata.annotations.items()) if k.startswith(VOLCANO_ANNOTATION_PREFIX)}
    labels = {L.NAME: lws.name, L.GROUP_INDEX: str(group), L.TEMPLATE_REVISION_HASH: revision}
    return {
        "apiVersion": VOLCANO_API,
        "kind": "PodGroup",
        "metadata": metadata(pod_group_name(lws.name, group, revision), lws.namespace, labels, annotations or None),
        "spec": spec,
    }


# ---- stamping pod templates -------------------------------------------------------------------


def _stamp(sts: Mapping[str, Any], pod_group: str, provider: str, mode: str, workload: str) -> dict[str, Any]:
    # copy on write along the path that changes (the rest is shared with ``sts``, never mutated)
    template = dict(sts["spec"]["template"])
    out = {**sts, "spec": {**sts["spec"], "template": template}}
    template["metadata"] = dict(template.get("metadata") or {})
    annotations = template["metadata"]["annotations"] = dict(template["metadata"].get("annotations") or {})
    if provider == "volcano":
        annotations[VOLCANO_GROUP_NAME] = pod_group
    else:
        template["spec"] = {**(template.get("spec") or {}), "schedulingGroup": {"podGroupName": pod_group}}
        annotations[WAS_MODE_ANNOTATION] = mode
        annotations[WORKLOAD_NAME_ANNOTATION] = workload
    return out


def _worker_ordinal(lws: LeaderWorkerSet, manifest: Mapping[str, Any]) -> int | None:
    if manifest.get("kind") != "StatefulSet" or manifest["metadata"]["name"] == lws.name:
        return None
    idx = (manifest["metadata"].get("labels") or {}).get(L.GROUP_INDEX)
    return int(idx) if idx is not None and str(idx).isdigit() else None


def _insert_before_controllers(
    manifests: list[dict[str, Any]], objects: Iterable[dict[str, Any]]
) -> list[dict[str, Any]]:
    at = next((n for n, m in enumerate(manifests) if m.get("kind") in ("StatefulSet", "Deployment")), len(manifests))
    return manifests[:at] + list(objects) + manifests[at:]


def with_gang_scheduling(
    manifests: Iterable[Mapping[str, Any]],
    lws: LeaderWorkerSet,
    stage: Stage,
    catalog: RevisionCatalog,
    provider: str = "kubernetes",
    volcano_queue: str | None = None,
) -> list[dict[str, Any]]:
    """``manifests`` (from ``render_ordinal``) plus the gang objects, with pod templates naming
    their PodGroup. Never mutates its inputs."""
    # no copy of a manifest dict: nothing below changes one in place (_stamp copies on write)
    out = [m if type(m) is dict else dict(m) for m in manifests]
    if lws.spec.scheduling is None:
        return out
    target = catalog.target.key
    revisions = {i: stage.group_revisions.get(str(i), target) for i in range(stage.replicas)}
    ats = {key: catalog.lws_at(lws, key) for key in sorted(set(revisions.values()))}
    sizes = {i: ats[key].size for i, key in revisions.items()}
    if provider == "volcano":
        objects = [volcano_pod_group(lws, ats[rev], i, rev, volcano_queue) for i, rev in revisions.items()]
        leader_pg, worker_pgs, mode = None, {i: o["metadata"]["name"] for i, o in zip(revisions, objects)}, "replica"
    else:
        objects, leader_pg, worker_pgs = was_objects(lws, revisions, sizes, target)
        mode = lws.spec.scheduling.level()
    stamped = []
    for m in out:
        ordinal = _worker_ordinal(lws, m)
        is_leader = m.get("kind") == "StatefulSet" and m["metadata"]["name"] == lws.name
        pg = leader_pg if is_leader else worker_pgs.get(ordinal) if ordinal is not None else None
        stamped.append(_stamp(m, pg, provider, mode, workload_name(lws.name)) if pg else m)
    return _insert_before_controllers(stamped, objects)
