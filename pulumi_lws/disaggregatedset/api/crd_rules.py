"""The DisaggregatedSet CRD's own checks (OpenAPI schema + CEL), as the apiserver reports them.

Invariants: enums, types, unknown fields and required fields are enforced by the typed model at
parse time; this module holds the rest of the schema: ``metadata.name`` required, roles ``2..10``
with unique names (``listMapKey=name``), role name length and pattern, ``slices 1..100``, the
embedded LWS spec's ``replicas 0..1e6``, ``networkConfig.subdomainPolicy`` required when
``networkConfig`` is written, ``""`` rejected where the embedded CRD has an enum, and the CEL rule
on ``spec`` (all-or-nothing replicas over the non-External roles). Messages are the apiserver's.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from pulumi_lws.disaggregatedset.api.fields import (
    MAX_ROLE_REPLICAS,
    MAX_ROLES,
    MAX_SLICES,
    MIN_ROLES,
    MIN_SLICES,
    ROLE_NAME_MAX,
    ROLE_NAME_PATTERN,
    ROLES,
    SLICES,
    Errors,
    err,
    role_path,
)

if TYPE_CHECKING:
    from pulumi_lws.disaggregatedset.api.disaggregatedset import DisaggregatedSet

_ROLE_NAME_RE = re.compile(ROLE_NAME_PATTERN)
ALL_OR_NOTHING = "replicas must be zero for all non-External roles or non-zero for all non-External roles"


def name_required(ds: DisaggregatedSet) -> Errors:
    """The apiserver: an object needs a name (pulumi-lws has no generateName)."""
    if ds.metadata.name:
        return []
    return err("metadata.name", "Required value: name or generateName is required", kind="Required")


def roles_count(ds: DisaggregatedSet) -> Errors:
    """``roles``: ``minItems: 2``, ``maxItems: 10``."""
    n = len(ds.spec.roles)
    if n < MIN_ROLES:
        return err(ROLES, f"{ROLES} in body should have at least {MIN_ROLES} items", n)
    if n > MAX_ROLES:
        return err(ROLES, f"Too many: {n}: must have at most {MAX_ROLES} items", n, "TooMany")
    return []


def role_name_schema(ds: DisaggregatedSet) -> Errors:
    """``name``: ``minLength 1``, ``maxLength 63``, pattern ``^[a-z0-9]([-a-z0-9]*[a-z0-9])?$``."""
    errs: Errors = []
    for i, role in enumerate(ds.spec.roles):
        path = f"{role_path(i)}.name"
        if not role.name:
            errs += err(path, f"{path} in body should be at least 1 chars long", role.name)
        if len(role.name.encode()) > ROLE_NAME_MAX:
            errs += err(path, f"Too long: may not be more than {ROLE_NAME_MAX} bytes", role.name, "TooLong")
        if not _ROLE_NAME_RE.fullmatch(role.name):
            errs += err(path, f"{path} in body should match '{ROLE_NAME_PATTERN}'", role.name)
    return errs


def role_names_unique(ds: DisaggregatedSet) -> Errors:
    """``listType=map``, ``listMapKey=name``: a repeated key is a Duplicate at the later item."""
    seen: set[str] = set()
    errs: Errors = []
    for i, role in enumerate(ds.spec.roles):
        if role.name in seen:
            errs += err(
                role_path(i),
                f"Duplicate value: {json.dumps({'name': role.name}, separators=(',', ':'))}",
                kind="Duplicate",
            )
        seen.add(role.name)
    return errs


def embedded_spec_schema(ds: DisaggregatedSet) -> Errors:
    """The embedded LWS spec's schema checks the LWS type cannot see: ``""`` for an enum,
    ``replicas`` bounds, ``networkConfig`` without ``subdomainPolicy``."""
    errs: Errors = []
    for i, role in enumerate(ds.spec.roles):
        base = role_path(i)
        for rel, supported in role.empty_enum_paths():
            values = ", ".join(json.dumps(v) for v in supported)
            errs += err(f"{base}.{rel}", f'Unsupported value: "": supported values: {values}', "", "NotSupported")
        path, n = f"{base}.spec.replicas", role.spec.replicas
        if n < 0:
            errs += err(path, f"{path} in body should be greater than or equal to 0", n)
        elif n > MAX_ROLE_REPLICAS:
            errs += err(path, f"{path} in body should be less than or equal to {MAX_ROLE_REPLICAS}", n)
        if role.spec.network_config.subdomain_policy_was_nil:
            errs += err(f"{base}.spec.networkConfig.subdomainPolicy", "Required value", kind="Required")
    return errs


def slices_bounds(ds: DisaggregatedSet) -> Errors:
    """``slices``: ``minimum 1``, ``maximum 100``."""
    n = ds.spec.slices
    if n < MIN_SLICES:
        return err(SLICES, f"{SLICES} in body should be greater than or equal to {MIN_SLICES}", n)
    if n > MAX_SLICES:
        return err(SLICES, f"{SLICES} in body should be less than or equal to {MAX_SLICES}", n)
    return []


def replicas_all_or_nothing(ds: DisaggregatedSet) -> Errors:
    """CEL on ``spec``: every non-External role has 0 replicas, or every one has more than 0."""
    static = [r.spec.replicas for r in ds.spec.roles if not r.external]
    if all(n == 0 for n in static) or all(n > 0 for n in static):
        return []
    return err("spec", ALL_OR_NOTHING, "object")


#: schema order: metadata, then spec (roles, slices), then the CEL rule on spec
CRD_RULES = (
    name_required,
    roles_count,
    role_name_schema,
    role_names_unique,
    embedded_spec_schema,
    slices_bounds,
    replicas_all_or_nothing,
)
