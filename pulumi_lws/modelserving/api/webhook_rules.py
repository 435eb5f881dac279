"""Kthena's ModelServing webhook (``validator.go``, PR #1626 semantics), one function per validator.

Invariants: each function returns upstream's ``field.Error``s for one validator, with upstream's
exact path, message and kind, in upstream's order within the validator; they never raise and
never mutate the model. Go map iteration (``gangPolicy.minRoleReplicas``) is replaced by the
manifest's key order, so the output is deterministic. The object reaching them carries the CRD
defaults (replicas, role replicas and maxUnavailable are never nil), as in a cluster.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pulumi_lws.core.k8s.rules import DNS1035_MSG, DNS1035_RE
from pulumi_lws.modelserving.api.fields import (
    BOTH_ZERO,
    MIN_ROLE_REPLICAS,
    ROLES,
    RUC,
    Errors,
    err,
    role_path,
    scale,
    scaled_or,
    validate_int_or_percent,
)

if TYPE_CHECKING:
    from pulumi_lws.modelserving.api.modelserving import ModelServing

ROLE_NAME_MSG = (
    "role name must be a valid DNS-1035 label (lowercase alphanumeric characters or '-', must start with a letter): "
)
WORKER_TEMPLATE_REQUIRED = "Required value: workerTemplate is required when workerReplicas is greater than 0"


def dns1035_errors(name: str) -> list[str]:
    """apimachinery ``IsDNS1035Label`` messages: length first, then the regex."""
    out = []
    if len(name) > 63:
        out.append("must be no more than 63 characters")
    if not DNS1035_RE.fullmatch(name):
        out.append(DNS1035_MSG)
    return out


def _role_rolling(ms: ModelServing) -> bool:
    rs = ms.spec.rollout_strategy
    return rs is not None and rs.type == "RoleRollingUpdate"


def generated_name_length(ms: ModelServing) -> Errors:
    """Rule 1: ``<ms>-<replicas>-<role>-<roleReplicas>-<workerReplicas>`` is a DNS-1035 label, per role."""
    errs: Errors = []
    for role in ms.spec.template.roles:
        probe = f"{ms.name}-{ms.replicas}-{role.name}-{role.replicas}-{role.worker_replicas}"
        problems = dns1035_errors(probe)
        if problems:
            errs += err("metadata.name", f"invalid name: {'; '.join(problems)}", ms.name)
    return errs


def role_names(ms: ModelServing) -> Errors:
    """Rule 2: every role name is a DNS-1035 label."""
    errs: Errors = []
    for i, role in enumerate(ms.spec.template.roles):
        problems = dns1035_errors(role.name)
        if problems:
            errs += err(f"{role_path(i)}.name", ROLE_NAME_MSG + "; ".join(problems), role.name)
    return errs


def _image_problem(image: Any) -> str | None:
    if not isinstance(image, str) or image == "":
        return None  # an empty image is accepted (upstream skips it)
    if image.strip() == "":
        return "image cannot be empty or whitespace only"
    if " " in image:
        return "image cannot contain spaces"
    return None


def _containers(template: Any) -> list[Any]:
    spec = template.get("spec") if isinstance(template, dict) else None
    containers = spec.get("containers") if isinstance(spec, dict) else None
    return containers if isinstance(containers, list) else []


def worker_images(ms: ModelServing) -> Errors:
    """Rule 3: entry then worker container images have no spaces and are not whitespace-only."""
    errs: Errors = []
    for i, role in enumerate(ms.spec.template.roles):
        for field, template in (("entryTemplate", role.entry_template), ("workerTemplate", role.worker_template)):
            for j, c in enumerate(_containers(template)):
                image = c.get("image") if isinstance(c, dict) else None
                problem = _image_problem(image)
                if problem:
                    errs += err(
                        f"{role_path(i)}.{field}.spec.containers[{j}].image",
                        f"invalid container image reference: {problem}",
                        image,
                    )
    return errs


def replicas(ms: ModelServing) -> Errors:
    """Rules 4-6: ``spec.replicas >= 0``; at least one role (stops here); every role's replicas ``>= 0``."""
    errs: Errors = []
    if ms.replicas < 0:
        errs += err("spec.replicas", "replicas must be a non-negative integer", ms.replicas)
    if not ms.spec.template.roles:
        return errs + err(ROLES, "roles must be specified", [])
    for i, role in enumerate(ms.spec.template.roles):
        if role.replicas < 0:
            errs += err(f"{role_path(i)}.replicas", "role replicas must be a non-negative integer", role.replicas)
    return errs


def rolling_update_configuration(ms: ModelServing) -> Errors:
    """Rules 7-10a: the ServingGroup budgets (Forbidden under RoleRollingUpdate; formats; scaling;
    not both 0 while ``replicas > partition``; an unscalable budget skips the both-zero check and an
    unscalable partition counts as 0, as upstream)."""
    rs = ms.spec.rollout_strategy
    if rs is None or rs.rolling_update_configuration is None:
        return []
    if rs.type == "RoleRollingUpdate":
        return err(
            RUC,
            "rollingUpdateConfiguration is only valid when rolloutStrategy.type is ServingGroupRollingUpdate",
            kind="Forbidden",
        )
    cfg, n = rs.rolling_update_configuration, ms.replicas
    errs = validate_int_or_percent(cfg.max_unavailable, f"{RUC}.maxUnavailable")
    if cfg.max_surge is not None:
        errs += validate_int_or_percent(cfg.max_surge, f"{RUC}.maxSurge")
    if cfg.partition is not None:
        errs += validate_int_or_percent(cfg.partition, f"{RUC}.partition")
    mu, mu_err = scale(cfg.max_unavailable, n, round_up=False)
    if mu is None:
        errs += err(f"{RUC}.maxUnavailable", f"invalid maxUnavailable: {mu_err}", cfg.max_unavailable)
    ms_, ms_err = (0, "") if cfg.max_surge is None else scale(cfg.max_surge, n, round_up=True)
    if ms_ is None:
        errs += err(f"{RUC}.maxSurge", f"invalid maxSurge: {ms_err}", cfg.max_surge)
    if mu is not None and ms_ is not None and n > scaled_or(cfg.partition, n, True, 0) and mu == 0 and ms_ == 0:
        errs += err(RUC, BOTH_ZERO, "")
    return errs


def role_rolling_budgets(ms: ModelServing) -> Errors:
    """Rules 8, 9, 11-14a for every role: maxSurge then partition (format; Forbidden unless
    RoleRollingUpdate); under RoleRollingUpdate maxUnavailable (format, scaling, ``<= replicas``),
    maxSurge scaling, and not both 0 while ``replicas > partition``."""
    errs: Errors = []
    role_ru = _role_rolling(ms)
    for i, role in enumerate(ms.spec.template.roles):
        path = role_path(i)
        for field, value in (("maxSurge", role.max_surge), ("partition", role.partition)):
            if value is not None:
                errs += validate_int_or_percent(value, f"{path}.{field}")
                if not role_ru:
                    errs += err(
                        f"{path}.{field}",
                        f"{field} is only valid when rolloutStrategy.type is RoleRollingUpdate",
                        kind="Forbidden",
                    )
        if not role_ru:
            continue
        n, valid, mu_value, surge_value = role.replicas, True, 1, 0
        errs += validate_int_or_percent(role.max_unavailable, f"{path}.maxUnavailable")
        mu, mu_err = scale(role.max_unavailable, n, round_up=False)
        if mu is None:
            valid = False
            errs += err(f"{path}.maxUnavailable", f"invalid maxUnavailable: {mu_err}", role.max_unavailable)
        elif mu > n:
            errs += err(
                f"{path}.maxUnavailable", f"maxUnavailable cannot be greater than replicas ({n})", role.max_unavailable
            )
        else:
            mu_value = mu
        if role.max_surge is not None:
            surge, surge_err = scale(role.max_surge, n, round_up=True)
            if surge is None:
                valid = False
                errs += err(f"{path}.maxSurge", f"invalid maxSurge: {surge_err}", role.max_surge)
            else:
                surge_value = surge
        if valid and n > scaled_or(role.partition, n, True, 0) and mu_value == 0 and surge_value == 0:
            errs += err(path, BOTH_ZERO, "")
    return errs


def gang_policy(ms: ModelServing) -> Errors:
    """Rules 15-17: every ``minRoleReplicas`` key names a role; ``0 <= min <= role replicas``."""
    gp = ms.spec.template.gang_policy
    if gp is None or gp.min_role_replicas is None:
        return []
    by_name = {r.name: r for r in ms.spec.template.roles}
    errs: Errors = []
    for name, minimum in gp.min_role_replicas.items():
        path = f"{MIN_ROLE_REPLICAS}[{name}]"
        role = by_name.get(name)
        if role is None:
            errs += err(path, f"role {name} does not exist in template.roles", name)
            continue
        if minimum > role.replicas:
            errs += err(
                path, f"minRoleReplicas ({minimum}) for role {name} cannot exceed replicas ({role.replicas})", minimum
            )
        if minimum < 0:
            errs += err(path, f"minRoleReplicas for role {name} must be non-negative", minimum)
    return errs


def worker_replicas(ms: ModelServing) -> Errors:
    """Rules 18-19: ``workerReplicas >= 0``; a ``workerTemplate`` when ``workerReplicas > 0``."""
    errs: Errors = []
    for i, role in enumerate(ms.spec.template.roles):
        if role.worker_replicas < 0:
            errs += err(
                f"{role_path(i)}.workerReplicas", "workerReplicas must be a non-negative integer", role.worker_replicas
            )
        if role.worker_replicas > 0 and role.worker_template is None:
            errs += err(f"{role_path(i)}.workerTemplate", WORKER_TEMPLATE_REQUIRED, kind="Required")
    return errs


def recovery_policy_and_rollout_strategy(ms: ModelServing) -> Errors:
    """Rule 20: (ServingGroupRecreate, RoleRollingUpdate) is the one rejected pair, after defaults."""
    policy, kind = ms.spec.recovery_policy, ms.strategy
    if not (policy == "ServingGroupRecreate" and kind == "RoleRollingUpdate"):
        return []
    # upstream points at spec.recoveryPolicy when rolloutStrategy is nil (unreachable: nil means
    # ServingGroupRollingUpdate); kept for fidelity
    path, value = (
        ("spec.rolloutStrategy.type", kind) if ms.spec.rollout_strategy is not None else ("spec.recoveryPolicy", policy)
    )
    return err(
        path,
        "incompatible recoveryPolicy and rolloutStrategy.type after applying defaults: "
        f"recoveryPolicy={policy}, rolloutStrategy.type={kind}; valid pairs: "
        "(ServingGroupRecreate,ServingGroupRollingUpdate) or (RoleRecreate,RoleRollingUpdate)",
        value,
    )


#: upstream ``validateModelServing`` order
WEBHOOK_RULES = (
    generated_name_length,
    role_names,
    worker_images,
    replicas,
    rolling_update_configuration,
    role_rolling_budgets,
    gang_policy,
    worker_replicas,
    recovery_policy_and_rollout_strategy,
)
