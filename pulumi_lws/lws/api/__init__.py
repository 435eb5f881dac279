"""API types (pure: no Pulumi, no I/O beyond reading a manifest file)."""

from pulumi_lws.core.contract.errors import FieldError, SpecError
from pulumi_lws.core.k8s.model import IntOrString
from pulumi_lws.core.k8s.scaling import scaled_value
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet, load_manifest

LeaderWorkerSetSpecError = SpecError

__all__ = [
    "FieldError",
    "IntOrString",
    "LeaderWorkerSet",
    "LeaderWorkerSetSpecError",
    "SpecError",
    "load_manifest",
    "scaled_value",
]
