"""ModelServing validation: the CRD schema, Kthena's webhook and pulumi-lws's name budgets.

Each rule is a small named function returning ``list[FieldError]`` (modules:
:mod:`.template_rules`, :mod:`.crd_rules`, :mod:`.webhook_rules`, :mod:`.name_rules`).
:data:`CREATE_RULES` run on every validation, in the apiserver's order: the CRD schema first
(the embedded ObjectMeta and pod templates against Kubernetes 1.35, then the CRD's own bounds),
then the webhook's validators in upstream order, then pulumi-lws's fleet size and name budgets; :data:`UPDATE_RULES`
(the CRD's CEL transition rules) run when the previous object ``old`` is given.
:func:`validate_modelserving` returns every problem at once; it never raises and never mutates
its input. The rule table with messages and paths is in docs/modelserving.md ("API").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from pulumi_lws.core.contract.errors import FieldError
from pulumi_lws.modelserving.api.crd_rules import CRD_RULES, CRD_UPDATE_RULES
from pulumi_lws.modelserving.api.name_rules import fleet_fits_int32, name_budgets
from pulumi_lws.modelserving.api.template_rules import STRUCTURE_RULES
from pulumi_lws.modelserving.api.webhook_rules import WEBHOOK_RULES

if TYPE_CHECKING:  # annotations only: the model runs these rules, so it imports this module
    from pulumi_lws.modelserving.api.modelserving import ModelServing

CreateRule = Callable[["ModelServing"], list[FieldError]]
UpdateRule = Callable[["ModelServing", "ModelServing"], list[FieldError]]

CREATE_RULES: tuple[CreateRule, ...] = (*STRUCTURE_RULES, *CRD_RULES, *WEBHOOK_RULES, fleet_fits_int32, name_budgets)
UPDATE_RULES: tuple[UpdateRule, ...] = CRD_UPDATE_RULES


def validate_modelserving(ms: ModelServing, old: ModelServing | None = None) -> list[FieldError]:
    """Every problem with ``ms`` (and, given ``old``, with the update from ``old``), in rule order."""
    errors: list[FieldError] = []
    for rule in CREATE_RULES:
        errors += rule(ms)
    if old is not None:
        for update_rule in UPDATE_RULES:
            errors += update_rule(ms, old)
    return errors
