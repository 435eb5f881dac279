"""The one ObjectMeta of every API's object (:class:`ObjectMeta`) and apimachinery's rules for it,
with their exact messages: label keys and values, annotation keys and total size, namespace
names (``IsQualifiedName``, ``IsValidLabelValue``, ``IsDNS1123Label``, ``IsDNS1123Subdomain``,
``ValidateLabels``, ``ValidateAnnotations``).

Paths are Kubernetes': a bad label key or value is reported on ``<meta>.labels`` with the key or
value as the invalid value, as the API server does. Non-string keys or values are skipped here
(they are type errors, reported by whoever checks types).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Optional

from pydantic import Field

from pulumi_lws.core.contract.errors import FieldError
from pulumi_lws.core.k8s.model import K8sModel

QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
QUALIFIED_NAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)
LABEL_VALUE_FMT = f"({QUALIFIED_NAME_FMT})?"
LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character"
)
DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + r"(\." + DNS1123_LABEL_FMT + ")*"
DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character"
)
TOTAL_ANNOTATION_SIZE = 256 * 1024

_QUALIFIED = re.compile(f"^{QUALIFIED_NAME_FMT}$")
_LABEL_VALUE = re.compile(f"^{LABEL_VALUE_FMT}$")
_DNS1123_LABEL = re.compile(f"^{DNS1123_LABEL_FMT}$")
_DNS1123_SUBDOMAIN = re.compile(f"^{DNS1123_SUBDOMAIN_FMT}$")


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """apimachinery ``RegexError`` (its double space before ``or`` included)."""
    shown = " or ".join(f"'{e}', " for e in examples)
    return (
        f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"
        if examples
        else f"{msg} (regex used for validation is '{fmt}')"
    )


def max_len_error(n: int) -> str:
    return f"must be no more than {n} characters"


def is_dns1123_subdomain(value: str) -> list[str]:
    errs = [max_len_error(253)] if len(value) > 253 else []
    if not _DNS1123_SUBDOMAIN.match(value):
        errs.append(regex_error(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_dns1123_label(value: str) -> list[str]:
    errs = [max_len_error(63)] if len(value) > 63 else []
    if not _DNS1123_LABEL.match(value):
        errs.append(
            "must not contain dots"
            if _DNS1123_SUBDOMAIN.match(value)
            else regex_error(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, "my-name", "123-abc")
        )
    return errs


def is_qualified_name(value: str) -> list[str]:
    """A label key / annotation key: ``[prefix/]name``, prefix a DNS-1123 subdomain, name ≤ 63."""
    parts, errs = value.split("/"), []
    if len(parts) > 2:
        return [
            "a qualified name "
            + regex_error(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if len(parts) == 2:
        prefix = parts[0]
        errs += (
            ["prefix part must be non-empty"]
            if not prefix
            else [f"prefix part {m}" for m in is_dns1123_subdomain(prefix)]
        )
    name = parts[-1]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + max_len_error(63))
    if not _QUALIFIED.match(name):
        errs.append("name part " + regex_error(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def is_valid_label_value(value: str) -> list[str]:
    errs = [max_len_error(63)] if len(value) > 63 else []
    if not _LABEL_VALUE.match(value):
        errs.append(regex_error(LABEL_VALUE_MSG, LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def validate_labels(labels: Any, path: str) -> list[FieldError]:
    """``ValidateLabels``: every key a qualified name, every value a label value."""
    errs: list[FieldError] = []
    for key, value in labels.items() if isinstance(labels, Mapping) else ():
        if isinstance(key, str):
            errs += [FieldError(path, m, key) for m in is_qualified_name(key)]
        if isinstance(value, str):
            errs += [FieldError(path, m, value) for m in is_valid_label_value(value)]
    return errs


def validate_annotations(annotations: Any, path: str) -> list[FieldError]:
    """``ValidateAnnotations``: keys are qualified names (case-insensitive); 256 KiB in total."""
    if not isinstance(annotations, Mapping):
        return []
    errs = [
        FieldError(path, m, key) for key in annotations if isinstance(key, str) for m in is_qualified_name(key.lower())
    ]
    size = sum(len(str(k).encode()) + len(str(v).encode()) for k, v in annotations.items())
    if size > TOTAL_ANNOTATION_SIZE:
        errs.append(FieldError(path, f"Too long: may not be more than {TOTAL_ANNOTATION_SIZE} bytes", None, "TooLong"))
    return errs


def validate_namespace(namespace: Any, path: str) -> list[FieldError]:
    """``ValidateNamespaceName``: a DNS-1123 label (an empty or missing namespace is "default")."""
    if not isinstance(namespace, str) or not namespace:
        return []
    return [FieldError(path, m, namespace) for m in is_dns1123_label(namespace)]


def validate_meta(meta: Any, path: str, *, namespace: bool = True) -> list[FieldError]:
    """Labels, annotations and (unless ``namespace=False``, as for a pod template, whose namespace
    the API server ignores) the namespace of an ObjectMeta dict at ``path`` (``metadata``)."""
    if not isinstance(meta, Mapping):
        return []
    return (
        (validate_namespace(meta.get("namespace"), f"{path}.namespace") if namespace else [])
        + validate_labels(meta.get("labels"), f"{path}.labels")
        + validate_annotations(meta.get("annotations"), f"{path}.annotations")
    )


class ObjectMeta(K8sModel):
    """The ObjectMeta a manifest carries (LeaderWorkerSet, ModelServing, DisaggregatedSet and a
    DisaggregatedSet role's template); server-set fields are accepted and ignored. Types are
    checked at parse time (labels and annotations map strings to strings); the syntax rules run
    in :meth:`validation_errors`."""

    model_config = K8sModel.model_config | {"extra": "ignore"}

    name: Optional[str] = None  # noqa: UP045  (core.model.wire_path maps Optional, not PEP 604 unions)
    namespace: Optional[str] = None  # noqa: UP045
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)

    def validation_errors(self, path: str = "metadata", *, namespace: bool = True) -> list[FieldError]:
        """apimachinery's checks of this metadata at ``path``: the namespace (a DNS-1123 label;
        skipped with ``namespace=False`` where the API ignores it), label keys and values,
        annotation keys and total size. The name is each API's own rule (DNS-1035 for LWS, ...)."""
        return (
            (validate_namespace(self.namespace, f"{path}.namespace") if namespace else [])
            + validate_labels(self.labels, f"{path}.labels")
            + validate_annotations(self.annotations, f"{path}.annotations")
        )
