"""Turn whatever a caller passes as ``args`` into a validated ModelServing model (pure).

Accepted forms (all end up as one upstream-shaped manifest dict, validated once):

* a ``pulumi_lws.modelserving.api.ModelServing`` model;
* an upstream manifest: a dict with ``apiVersion``/``kind``/``spec``, or YAML text;
* ``{"manifest": <any of the above>, ...field overrides}``;
* plain fields (snake_case or camelCase): ``name``, ``namespace``, ``replicas``,
  ``scheduler_name``, ``recovery_policy``, ``rollout_strategy`` (the upstream object),
  ``roles`` (the upstream ``spec.template.roles`` list), and the pulumi-lws option
  ``max_groups_in_flight`` (RoleRollingUpdate: at most this many ServingGroups with roles being
  replaced at once; default: upstream's independent per-group behaviour).

A :class:`SpecError` raised from this module guarantees nothing was registered.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from pulumi_lws.components.args import manifest_from_args, split_args as split_any_args
from pulumi_lws.core.control import check_arguments, resolve, with_arguments
from pulumi_lws.core.errors import FieldError, SpecError
from pulumi_lws.modelserving.api.modelserving import KIND, ModelServing

FIELD_PATHS: dict[str, tuple[str, ...]] = {
    "name": ("metadata", "name"),
    "namespace": ("metadata", "namespace"),
    "replicas": ("spec", "replicas"),
    "scheduler_name": ("spec", "schedulerName"),
    "recovery_policy": ("spec", "recoveryPolicy"),
    "rollout_strategy": ("spec", "rolloutStrategy"),
    "roles": ("spec", "template", "roles"),
}
OPTION_FIELDS = ("max_groups_in_flight", "paused", "progress_deadline_seconds")
KNOWN_FIELDS = set(FIELD_PATHS) | {"manifest"} | set(OPTION_FIELDS)


@dataclass(frozen=True)
class BuiltModelServing:
    ms: ModelServing
    max_groups_in_flight: int | None = None


def split_args(args: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(base manifest, field overrides with snake_case keys) from any accepted ``args`` form."""
    return split_any_args(args, ModelServing, KNOWN_FIELDS)


def _in_flight(fields: Mapping[str, Any]) -> int | None:
    value = fields.get("max_groups_in_flight")
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SpecError(KIND, None, [FieldError("maxGroupsInFlight", "must be an integer >= 1", value)])
    return value


def build_spec(resource_name: str, args: Any) -> BuiltModelServing:
    """Validate ``args`` into a ModelServing model; raise :class:`SpecError` on any problem.

    ``metadata.name`` defaults to the Pulumi resource name; ``metadata.namespace`` to ``default``.
    """
    manifest, fields = manifest_from_args(resource_name, args, ModelServing, FIELD_PATHS, KNOWN_FIELDS)
    in_flight = _in_flight(fields)
    control = check_arguments(KIND, fields.get("paused"), fields.get("progress_deadline_seconds"))
    ms = ModelServing.from_manifest(with_arguments(manifest, control))
    resolve(KIND, ms.name, ms.metadata.annotations)  # a malformed control annotation fails here
    from pulumi_lws.modelserving.reconcile import max_groups_in_flight_annotation

    max_groups_in_flight_annotation(ms)  # a bad pulumi-lws.io/max-groups-in-flight fails before anything registers
    return BuiltModelServing(ms, in_flight)
