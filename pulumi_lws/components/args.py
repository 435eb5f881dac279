"""Argument plumbing every workload component shares (pure: nothing is registered here).

Pulumi delivers numbers as floats and IntOrString fields from the provider as strings; component
arguments may be snake_case or camelCase. The workload components resolve every ``pulumi.Output``
before building (components/inputs.py); :func:`reject_outputs` guards the pure builders against
one that slipped through.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pulumi_lws.core.contract.errors import FieldError, SpecError
from pulumi_lws.core.contract.facts import ArgumentError, int_or_percent
from pulumi_lws.core.contract.workload import Workload
from pulumi_lws.core.features.control import annotations_of_spec, check_arguments, resolve, with_arguments
from pulumi_lws.core.k8s.resource import load_manifest

__all__ = [
    "Built",
    "apply_fields",
    "base_manifest",
    "build_spec",
    "int_or_percent",
    "reject_outputs",
    "set_path",
    "snake",
    "split_args",
]


def snake(key: str) -> str:
    """``maxUnavailable`` -> ``max_unavailable`` (snake_case keys pass unchanged)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


def reject_outputs(value: Any, kind: str, path: str = "args") -> None:
    """The planner needs concrete values; an unresolved ``pulumi.Output`` cannot be planned."""
    if type(value).__name__ == "Output" and type(value).__module__.startswith("pulumi"):
        raise SpecError(
            kind,
            None,
            [
                FieldError(
                    path,
                    f"must be a plain value known when the program runs "
                    f"(the {kind} spec cannot depend on other resources' outputs)",
                )
            ],
        )
    if isinstance(value, Mapping):
        for k, v in value.items():
            reject_outputs(v, kind, f"{path}.{k}")
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            reject_outputs(v, kind, f"{path}[{i}]")


def set_path(doc: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    node = doc
    for key in path[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = {}
            node[key] = child
        node = child
    node[path[-1]] = value


def base_manifest(source: Any, workload: Workload) -> dict[str, Any]:
    """The manifest dict of a ``manifest`` argument: a model of the API, a dict or YAML text."""
    model = workload.arguments.model
    if model is not None and isinstance(source, model):
        return source.to_wire()  # the API's model (a ManifestResource): its manifest
    if isinstance(source, (str, Mapping)):
        return copy.deepcopy(load_manifest(source, workload.kind))
    raise SpecError(
        workload.kind,
        None,
        [
            FieldError(
                "manifest", f"expected a manifest dict, YAML text or {workload.kind}, got {type(source).__name__}"
            )
        ],
    )


def split_args(args: Any, workload: Workload) -> tuple[dict[str, Any], dict[str, Any]]:
    """(base manifest, field overrides with snake_case keys) from any accepted ``args`` form: a model,
    YAML text, an upstream manifest dict, or plain fields with an optional ``manifest``."""
    kind, model = workload.kind, workload.arguments.model
    if args is None:
        return {}, {}
    if isinstance(args, str) or (model is not None and isinstance(args, model)):
        return base_manifest(args, workload), {}
    if not isinstance(args, Mapping):
        raise SpecError(
            kind, None, [FieldError("args", f"expected a dict, YAML text or {kind}, got {type(args).__name__}")]
        )
    if "spec" in args or "apiVersion" in args or "kind" in args:
        return base_manifest(args, workload), {}
    fields = {snake(k): v for k, v in args.items() if v is not None}
    unknown = sorted(set(fields) - workload.arguments.known)
    if unknown:
        raise SpecError(kind, None, [FieldError(k, "unknown field") for k in unknown])
    base = base_manifest(fields.pop("manifest"), workload) if "manifest" in fields else {}
    return base, fields


def apply_fields(manifest: Mapping[str, Any], fields: Mapping[str, Any], workload: Workload) -> dict[str, Any]:
    """``manifest`` with every plain field set at its path (pod templates are replaced, not
    merged) and every nested object key by key (:class:`~pulumi_lws.core.contract.facts.Nested`)."""
    schema, kind = workload.arguments, workload.kind
    out = copy.deepcopy(dict(manifest))
    out.setdefault("apiVersion", workload.api_version)
    out.setdefault("kind", kind)
    for key, path in schema.fields.items():
        if key in fields:
            set_path(out, path, copy.deepcopy(fields[key]))
    for key, nested in schema.nested.items():
        value = fields.get(key) or {}
        if not isinstance(value, Mapping):
            raise SpecError(kind, None, [FieldError(_camel(key), nested.expected)])
        for sub, v in value.items():
            wire = nested.keys.get(snake(sub))
            if wire is None:
                raise SpecError(kind, None, [FieldError(f"{_camel(key)}.{sub}", "unknown field")])
            if v is not None:
                set_path(out, (*nested.base, wire), nested.coerce(v))
    return out


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(p.title() for p in rest)


def _metadata(manifest: dict[str, Any], kind: str, resource_name: str) -> dict[str, Any]:
    """``manifest.metadata`` with ``name`` defaulting to the resource name and ``namespace`` to
    ``default``; SpecError for a metadata that is not an object (``metadata: null`` included)."""
    meta = manifest.setdefault("metadata", {})
    if not isinstance(meta, dict):
        raise SpecError(
            kind, None, [FieldError("metadata", "must be an object (name, namespace, labels, annotations)", meta)]
        )
    meta.setdefault("name", resource_name)
    meta.setdefault("namespace", "default")
    return meta


@dataclass(frozen=True)
class Built:
    """One component's arguments, validated: the typed ``spec``; the upstream ``manifest`` the
    arguments describe (the argument fields applied at their paths, not re-serialised from the
    model: an omitted field stays omitted, so controller mode's CR means exactly what the user
    wrote); the validated option values ``choices`` and the ``options`` the API reconciles with;
    the ``gang_provider`` of its objects."""

    spec: Any
    manifest: Mapping[str, Any]
    choices: Mapping[str, Any]
    options: Any
    gang_provider: str


def build_spec(workload: Workload | str, resource_name: str, args: Any) -> Built:
    """Validate ``args`` for ``workload`` (or the registered API of that kind) — every component's
    one argument layer; raise :class:`SpecError` on any problem, before anything is registered.

    ``metadata.name`` defaults to the Pulumi resource name; ``metadata.namespace`` to ``default``;
    numbers arrive as ints; options are checked by their validators (all problems in one error);
    the control arguments become the manifest's annotations (:func:`pulumi_lws.core.features.control.with_arguments`)."""
    from pulumi_lws.core.k8s.model import ints_back

    if isinstance(workload, str):
        from pulumi_lws.workloads import workload_for

        workload = workload_for(workload)
    kind, schema = workload.kind, workload.arguments
    reject_outputs(args, kind)
    base, fields = split_args(args, workload)
    manifest = ints_back(apply_fields(base, fields, workload))
    _metadata(manifest, kind, resource_name)
    choices: dict[str, Any] = {}
    errors = []
    for option in schema.options:
        try:
            choices[option.name] = option.check(fields.get(option.name))
        except ArgumentError as exc:
            errors.append(FieldError(_camel(option.name), str(exc), fields.get(option.name)))
    if errors:
        raise SpecError(kind, None, errors)
    control = check_arguments(kind, **{c: fields.get(c) for c in schema.control})
    declared = with_arguments(copy.deepcopy(manifest), control, deadline="progress_deadline_seconds" in schema.control)
    spec = workload.parse(declared)
    _, name = workload.identity(spec)
    resolve(kind, name, annotations_of_spec(spec))  # a malformed control annotation fails here
    gang = workload.gang.provider(choices.get("gang_provider"))
    return Built(spec, manifest, choices, workload.options(**choices), gang)
