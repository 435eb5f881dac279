"""The ModelServing CRD's own checks (OpenAPI schema + CEL), as the Kubernetes 1.35 apiserver reports them.

Invariants: enums, types, unknown fields and required fields are enforced by the typed model at
parse time; this module holds the rest of the schema (role name length and pattern, roles
``1..4``, unique role names, networkTopology bounds, ``metadata.name`` required) and the two CEL
transition rules that only apply to updates. Messages are the apiserver's (``<path> in body
should ...``, ``Too long: ...``, ``Too many: ...``) and the CRD's CEL messages.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pulumi_lws.modelserving.api.fields import (
    MAX_ROLES,
    MIN_ROLE_REPLICAS,
    ROLE_NAME_MAX,
    ROLE_NAME_PATTERN,
    ROLES,
    TEMPLATE,
    TIER_NAME_MAX,
    Errors,
    err,
    role_path,
)

if TYPE_CHECKING:
    from pulumi_lws.modelserving.api.modelserving import (
        ModelServing,
        NetworkTopologySpec,
    )

_ROLE_NAME_RE = re.compile(ROLE_NAME_PATTERN)


def too_long(path: str, value: str, limit: int) -> Errors:
    return err(path, f"Too long: may not be more than {limit} bytes", value, "TooLong")


def name_required(ms: ModelServing) -> Errors:
    """The apiserver: an object needs a name (pulumi-lws has no generateName)."""
    if ms.metadata.name:
        return []
    return err("metadata.name", "Required value: name or generateName is required", kind="Required")


def roles_count(ms: ModelServing) -> Errors:
    """``roles``: ``minItems: 1``, ``maxItems: 4``."""
    n = len(ms.spec.template.roles)
    if n < 1:
        return err(ROLES, f"{ROLES} in body should have at least 1 items", n)
    if n > MAX_ROLES:
        return err(ROLES, f"Too many: {n}: must have at most {MAX_ROLES} items", n, "TooMany")
    return []


def role_name_schema(ms: ModelServing) -> Errors:
    """``role.name``: ``maxLength: 12`` and the pattern ``^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$``."""
    errs: Errors = []
    for i, role in enumerate(ms.spec.template.roles):
        path = f"{role_path(i)}.name"
        if len(role.name.encode()) > ROLE_NAME_MAX:
            errs += too_long(path, role.name, ROLE_NAME_MAX)
        if not _ROLE_NAME_RE.fullmatch(role.name):
            errs += err(path, f"{path} in body should match '{ROLE_NAME_PATTERN}'", role.name)
    return errs


def role_names_unique(ms: ModelServing) -> Errors:
    """CEL on ``roles``: ``self.all(x, self.exists_one(y, y.name == x.name))``."""
    names = [r.name for r in ms.spec.template.roles]
    return err(ROLES, "roles name must be unique", "array") if len(set(names)) != len(names) else []


def _topology_spec(spec: NetworkTopologySpec | None, path: str) -> Errors:
    if spec is None:
        return []
    errs: Errors = []
    if spec.highest_tier_allowed is not None and spec.highest_tier_allowed < 0:
        p = f"{path}.highestTierAllowed"
        errs += err(p, f"{p} in body should be greater than or equal to 0", spec.highest_tier_allowed)
    if spec.highest_tier_name is not None and len(spec.highest_tier_name.encode()) > TIER_NAME_MAX:
        errs += too_long(f"{path}.highestTierName", spec.highest_tier_name, TIER_NAME_MAX)
    return errs


def network_topology_bounds(ms: ModelServing) -> Errors:
    """``groupPolicy``/``rolePolicy``: ``highestTierAllowed >= 0``, ``highestTierName`` at most 253 bytes."""
    nt = ms.spec.template.network_topology
    if nt is None:
        return []
    base = f"{TEMPLATE}.networkTopology"
    return _topology_spec(nt.group_policy, f"{base}.groupPolicy") + _topology_spec(nt.role_policy, f"{base}.rolePolicy")


#: schema order: metadata, then spec.template (roles, then networkTopology)
CRD_RULES = (name_required, roles_count, role_name_schema, role_names_unique, network_topology_bounds)


# ---- CEL transition rules (update only) -------------------------------------------------------
def gang_policy_required_once_set(ms: ModelServing, old: ModelServing) -> Errors:
    """CEL on ``template``: ``!has(oldSelf.gangPolicy) || has(self.gangPolicy)``."""
    if old.spec.template.gang_policy is not None and ms.spec.template.gang_policy is None:
        return err(TEMPLATE, "gangPolicy is required once set", "object")
    return []


def min_role_replicas_immutable(ms: ModelServing, old: ModelServing) -> Errors:
    """CEL on ``minRoleReplicas``: ``self == oldSelf``, evaluated only when both objects have the
    field (so adding it to a gangPolicy or dropping it passes, as upstream)."""
    new_gp, old_gp = ms.spec.template.gang_policy, old.spec.template.gang_policy
    new_m = new_gp.min_role_replicas if new_gp is not None else None
    old_m = old_gp.min_role_replicas if old_gp is not None else None
    if new_m is not None and old_m is not None and new_m != old_m:
        return err(MIN_ROLE_REPLICAS, "minRoleReplicas is immutable", "object")
    return []


CRD_UPDATE_RULES = (gang_policy_required_once_set, min_role_replicas_immutable)
