"""API types (pure: no Pulumi, no I/O beyond reading a manifest file)."""
from pulumi_lws.api.common import FieldError, IntOrString, SpecError, scaled_value
from pulumi_lws.api.leaderworkerset import LeaderWorkerSet, load_manifest

LeaderWorkerSetSpecError = SpecError

__all__ = ["FieldError", "IntOrString", "SpecError", "LeaderWorkerSetSpecError", "scaled_value",
           "LeaderWorkerSet", "load_manifest"]
