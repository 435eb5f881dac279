"""Turn whatever a caller passes as ``args`` into a validated DisaggregatedSet model (pure).

Accepted forms (all end up as one upstream-shaped manifest dict, validated once): a
``pulumi_lws.disaggregatedset.api.DisaggregatedSet`` model; an upstream manifest (dict or YAML
text); ``{"manifest": ..., ...field overrides}``; plain fields (snake_case or camelCase): ``name``,
``namespace``, ``roles`` (the upstream ``spec.roles`` list), ``slices``, ``placement_policy``, and
the pulumi-lws options ``progress_deadline_seconds`` (a new revision not ready this long after its
last scale-up is reported as a blocker, old capacity kept; default 600, 0 disables),
``gang_provider`` (``kubernetes`` | ``volcano``: which gang objects a role's ``spec.scheduling``
expands into, for every child LeaderWorkerSet, as the LeaderWorkerSet component's argument) and
``volcano_queue`` (the Volcano PodGroups' ``spec.queue`` unless a role sets the
``scheduling.volcano.sh/queue-name`` annotation).

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
#: the children's LeaderWorkerSet reconcile choices (the LeaderWorkerSet component's arguments of the same name)
GANG_FIELDS = ("gang_provider", "volcano_queue")
GANG_PROVIDERS = ("kubernetes", "volcano")
KNOWN_FIELDS = set(FIELD_PATHS) | {"manifest", "progress_deadline_seconds", "paused"} | set(GANG_FIELDS)


@dataclass(frozen=True)
class BuiltDisaggregatedSet:
    ds: DisaggregatedSet
    progress_deadline_seconds: float | None = None
    gang_provider: str = "kubernetes"
    volcano_queue: str | None = None


def _deadline(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise SpecError(KIND, None, [FieldError("progressDeadlineSeconds", "must be a number of seconds >= 0", value)])
    return float(value)


def _gang(fields: dict[str, Any]) -> tuple[str, str | None]:
    """(gang provider, Volcano queue) of every child, validated as the LeaderWorkerSet component does."""
    errors = []
    provider = fields.get("gang_provider") or "kubernetes"
    queue = fields.get("volcano_queue")
    if provider not in GANG_PROVIDERS:
        supported = ", ".join(f'"{p}"' for p in GANG_PROVIDERS)
        errors.append(FieldError("gangProvider", f"Unsupported value: supported values: {supported}", provider))
    if queue is not None and (not isinstance(queue, str) or not queue):
        errors.append(FieldError("volcanoQueue", "must be a non-empty string (a Volcano Queue name)", queue))
    if errors:
        raise SpecError(KIND, None, errors)
    return provider, queue


def build_spec(resource_name: str, args: Any) -> BuiltDisaggregatedSet:
    """Validate ``args`` into a DisaggregatedSet model; raise :class:`SpecError` on any problem."""
    manifest, fields = manifest_from_args(resource_name, args, DisaggregatedSet, FIELD_PATHS, KNOWN_FIELDS)
    deadline = _deadline(fields.get("progress_deadline_seconds"))
    provider, queue = _gang(fields)
    # ``paused`` becomes the manifest's annotation; the deadline stays the DS option it already was
    manifest = with_arguments(manifest, check_arguments(KIND, fields.get("paused")), deadline=False)
    ds = DisaggregatedSet.from_manifest(manifest)
    resolve(KIND, ds.name, ds.metadata.annotations)  # a malformed control annotation fails here
    return BuiltDisaggregatedSet(ds, deadline, provider, queue)
