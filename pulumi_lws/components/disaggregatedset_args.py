"""Turn whatever a caller passes as ``args`` into a validated DisaggregatedSet model (pure).

Accepted forms (all end up as one upstream-shaped manifest dict, validated once): a
``pulumi_lws.disaggregatedset.api.DisaggregatedSet`` model; an upstream manifest (dict or YAML
text); ``{"manifest": ..., ...field overrides}``; plain fields (snake_case or camelCase): ``name``,
``namespace``, ``roles`` (the upstream ``spec.roles`` list), ``slices``, ``placement_policy``, and
the pulumi-lws option ``progress_deadline_seconds`` (a new revision not ready this long after its
last scale-up is reported as a blocker, old capacity kept; default 600, 0 disables).

A :class:`SpecError` raised from this module guarantees nothing was registered.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pulumi_lws.components.args import manifest_from_args
from pulumi_lws.core.control import check_arguments, resolve, with_arguments
from pulumi_lws.core.errors import FieldError, SpecError
from pulumi_lws.disaggregatedset.api.disaggregatedset import KIND, DisaggregatedSet

FIELD_PATHS: dict[str, tuple[str, ...]] = {
    "name": ("metadata", "name"),
    "namespace": ("metadata", "namespace"),
    "roles": ("spec", "roles"),
    "slices": ("spec", "slices"),
    "placement_policy": ("spec", "placementPolicy"),
}
KNOWN_FIELDS = set(FIELD_PATHS) | {"manifest", "progress_deadline_seconds", "paused"}


@dataclass(frozen=True)
class BuiltDisaggregatedSet:
    ds: DisaggregatedSet
    progress_deadline_seconds: float | None = None


def _deadline(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise SpecError(KIND, None, [FieldError("progressDeadlineSeconds", "must be a number of seconds >= 0", value)])
    return float(value)


def build_spec(resource_name: str, args: Any) -> BuiltDisaggregatedSet:
    """Validate ``args`` into a DisaggregatedSet model; raise :class:`SpecError` on any problem."""
    manifest, fields = manifest_from_args(resource_name, args, DisaggregatedSet, FIELD_PATHS, KNOWN_FIELDS)
    deadline = _deadline(fields.get("progress_deadline_seconds"))
    # ``paused`` becomes the manifest's annotation; the deadline stays the DS option it already was
    manifest = with_arguments(manifest, check_arguments(KIND, fields.get("paused")), deadline=False)
    ds = DisaggregatedSet.from_manifest(manifest)
    resolve(KIND, ds.name, ds.metadata.annotations)  # a malformed control annotation fails here
    return BuiltDisaggregatedSet(ds, deadline)
