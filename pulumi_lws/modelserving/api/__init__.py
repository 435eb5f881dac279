"""ModelServing API types (pure: no Pulumi, no I/O beyond reading a manifest file)."""

from pulumi_lws.core.contract.errors import FieldError, SpecError
from pulumi_lws.modelserving.api.modelserving import (
    API_VERSION,
    KIND,
    GangPolicy,
    ModelServing,
    ModelServingSpec,
    NetworkTopology,
    NetworkTopologySpec,
    PluginScope,
    PluginSpec,
    Role,
    RollingUpdateConfiguration,
    RolloutStrategy,
    ServingGroupTemplate,
    load_manifest,
)

__all__ = [
    "API_VERSION",
    "KIND",
    "FieldError",
    "GangPolicy",
    "ModelServing",
    "ModelServingSpec",
    "NetworkTopology",
    "NetworkTopologySpec",
    "PluginScope",
    "PluginSpec",
    "Role",
    "RollingUpdateConfiguration",
    "RolloutStrategy",
    "ServingGroupTemplate",
    "SpecError",
    "load_manifest",
]
