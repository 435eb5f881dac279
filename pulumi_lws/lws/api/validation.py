"""LeaderWorkerSet validation: upstream webhook rules (exact messages and paths) + name budgets.

Each rule is a small named function returning ``list[FieldError]``. :data:`CREATE_RULES` run on
every validation (upstream ``generalValidate`` runs on create and update); :data:`UPDATE_RULES`
run only when the previous object ``old`` is given; :data:`STRUCTURE_RULES` (the embedded pod
templates and ObjectMeta against Kubernetes 1.35) run before both.
:func:`validate_leaderworkerset` returns every problem in rule order; it never raises and never
mutates its input. Paths are the camelCase wire paths upstream emits (including upstream's
capital ``SubGroupPolicy`` in the subgroup path). The rule table with sources is in ``docs/api.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pulumi_lws.core.contract.errors import FieldError
from pulumi_lws.core.k8s.rules import validate_dns1035, validate_int_or_percent
from pulumi_lws.core.k8s.scaling import percent_scaling_fails, scaled_value
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.fields import (  # noqa: F401  (constants re-exported)
    IMMUTABLE,
    LWT,
    MAX_INT32,
    MAX_REPLICAS,
    MS_PATH,
    MU_PATH,
    PARTITION_PATH,
    RUC,
    SCHED,
    SGS_PATH,
    UPDATE_ORDER_ANNOTATION,
    Errors,
)
from pulumi_lws.lws.api.fields import (
    err as _err,
)
from pulumi_lws.lws.api.per_pod_rules import per_pod_values_valid
from pulumi_lws.lws.api.scheduling_rules import (
    priority_class_frozen,
    scheduling_fields_immutable,
    scheduling_level_immutable,
    scheduling_min_count_is_membership,
    scheduling_min_group_count_unavailable,
    scheduling_no_user_scheduling_group,
    scheduling_one_level,
    scheduling_presence_immutable,
    scheduling_rejects_exclusive_topology,
    scheduling_rejects_leader_ready,
    scheduling_resource_claims_referenced,
    scheduling_role_needs_size_two,
    scheduling_same_priority_class,
)
from pulumi_lws.lws.api.template_rules import metadata_is_valid, pod_templates_are_valid, worker_template_required

if TYPE_CHECKING:  # annotations only: the model runs these rules, so it imports this module
    from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet, RollingUpdateConfiguration

CreateRule = Callable[["LeaderWorkerSet"], Errors]
UpdateRule = Callable[["LeaderWorkerSet", "LeaderWorkerSet"], Errors]


def _ruc(lws: LeaderWorkerSet) -> RollingUpdateConfiguration:
    return lws.spec.rollout_strategy.rolling_update_configuration


# ---- table 5.1, rules 1-16 ------------------------------------------------------------------
def name_is_dns1035_label(lws: LeaderWorkerSet) -> Errors:
    """Rule 1: the name is the headless Service name, so it must be a DNS-1035 label."""
    if not lws.metadata.name:
        return _err("metadata.name", "Required value", kind="Required")
    return validate_dns1035(lws.metadata.name, "metadata.name")


def replicas_not_negative(lws: LeaderWorkerSet) -> Errors:
    """Rule 2."""
    return _err("spec.replicas", "replicas must be equal or greater than 0", lws.replicas) if lws.replicas < 0 else []


def replicas_at_most_max(lws: LeaderWorkerSet) -> Errors:
    """Rule 3."""
    if lws.replicas > MAX_REPLICAS:
        return _err("spec.replicas", f"replicas must be equal or less than {MAX_REPLICAS}", lws.replicas)
    return []


def size_at_least_one(lws: LeaderWorkerSet) -> Errors:
    """Rule 4."""
    return _err(f"{LWT}.size", "size must be equal or greater than 1", lws.size) if lws.size < 1 else []


def replicas_times_size_fits_int32(lws: LeaderWorkerSet) -> Errors:
    """Rule 5."""
    if lws.replicas * lws.size > MAX_INT32:
        return _err(
            "spec.replicas", f"the product of replicas and worker replicas must not exceed {MAX_INT32}", lws.replicas
        )
    return []


def _budget_errors(value: Any, path: str) -> Errors:
    errs = validate_int_or_percent(value, path)  # rules 6-8 (and 9 for a non int/str value)
    if percent_scaling_fails(value) and not any(e.message == "invalid value" for e in errs):
        errs.append(FieldError(path, "invalid value", value))  # rule 9: upstream scales it too
    return errs


def max_unavailable_is_int_or_percent(lws: LeaderWorkerSet) -> Errors:
    """Rules 6-9 for maxUnavailable."""
    return _budget_errors(_ruc(lws).max_unavailable, MU_PATH)


def max_surge_is_int_or_percent(lws: LeaderWorkerSet) -> Errors:
    """Rules 6-9 for maxSurge."""
    return _budget_errors(_ruc(lws).max_surge, MS_PATH)


def partition_not_negative(lws: LeaderWorkerSet) -> Errors:
    """Rule 10."""
    p = _ruc(lws).partition
    return _err(PARTITION_PATH, "must be greater than or equal to 0", p) if p < 0 else []


def budgets_not_both_zero(lws: LeaderWorkerSet) -> Errors:
    """Rule 11: MU (floor) and MS (ceil) scaled against replicas are not both 0; skipped at 0 replicas."""
    cfg = _ruc(lws)
    if lws.replicas <= 0 or _budget_errors(cfg.max_unavailable, MU_PATH) or _budget_errors(cfg.max_surge, MS_PATH):
        return []
    mu = scaled_value(cfg.max_unavailable, lws.replicas, round_up=False)
    ms = scaled_value(cfg.max_surge, lws.replicas, round_up=True)
    return _err(MU_PATH, "must not be 0 when `maxSurge` is 0", cfg.max_unavailable) if mu == 0 and ms == 0 else []


def subgroup_size_valid(lws: LeaderWorkerSet) -> Errors:
    """Rules 12-15 (upstream checks all of them on every create and update)."""
    sgp = lws.spec.leader_worker_template.sub_group_policy
    if sgp is None:
        return []
    sgs, size = sgp.sub_group_size, lws.size
    if sgs is None:
        return _err(SGS_PATH, "Required value", kind="Required")  # pulumi-lws: upstream would crash
    if sgs < 1:
        return _err(SGS_PATH, "subGroupSize must be equal or greater than 1", sgs)
    errs: Errors = []
    if size % sgs != 0 and (size - 1) % sgs != 0:
        errs += _err(SGS_PATH, "size or size - 1 must be divisible by subGroupSize", sgs)
    if sgs > size:
        errs += _err(SGS_PATH, "subGroupSize cannot be larger than size", sgs)
    if sgp.sub_group_policy_type == "LeaderExcluded" and (size - 1) % sgs != 0:
        errs += _err(SGS_PATH, "size-1 must be divisible by subGroupSize when using LeaderExcluded", sgs)
    return errs


def subgroup_exclusive_topology_needs_policy(lws: LeaderWorkerSet) -> Errors:
    """Rule 16."""
    topo = lws.metadata.annotations.get(L.SUBGROUP_EXCLUSIVE_TOPOLOGY)
    if topo is not None and lws.spec.leader_worker_template.sub_group_policy is None:
        return _err(
            f"metadata.annotations[{L.SUBGROUP_EXCLUSIVE_TOPOLOGY}]",
            "cannot have subgroup-exclusive-topology without subGroupSize set",
            topo,
        )
    return []


# ---- §5.5 Hash mode and group replacement ---------------------------------------------------
def hash_rejects_partition(lws: LeaderWorkerSet) -> Errors:
    if lws.spec.group_identity == "Hash" and _ruc(lws).partition != 0:
        return _err(
            "spec.groupIdentity",
            "rollingUpdateConfiguration.partition is not supported with groupIdentity Hash",
            "Hash",
        )
    return []


def hash_rejects_volume_claim_templates(lws: LeaderWorkerSet) -> Errors:
    if lws.spec.group_identity == "Hash" and lws.spec.leader_worker_template.volume_claim_templates:
        return _err("spec.groupIdentity", "volumeClaimTemplates are not supported with groupIdentity Hash", "Hash")
    return []


def immediate_replacement_requires_hash(lws: LeaderWorkerSet) -> Errors:
    if lws.spec.group_replacement_policy == "Immediate" and lws.spec.group_identity != "Hash":
        return _err(
            "spec.groupReplacementPolicy",
            "groupReplacementPolicy Immediate is only supported with groupIdentity Hash",
            "Immediate",
        )
    return []


# ---- group restart budget and backoff (pulumi-lws messages) ---------------------------------
def max_group_restarts_valid(lws: LeaderWorkerSet) -> Errors:
    lwt = lws.spec.leader_worker_template
    n, path = lwt.max_group_restarts, f"{LWT}.maxGroupRestarts"
    if n is None:
        return []
    if n < 0:
        return _err(path, "must be greater than or equal to 0", n)
    if lwt.restart_policy == "None":
        return _err(path, "maxGroupRestarts is not supported with restartPolicy None", n)
    return []


def restart_backoff_valid(lws: LeaderWorkerSet) -> Errors:
    rb, path = lws.spec.leader_worker_template.restart_backoff, f"{LWT}.restartBackoff"
    if rb is None:
        return []
    errs: Errors = []
    for field, value in (("baseSeconds", rb.base_seconds), ("capSeconds", rb.cap_seconds)):
        if value < 1:
            errs += _err(f"{path}.{field}", "must be greater than or equal to 1", value)
    if not errs and rb.base_seconds > rb.cap_seconds:
        errs += _err(
            f"{path}.capSeconds", f"must be greater than or equal to baseSeconds ({rb.base_seconds})", rb.cap_seconds
        )
    return errs


# ---- name-length budgets (pulumi-lws; upstream issue #410, reference §7.4) -------------------
def _budget(lws: LeaderWorkerSet) -> tuple[int, str]:
    """(max name length, why) for the binding naming constraint of this spec."""
    if lws.spec.group_identity == "Hash":
        if lws.size == 1:
            return 54, "the leader host name '<name>-<8-char group key>' must be a 63-character DNS label"
        return 43, (
            "worker StatefulSets are named after the leader host name '<name>-<8-char group key>' "
            "and their pods' controller-revision-hash label '<host name>-<hash>' must fit 63 characters"
        )
    if lws.size > 1:
        digits = len(str(max(lws.replicas - 1, 0)))
        return 63 - 12 - digits, (
            f"worker pods get the label controller-revision-hash '<name>-<group index>-<hash>' "
            f"(len(name) + 1 + {digits} + 11 characters), which must fit 63 characters"
        )
    return (
        52,
        "leader pods get the label controller-revision-hash '<name>-<hash>' (len(name) + 11 characters), which must fit 63 characters",
    )


def name_fits_length_budget(lws: LeaderWorkerSet) -> Errors:
    """Derived names must stay valid labels/DNS names (upstream only checks 63; issue #410)."""
    name = lws.metadata.name or ""
    limit, why = _budget(lws)
    if not name or len(name) <= limit:
        return []
    mode = lws.spec.group_identity
    return _err(
        "metadata.name",
        f"name is {len(name)} characters but at most {limit} are allowed in {mode} mode "
        f"with size {lws.size} and {lws.replicas} replicas: {why} (upstream issue #410); "
        f"shorten metadata.name to {limit} characters or fewer",
        name,
    )


# ---- pulumi-lws option annotation -----------------------------------------------------------
def update_order_annotation_valid(lws: LeaderWorkerSet) -> Errors:
    """``pulumi-lws.io/update-order``: ScaleFirst|RolloutFirst; RolloutFirst needs MU > 0 (PR #996)."""
    order = lws.metadata.annotations.get(UPDATE_ORDER_ANNOTATION)
    if order is None:
        return []
    if order not in ("ScaleFirst", "RolloutFirst"):
        return _err(
            f"metadata.annotations[{UPDATE_ORDER_ANNOTATION}]",
            f'Unsupported value: "{order}": supported values: "ScaleFirst", "RolloutFirst"',
            order,
            "NotSupported",
        )
    mu = _ruc(lws).max_unavailable
    if (
        order == "RolloutFirst"
        and lws.replicas > 0
        and not _budget_errors(mu, MU_PATH)
        and scaled_value(mu, lws.replicas, round_up=False) == 0
    ):
        return _err(MU_PATH, "must not be 0 when `updateOrder` is RolloutFirst", mu)
    return []


# ---- update-only rules ----------------------------------------------------------------------
def subgroup_size_immutable(lws: LeaderWorkerSet, old: LeaderWorkerSet) -> Errors:
    """U1-U3: subGroupSize cannot change, be enabled or be removed after creation."""
    new_p, old_p = lws.spec.leader_worker_template.sub_group_policy, old.spec.leader_worker_template.sub_group_policy
    if new_p is not None and old_p is None:
        return _err(SGS_PATH, "cannot enable subGroupSize after the lws is already created", new_p.sub_group_size)
    if new_p is None and old_p is not None:
        return _err(SGS_PATH, "cannot remove subGroupSize after enabled")
    if new_p is not None and old_p is not None and new_p.sub_group_size != old_p.sub_group_size:
        return _err(SGS_PATH, IMMUTABLE, new_p.sub_group_size)
    return []


def subdomain_policy_not_null(lws: LeaderWorkerSet, old: LeaderWorkerSet) -> Errors:
    """U4: an update may not leave networkConfig.subdomainPolicy nil."""
    if lws.spec.network_config.subdomain_policy_was_nil:
        return _err("spec.networkConfig.subdomainPolicy", "cannot set subdomainPolicy as null")
    return []


def group_identity_immutable(lws: LeaderWorkerSet, old: LeaderWorkerSet) -> Errors:
    """``""`` and Ordinal are equal (both parse to Ordinal)."""
    if lws.spec.group_identity != old.spec.group_identity:
        return _err("spec.groupIdentity", "groupIdentity is immutable", lws.spec.group_identity)
    return []


def pod_termination_policy_immutable(lws: LeaderWorkerSet, old: LeaderWorkerSet) -> Errors:
    if lws.spec.pod_termination_policy != old.spec.pod_termination_policy:
        return _err("spec.podTerminationPolicy", IMMUTABLE, lws.spec.pod_termination_policy)
    return []


#: Shape checks of the embedded Kubernetes objects (types at any depth, unknown fields, quantities,
#: label syntax): Kubernetes 1.35's schema and apimachinery's ObjectMeta rules. They run first.
STRUCTURE_RULES: tuple[CreateRule, ...] = (metadata_is_valid, pod_templates_are_valid)
CREATE_RULES: tuple[CreateRule, ...] = (
    name_is_dns1035_label,
    worker_template_required,
    replicas_not_negative,
    replicas_at_most_max,
    size_at_least_one,
    replicas_times_size_fits_int32,
    max_unavailable_is_int_or_percent,
    max_surge_is_int_or_percent,
    partition_not_negative,
    budgets_not_both_zero,
    subgroup_size_valid,
    subgroup_exclusive_topology_needs_policy,
    hash_rejects_partition,
    hash_rejects_volume_claim_templates,
    immediate_replacement_requires_hash,
    max_group_restarts_valid,
    restart_backoff_valid,
    name_fits_length_budget,
    scheduling_one_level,
    scheduling_rejects_leader_ready,
    scheduling_rejects_exclusive_topology,
    scheduling_min_count_is_membership,
    scheduling_min_group_count_unavailable,
    scheduling_role_needs_size_two,
    scheduling_no_user_scheduling_group,
    scheduling_same_priority_class,
    scheduling_resource_claims_referenced,
    update_order_annotation_valid,
    per_pod_values_valid,
)
UPDATE_RULES: tuple[UpdateRule, ...] = (
    subgroup_size_immutable,
    subdomain_policy_not_null,
    group_identity_immutable,
    pod_termination_policy_immutable,
    scheduling_presence_immutable,
    scheduling_level_immutable,
    scheduling_fields_immutable,
    priority_class_frozen,
)


def validate_leaderworkerset(lws: LeaderWorkerSet, old: LeaderWorkerSet | None = None) -> list[FieldError]:
    """Every problem with ``lws`` (and, given ``old``, with the update from ``old``): structure
    first, then the rules in order. Rules that look inside pod templates tolerate any shape (a
    malformed template is reported by the structure rules, never a crash)."""
    errors: list[FieldError] = []
    for rule in STRUCTURE_RULES + CREATE_RULES:
        errors += rule(lws)
    if old is not None:
        for update_rule in UPDATE_RULES:
            errors += update_rule(lws, old)
    return errors
