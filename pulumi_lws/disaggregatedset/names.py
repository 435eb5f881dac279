"""Every name a DisaggregatedSet derives, in one place (upstream spellings), and their budgets.

* child LWS ``<ds>-<slice>-<rev8>-<role>`` (upstream ``GenerateName``); legacy (pre-slices) child
  ``<ds>-<rev8>-<role>`` (``GenerateLegacyName``, adopted as slice 0);
* headless Service ``<lws>-prv`` per child;
* DisaggregatedSetRoleScaler ``<ds>-<role>`` (External roles);
* ``app`` label ``<ds>-<slice>-<role>``.

Budgets: upstream's webhook bounds the Service name at the DNS-1035 63 characters with the
worst-case slice index (``slices - 1``): ``len(ds) + 3 + sliceDigits + 8 + len(role) + 4 <= 63``
(combined ``len(ds) + len(role)`` limit 47 for up to 10 slices, 46 above). pulumi-lws also checks
the child LWS name against the LeaderWorkerSet name budgets (issue #410), in
:mod:`pulumi_lws.disaggregatedset.api.name_rules`.
"""

from __future__ import annotations

DNS1035_MAX = 63
REVISION_LEN = 8
SERVICE_SUFFIX = "-prv"
SEPARATORS = 3  # "-" between ds, slice, revision, role
SCALER_NAME_MAX = 253
#: a revision of the right length, for budget checks made before the revision is known
PLACEHOLDER_REVISION = "0" * REVISION_LEN


def child_lws(ds: str, slice_index: int, rev8: str, role: str) -> str:
    return f"{ds}-{slice_index}-{rev8}-{role}"


def legacy_child_lws(ds: str, rev8: str, role: str) -> str:
    return f"{ds}-{rev8}-{role}"


def service(lws: str) -> str:
    return f"{lws}{SERVICE_SUFFIX}"


def scaler(ds: str, role: str) -> str:
    return f"{ds}-{role}"


def app_label(ds: str, slice_index: int, role: str) -> str:
    return f"{ds}-{slice_index}-{role}"


def slice_digits(slices: int) -> int:
    """Digits of the largest slice index (``slices - 1``, at least 0)."""
    return len(str(max(slices - 1, 0)))


def service_name_length(ds: str, role: str, slices: int) -> int:
    """Length of the longest generated Service name (upstream ``validateGeneratedNames``)."""
    return len(ds) + SEPARATORS + slice_digits(slices) + REVISION_LEN + len(role) + len(SERVICE_SUFFIX)


def combined_name_limit(slices: int) -> int:
    """The most characters ``len(ds) + len(role)`` may take (47 for <= 10 slices, 46 above)."""
    return DNS1035_MAX - SEPARATORS - slice_digits(slices) - REVISION_LEN - len(SERVICE_SUFFIX)
