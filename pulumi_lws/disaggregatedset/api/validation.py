"""DisaggregatedSet validation: CRD schema, upstream's webhook, the embedded LWS specs, name budgets.

Each rule is a small named function returning ``list[FieldError]`` (modules :mod:`.crd_rules`,
:mod:`.webhook_rules`, :mod:`.name_rules`). :func:`validate_disaggregatedset` runs, in order:

1. the CRD schema and CEL rule (apiserver messages);
2. upstream's webhook, rule for rule (exact messages, paths and kinds);
3. **beyond upstream**: each role's embedded LeaderWorkerSet spec under every LWS rule
   (:func:`pulumi_lws.lws.api.validation.validate_leaderworkerset`'s rules) with every path
   prefixed ``spec.roles[i].`` — upstream only finds these when the child LWS is created. The
   rules about the child's *name* are replaced by step 4 (the child name is generated);
4. **beyond upstream**: the generated child LWS name ``<ds>-<slices-1>-<rev8>-<role>`` against the
   LWS DNS-1035 rule and name budgets (issue #410), at ``spec.roles[i].name``.

Steps 3 and 4 never repeat a path steps 1-2 already reported (one source per field: the upstream
message wins). Every problem is returned at once; nothing raises or mutates. ``old`` adds nothing:
upstream has no update-only DisaggregatedSet rule, and a change to a child's revision-covered
fields makes a new child rather than updating one.

Warnings (upstream's admission warnings) are not errors: :func:`disaggregatedset_warnings`
returns them as strings; :meth:`DisaggregatedSet.warnings` exposes them to the shells.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from pulumi_lws.core.contract.errors import FieldError
from pulumi_lws.disaggregatedset.api.crd_rules import CRD_RULES
from pulumi_lws.disaggregatedset.api.fields import Errors, role_path
from pulumi_lws.disaggregatedset.api.name_rules import NAME_RULES
from pulumi_lws.disaggregatedset.api.webhook_rules import (
    WEBHOOK_RULES,
    external_replicas_warnings,
)
from pulumi_lws.lws.api import template_rules as lws_template_rules
from pulumi_lws.lws.api import validation as lws_rules

if TYPE_CHECKING:  # annotations only: the model runs these rules, so it imports this module
    from pulumi_lws.disaggregatedset.api.disaggregatedset import DisaggregatedSet

CreateRule = Callable[["DisaggregatedSet"], list[FieldError]]

#: LWS rules that do not apply to a role's embedded spec: the child's name is generated (checked
#: by :mod:`.name_rules`) and its namespace is the DisaggregatedSet's.
NOT_FOR_CHILDREN = frozenset(
    {lws_rules.name_is_dns1035_label, lws_rules.name_fits_length_budget, lws_template_rules.metadata_is_valid}
)
EMBEDDED_LWS_RULES: tuple[Callable[..., list[FieldError]], ...] = tuple(
    r for r in lws_rules.STRUCTURE_RULES + lws_rules.CREATE_RULES if r not in NOT_FOR_CHILDREN
)


def _prefixed(errors: list[FieldError], prefix: str) -> Errors:
    return [FieldError(f"{prefix}.{e.path}", e.message, e.value, e.kind) for e in errors]


def embedded_lws_specs(ds: DisaggregatedSet) -> Errors:
    """Every LWS rule on every role's metadata + spec, paths prefixed ``spec.roles[i].``."""
    errs: Errors = []
    for i, role in enumerate(ds.spec.roles):
        lws = ds.role_spec_as_lws(role)
        found = role.metadata.validation_errors("metadata", namespace=False)  # the child's is the DS's
        for rule in EMBEDDED_LWS_RULES:
            found += rule(lws)
        errs += _prefixed(found, role_path(i))
    return errs


CREATE_RULES: tuple[CreateRule, ...] = (*CRD_RULES, *WEBHOOK_RULES)


#: pulumi-lws's rules: they never repeat a path the upstream rules reported
def per_pod_values_valid(ds: DisaggregatedSet) -> Errors:
    """The DisaggregatedSet-wide ``pulumi-lws.io/per-pod-values`` (inherited by its Ordinal roles):
    a known mode and policy version, reported at the DisaggregatedSet's own annotations."""
    from pulumi_lws.lws.api.per_pod_rules import modes_valid

    return modes_valid(ds.metadata.annotations)


EXTRA_RULES: tuple[CreateRule, ...] = (per_pod_values_valid, embedded_lws_specs, *NAME_RULES)


def validate_disaggregatedset(ds: DisaggregatedSet, old: DisaggregatedSet | None = None) -> list[FieldError]:
    """Every problem with ``ds``, in rule order (see the module docstring)."""
    errors: list[FieldError] = []
    for rule in CREATE_RULES:
        errors += rule(ds)
    seen = {e.path for e in errors}
    for rule in EXTRA_RULES:
        extra = [e for e in rule(ds) if e.path not in seen]
        errors += extra
        seen |= {e.path for e in extra}
    return errors


def disaggregatedset_warnings(ds: DisaggregatedSet) -> list[str]:
    """Upstream's admission warnings, in upstream's order."""
    return external_replicas_warnings(ds)
