"""Turn whatever a caller passes as ``args`` into a validated :class:`LeaderWorkerSet` model.

Accepted forms (all end up as one upstream-shaped manifest dict, validated once):

* a ``pulumi_lws.lws.api.LeaderWorkerSet`` model;
* an upstream manifest: a dict with ``apiVersion``/``kind``/``spec``, or YAML text;
* ``{"manifest": <any of the above>, ...field overrides}``;
* plain fields (snake_case or camelCase): ``replicas``, ``size``, ``leader_template``,
  ``worker_template``, ``rollout`` {``max_unavailable``, ``max_surge``, ``partition``},
  ``partition``, ``startup_policy``, ``subdomain_policy``, ``group_identity``,
  ``group_replacement_policy``, ``restart_policy``, ``namespace``, ``name``, ``update_order``,
  ``gang_provider``.

Pure: no Pulumi resources are created here, so a :class:`SpecError` raised from this module
guarantees nothing was registered.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Mapping

from pulumi_lws.components.args import split_args as split_any_args, int_or_percent, reject_outputs, set_path, snake
from pulumi_lws.core.control import check_arguments, resolve, with_arguments
from pulumi_lws.core.errors import FieldError, SpecError
from pulumi_lws.core.model import ints_back
from pulumi_lws.lws.api.leaderworkerset import KIND, LeaderWorkerSet
from pulumi_lws.lws.reconcile import ReconcileOptions

#: Top-level field name (snake_case) -> path inside the manifest.
FIELD_PATHS: dict[str, tuple[str, ...]] = {
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
}
ROLLOUT_PATHS: dict[str, str] = {"max_unavailable": "maxUnavailable", "max_surge": "maxSurge", "partition": "partition"}
OPTION_FIELDS = ("update_order", "gang_provider", "volcano_queue")
#: rollout control (pulumi_lws.core.control): written as the manifest's annotations
CONTROL_FIELDS = ("paused", "progress_deadline_seconds")
KNOWN_FIELDS = set(FIELD_PATHS) | {"rollout", "manifest"} | set(OPTION_FIELDS) | set(CONTROL_FIELDS)


@dataclass(frozen=True)
class BuiltSpec:
    lws: LeaderWorkerSet
    options: ReconcileOptions


def split_args(args: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(base manifest, field overrides with snake_case keys) from any accepted ``args`` form."""
    return split_any_args(args, LeaderWorkerSet, KNOWN_FIELDS)


def apply_fields(manifest: dict[str, Any], fields: Mapping[str, Any]) -> dict[str, Any]:
    """Overlay plain fields on a manifest (pod templates are replaced, not merged)."""
    out = copy.deepcopy(manifest)
    out.setdefault("apiVersion", "leaderworkerset.x-k8s.io/v1")
    out.setdefault("kind", KIND)
    for key, path in FIELD_PATHS.items():
        if key in fields:
            set_path(out, path, copy.deepcopy(fields[key]))
    rollout = fields.get("rollout") or {}
    if not isinstance(rollout, Mapping):
        raise SpecError(KIND, None, [FieldError("rollout", "expected an object with maxUnavailable/maxSurge/partition")])
    for key, value in rollout.items():
        wire = ROLLOUT_PATHS.get(snake(key))
        if wire is None:
            raise SpecError(KIND, None, [FieldError(f"rollout.{key}", "unknown field")])
        if value is not None:
            set_path(out, ("spec", "rolloutStrategy", "rollingUpdateConfiguration", wire), int_or_percent(value))
    return out


def _options(fields: Mapping[str, Any]) -> ReconcileOptions:
    errors = []
    order = fields.get("update_order") or "ScaleFirst"
    gang = fields.get("gang_provider") or "kubernetes"
    if order not in ("ScaleFirst", "RolloutFirst"):
        errors.append(FieldError("updateOrder", "Unsupported value: supported values: \"ScaleFirst\", \"RolloutFirst\"", order))
    if gang not in ("kubernetes", "volcano"):
        errors.append(FieldError("gangProvider", "Unsupported value: supported values: \"kubernetes\", \"volcano\"", gang))
    if errors:
        raise SpecError(KIND, None, errors)
    return ReconcileOptions(update_order=order, gang_provider=gang, volcano_queue=fields.get("volcano_queue"))


def build_spec(resource_name: str, args: Any) -> BuiltSpec:
    """Validate ``args`` into an LWS model + reconcile options; raise :class:`SpecError` on any problem.

    ``metadata.name`` defaults to the Pulumi resource name; ``metadata.namespace`` to ``default``.
    """
    reject_outputs(args, KIND)
    base, fields = split_args(args)
    manifest = ints_back(apply_fields(base, fields))
    # a manifest's values are taken as written (upstream rejects maxSurge: "5"); only the typed
    # ``rollout`` argument, which the provider delivers as strings, is coerced (apply_fields)
    meta = manifest.setdefault("metadata", {})
    meta.setdefault("name", resource_name)
    meta.setdefault("namespace", "default")
    options = _options(fields)
    control = check_arguments(KIND, fields.get("paused"), fields.get("progress_deadline_seconds"))
    manifest = with_arguments(manifest, control)
    lws = LeaderWorkerSet.from_manifest(manifest)
    resolve(KIND, lws.name, lws.metadata.annotations)  # a malformed control annotation fails here
    return BuiltSpec(lws=lws, options=options)
