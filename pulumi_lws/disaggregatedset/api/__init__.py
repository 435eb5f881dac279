"""DisaggregatedSet API types (pure: no Pulumi, no I/O beyond reading a manifest file)."""

from pulumi_lws.core.contract.errors import FieldError, SpecError
from pulumi_lws.disaggregatedset.api.disaggregatedset import (
    API_VERSION,
    KIND,
    DisaggregatedRole,
    DisaggregatedSet,
    DisaggregatedSetSpec,
    PlacementPolicy,
    RoleScaling,
    load_manifest,
)

__all__ = [
    "API_VERSION",
    "KIND",
    "DisaggregatedRole",
    "DisaggregatedSet",
    "DisaggregatedSetSpec",
    "FieldError",
    "PlacementPolicy",
    "RoleScaling",
    "SpecError",
    "load_manifest",
]
