"""Upstream's DisaggregatedSet webhook (``pkg/webhooks/disaggregatedset``), rule for rule.

Invariants: create and update run the same checks (upstream has no immutability rule); the
messages, paths and error kinds are upstream's; the order is upstream's (``validate``: per role
rollout strategy then the External checks, then ``spec.slices``, then the generated names; then
``validatePlacement``). Upstream's ``rolloutStrategy.type`` NotSupported check is unreachable
behind the CRD enum (the typed model rejects any other type at parse time) and is not repeated.
The admission warning (External role with ``spec.replicas > 1``) is in :func:`external_replicas_warnings`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pulumi_lws.core.k8s.rules import validate_int_or_percent
from pulumi_lws.core.k8s.scaling import percent_scaling_fails, scaled_value
from pulumi_lws.disaggregatedset import labels as L
from pulumi_lws.disaggregatedset import names as N
from pulumi_lws.disaggregatedset.api.fields import (
    PLACEMENT,
    RUC,
    SLICES,
    Errors,
    err,
    role_path,
)

if TYPE_CHECKING:
    from pulumi_lws.disaggregatedset.api.disaggregatedset import (
        DisaggregatedRole,
        DisaggregatedSet,
    )

PARTITION_FORBIDDEN = (
    "partition is not supported by DisaggregatedSet; rolling updates are managed across roles "
    "by the DisaggregatedSet controller"
)
SLICES_EXTERNAL = "spec.slices > 1 is not supported while any role has scaling.mode: External (alpha restriction)"
TOPOLOGY_REQUIRED = "topology is required when type is not None"


def _surge_unavailable(role: DisaggregatedRole, ruc_path: str) -> Errors:
    """``validateRoleMaxSurgeUnavailable``: skipped when the role has 0 replicas; per-field checks,
    then ``invalid value`` when upstream cannot scale, then the both-zero check."""
    if role.spec.replicas == 0:  # the CRD default (1) makes upstream's nil case unreachable
        return []
    cfg = role.spec.rollout_strategy.rolling_update_configuration
    mu_path, ms_path = f"{ruc_path}.maxUnavailable", f"{ruc_path}.maxSurge"
    errs = validate_int_or_percent(cfg.max_unavailable, mu_path) + validate_int_or_percent(cfg.max_surge, ms_path)
    if errs:
        return errs
    for value, path in ((cfg.max_unavailable, mu_path), (cfg.max_surge, ms_path)):
        if percent_scaling_fails(value):
            return err(path, "invalid value", value)
    mu = scaled_value(cfg.max_unavailable, role.spec.replicas, round_up=False)
    ms = scaled_value(cfg.max_surge, role.spec.replicas, round_up=True)
    if mu == 0 and ms == 0:
        return err(mu_path, "must not be 0 when `maxSurge` is 0", cfg.max_unavailable)
    return []


def role_rollout_strategy(ds: DisaggregatedSet, i: int, role: DisaggregatedRole) -> Errors:
    """``validateRoleRolloutStrategy``: only when ``rollingUpdateConfiguration`` is written."""
    if not role.rolling_update_config_given:
        return []
    ruc_path = f"{role_path(i)}.{RUC}"
    errs: Errors = []
    if role.spec.rollout_strategy.rolling_update_configuration.partition != 0:
        errs += err(f"{ruc_path}.partition", PARTITION_FORBIDDEN, kind="Forbidden")
    return errs + _surge_unavailable(role, ruc_path)


def role_scaler_name(ds: DisaggregatedSet, i: int, role: DisaggregatedRole) -> Errors:
    """External: the scaler ``<ds>-<role>`` must fit 253 characters."""
    name = N.scaler(ds.name, role.name)
    if role.external and len(name) > N.SCALER_NAME_MAX:
        return err(f"{role_path(i)}.name", f'would produce scaler name "{name}" exceeding 253 characters', role.name)
    return []


def roles_rules(ds: DisaggregatedSet) -> Errors:
    errs: Errors = []
    for i, role in enumerate(ds.spec.roles):
        errs += role_rollout_strategy(ds, i, role) + role_scaler_name(ds, i, role)
    return errs


def slices_with_external(ds: DisaggregatedSet) -> Errors:
    if ds.spec.slices > 1 and any(r.external for r in ds.spec.roles):
        return err(SLICES, SLICES_EXTERNAL, kind="Forbidden")
    return []


def generated_service_names(ds: DisaggregatedSet) -> Errors:
    """``validateGeneratedNames``: ``<ds>-<slice>-<rev8>-<role>-prv`` with the worst-case slice
    index must be a DNS-1035 label length (63)."""
    errs: Errors = []
    for i, role in enumerate(ds.spec.roles):
        n = N.service_name_length(ds.name, role.name, ds.spec.slices)
        if n > N.DNS1035_MAX:
            errs += err(
                f"{role_path(i)}.name",
                f"the generated service name ({n} chars) would exceed the DNS-1035 limit of {N.DNS1035_MAX} "
                f"characters; reduce the DisaggregatedSet name and/or role name (combined limit: "
                f"{N.combined_name_limit(ds.spec.slices)} characters)",
                role.name,
            )
    return errs


def _annotations(template: object) -> dict[str, Any]:
    meta = template.get("metadata") if isinstance(template, dict) else None
    ann = meta.get("annotations") if isinstance(meta, dict) else None
    return ann if isinstance(ann, dict) else {}


def _exclusive_key(role: DisaggregatedRole) -> str | None:
    """``roleExclusiveTopologyAnnotation``: the first key found (key order outer, then role
    metadata, leader template, worker template)."""
    lwt = role.spec.leader_worker_template
    for key in L.EXCLUSIVE_TOPOLOGY_KEYS:
        if (
            key in role.metadata.annotations
            or key in _annotations(lwt.worker_template)
            or (lwt.leader_template is not None and key in _annotations(lwt.leader_template))
        ):
            return key
    return None


def placement(ds: DisaggregatedSet) -> Errors:
    """``validatePlacement``: a non-None type needs ``topology`` and excludes the LWS
    exclusive-topology annotations on every role."""
    pp = ds.spec.placement_policy
    if pp is None or pp.type == "None":
        return []
    errs: Errors = []
    if not pp.topology:
        errs += err(f"{PLACEMENT}.topology", f"Required value: {TOPOLOGY_REQUIRED}", kind="Required")
    for i, role in enumerate(ds.spec.roles):
        key = _exclusive_key(role)
        if key is not None:
            errs += err(
                role_path(i),
                f'the "{key}" annotation must not be combined with a non-None spec.placementPolicy.type ({pp.type})',
                kind="Forbidden",
            )
    return errs


WEBHOOK_RULES = (roles_rules, slices_with_external, generated_service_names, placement)


def external_replicas_warnings(ds: DisaggregatedSet) -> list[str]:
    """Upstream's admission warning for an External role whose ``spec.replicas`` is above 1."""
    return [
        f'role "{r.name}" sets scaling.mode: External and spec.replicas: {r.spec.replicas} — spec.replicas is '
        f'ignored; drive replicas via DisaggregatedSetRoleScaler "{N.scaler(ds.name, r.name)}" instead'
        for r in ds.spec.roles
        if r.external and r.spec.replicas > 1
    ]
