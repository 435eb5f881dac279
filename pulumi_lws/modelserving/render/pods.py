"""Pod templates of one role replica: upstream's ``createBasePod`` expressed on a StatefulSet
template (labels, annotations, env, ``schedulerName``). Pure; never mutates its inputs.

Invariants:

* labels ``modelserving.volcano.sh/{name, group-name=<ms>-<g>, role, role-id=<role>-<r>,
  revision, role-template-hash}`` on every pod, ``entry: "true"`` on entry pods only; controller
  keys win over the template's (upstream lets the template override them, addenda §3.4 -- that
  can detach a pod from its StatefulSet's selector), and a worker template's own ``entry`` label
  is dropped (the worker selector requires its absence);
* env ``GROUP_SIZE=workerReplicas+1``, ``ENTRY_ADDRESS=<entry pod>.<ns>``, ``WORKER_INDEX`` (``"0"``
  on the entry pod; the pod index 1..W from the Downward API on workers) in this order, in every
  container AND init container, same-name user variables removed. They come FIRST (upstream
  appends them), so a user variable may reference ``$(ENTRY_ADDRESS)`` -- Kubernetes expands only
  variables defined earlier; ours reference nothing;
* ``spec.schedulerName`` = the ModelServing's (it overrides the template's); when it is
  ``volcano`` pods carry ``scheduling.k8s.io/group-name=<ms>-<g>`` and
  ``volcano.sh/task-spec=<role>-<r>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_lws.core.k8s import keys as K
from pulumi_lws.core.k8s.copying import json_copy
from pulumi_lws.core.k8s.manifests import merged
from pulumi_lws.modelserving import labels as L
from pulumi_lws.modelserving import names
from pulumi_lws.modelserving.render.shared import SharedParts


def role_labels(ms: str, g: int, role: str, r: int) -> dict[str, str]:
    """Identity labels of a role replica's objects (Services, StatefulSets, pods)."""
    return {L.NAME: ms, L.GROUP_NAME: names.group_name(ms, g), L.ROLE: role, L.ROLE_ID: names.role_id(role, r)}


def pod_labels(ms: str, g: int, role: str, r: int, revision: str, template_hash: str, entry: bool) -> dict[str, str]:
    out = {**role_labels(ms, g, role, r), L.REVISION: revision, L.ROLE_TEMPLATE_HASH: template_hash}
    if entry:
        out[L.ENTRY] = L.ENTRY_VALUE
    return out


def pod_annotations(ms: str, g: int, role: str, r: int, scheduler: str) -> dict[str, str]:
    if scheduler != L.VOLCANO_SCHEDULER:
        return {}
    return {L.POD_GROUP_ANNOTATION: names.podgroup(ms, g), L.TASK_SPEC_ANNOTATION: names.role_id(role, r)}


def entry_address(ms: str, g: int, role: str, r: int, namespace: str) -> str:
    """``<entry pod>.<ns>``: resolves through the headless Service named like the entry pod."""
    return f"{names.entry_pod(ms, g, role, r)}.{namespace}"


def _index_env(entry: bool) -> dict[str, Any]:
    index: dict[str, Any] = (
        {"value": "0"} if entry else {"valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{K.POD_INDEX}']"}}}
    )
    return {"name": L.ENV_WORKER_INDEX, **index}


def role_env(group_size: int, address: str, entry: bool, parts: SharedParts | None = None) -> list[dict[str, Any]]:
    """``GROUP_SIZE``, ``ENTRY_ADDRESS``, ``WORKER_INDEX`` (module invariants), built for this call;
    with ``parts``, the entries are those of the render (:mod:`.shared`): ``GROUP_SIZE`` and
    ``WORKER_INDEX`` per value, ``ENTRY_ADDRESS`` per replica (its entry and worker StatefulSets)."""
    if parts is None:
        return [{"name": L.ENV_GROUP_SIZE, "value": str(group_size)}, _env_address(address), _index_env(entry)]
    return [
        parts.part(("env-group-size", group_size), lambda: {"name": L.ENV_GROUP_SIZE, "value": str(group_size)}),
        parts.latest("env-address", address, lambda: _env_address(address)),
        parts.part(("env-worker-index", entry), lambda: _index_env(entry)),
    ]


def _env_address(address: str) -> dict[str, Any]:
    return {"name": L.ENV_ENTRY_ADDRESS, "value": address}


def with_env(spec: dict[str, Any], env: list[dict[str, Any]]) -> None:
    """``env`` first in every init container and container of ``spec`` (in place), same-name user
    variables dropped. The first container takes ``env``'s dicts (:func:`role_env`'s: built for this
    call, or shared with other objects, never with another place of this one), later ones get
    copies, so no dict is shared by two containers."""
    own = {e["name"] for e in env}
    first = True
    for key in ("initContainers", "containers"):
        for container in spec.get(key) or []:
            user = [e for e in container.get("env") or [] if e.get("name") not in own]
            container["env"] = (list(env) if first else [json_copy(e) for e in env]) + user
            first = False


def pod_template(
    template: Mapping[str, Any] | None,
    *,
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
    env: list[dict[str, Any]],
    scheduler: str,
    entry: bool,
) -> dict[str, Any]:
    """``template`` ({metadata, spec}) decorated as the module invariants say, built fresh: new
    metadata, spec and container dicts; what lies below them is shared with ``template`` and never
    mutated in place (docs/performance.md). ``annotations`` is taken as it is when the template has
    none (the caller may share it with other objects: :mod:`.shared`)."""
    src = dict(template or {})
    meta = dict(src.get("metadata") or {})
    user_labels = {k: v for k, v in (meta.get("labels") or {}).items() if entry or k != L.ENTRY}
    out_meta: dict[str, Any] = {"labels": merged(user_labels, labels)}
    user_annotations = meta.get("annotations")
    ann = merged(user_annotations, annotations) if user_annotations else annotations
    if ann:
        out_meta["annotations"] = ann
    spec = dict(src.get("spec") or {})
    for key in ("initContainers", "containers"):
        if spec.get(key):
            spec[key] = [dict(c) for c in spec[key]]
    with_env(spec, env)
    spec["schedulerName"] = scheduler
    return {"metadata": out_meta, "spec": spec}
