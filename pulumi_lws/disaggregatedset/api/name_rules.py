"""pulumi-lws's generated-name checks (beyond upstream's Service-name budget).

Invariants: every child LWS ``<ds>-<slice>-<rev8>-<role>`` is checked with the worst-case slice
index (``slices - 1``) and an 8-character revision against the LeaderWorkerSet rules a child must
pass: a DNS-1035 label (a DisaggregatedSet name may be any DNS-1123 subdomain, a child LWS may
not) and the LWS name budgets of the role's own spec (``leader pods' controller-revision-hash``:
52 for size 1; ``len + 1 + digits(replicas - 1) + 11 <= 63`` for size > 1; Hash mode 54/43;
reference §7.4, issue #410). The role's ``spec.replicas`` stands for the child's replicas (a
child never scales above its role's target; an External role's scaler value is not known here).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pulumi_lws.core.k8s.rules import DNS1035_MSG, DNS1035_RE
from pulumi_lws.disaggregatedset import names as N
from pulumi_lws.disaggregatedset.api.fields import Errors, err, role_path
from pulumi_lws.lws.api.validation import name_fits_length_budget

if TYPE_CHECKING:
    from pulumi_lws.disaggregatedset.api.disaggregatedset import DisaggregatedSet


def metadata_is_valid(ds: DisaggregatedSet) -> Errors:
    """The DisaggregatedSet's namespace, label keys/values and annotation keys (apimachinery)."""
    return ds.metadata.validation_errors("metadata")


def _worst_child(ds: DisaggregatedSet, role_name: str) -> str:
    return N.child_lws(ds.name, max(ds.spec.slices - 1, 0), N.PLACEHOLDER_REVISION, role_name)


def child_names_are_dns1035(ds: DisaggregatedSet) -> Errors:
    """A child LWS name starts with the DisaggregatedSet name, so that name must start with a letter
    and hold only ``[-a-z0-9]`` (the role part always fits the pattern)."""
    if not ds.name or DNS1035_RE.match(_worst_child(ds, "r")):  # the role part is checked at the role
        return []
    return err(
        "metadata.name",
        f"the generated LeaderWorkerSet names '{ds.name}-<slice>-<revision>-<role>' must be "
        f"DNS-1035 labels: {DNS1035_MSG}",
        ds.name,
    )


def child_names_fit_lws_budgets(ds: DisaggregatedSet) -> Errors:
    """Each role's worst-case child LWS name under that child's LWS name budget."""
    errs: Errors = []
    if not ds.name:
        return errs
    for i, role in enumerate(ds.spec.roles):
        child = _worst_child(ds, role.name)
        for e in name_fits_length_budget(ds.role_spec_as_lws(role, name=child)):
            errs += err(
                f"{role_path(i)}.name",
                f"the generated LeaderWorkerSet name '<ds>-<slice>-<revision>-<role>' "
                f"(worst case '{child}', {len(child)} characters) does not fit: {e.message}",
                role.name,
            )
    return errs


NAME_RULES = (metadata_is_valid, child_names_are_dns1035, child_names_fit_lws_budgets)
