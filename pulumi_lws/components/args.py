"""Argument plumbing every workload component shares (pure: nothing is registered here).

Pulumi delivers numbers as floats and IntOrString fields from the provider as strings; component
arguments may be snake_case or camelCase. The workload components resolve every ``pulumi.Output``
before building (components/inputs.py); :func:`reject_outputs` guards the pure builders against
one that slipped through.
"""
from __future__ import annotations

import copy
import re
from typing import Any, Collection, Mapping

from pulumi_lws.core.errors import FieldError, SpecError
from pulumi_lws.core.resource import ManifestResource, load_manifest


def snake(key: str) -> str:
    """``maxUnavailable`` -> ``max_unavailable`` (snake_case keys pass unchanged)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


def int_or_percent(value: Any) -> Any:
    """maxUnavailable/maxSurge from the provider arrive as ``str`` (no Unions): "2" -> 2, "50%" stays."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return value


def reject_outputs(value: Any, kind: str, path: str = "args") -> None:
    """The planner needs concrete values; an unresolved ``pulumi.Output`` cannot be planned."""
    if type(value).__name__ == "Output" and type(value).__module__.startswith("pulumi"):
        raise SpecError(kind, None, [FieldError(path, f"must be a plain value known when the program runs "
                                                      f"(the {kind} spec cannot depend on other resources' outputs)")])
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


def base_manifest(source: Any, model: type[ManifestResource]) -> dict[str, Any]:
    """The manifest dict of a ``manifest`` argument: a model of the API, a dict or YAML text."""
    if isinstance(source, model):
        return source.to_wire()
    if isinstance(source, (str, Mapping)):
        return copy.deepcopy(load_manifest(source, model.KIND))
    raise SpecError(model.KIND, None, [FieldError(
        "manifest", f"expected a manifest dict, YAML text or {model.KIND}, got {type(source).__name__}")])


def split_args(args: Any, model: type[ManifestResource], known_fields: Collection[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(base manifest, field overrides with snake_case keys) from any accepted ``args`` form: a model,
    YAML text, an upstream manifest dict, or plain fields with an optional ``manifest``."""
    if args is None:
        return {}, {}
    if isinstance(args, (str, model)):
        return base_manifest(args, model), {}
    if not isinstance(args, Mapping):
        raise SpecError(model.KIND, None, [FieldError(
            "args", f"expected a dict, YAML text or {model.KIND}, got {type(args).__name__}")])
    if "spec" in args or "apiVersion" in args or "kind" in args:
        return base_manifest(args, model), {}
    fields = {snake(k): v for k, v in args.items() if v is not None}
    unknown = sorted(set(fields) - set(known_fields))
    if unknown:
        raise SpecError(model.KIND, None, [FieldError(k, "unknown field") for k in unknown])
    base = base_manifest(fields.pop("manifest"), model) if "manifest" in fields else {}
    return base, fields


def manifest_from_args(resource_name: str, args: Any, model: type[ManifestResource],
                       field_paths: Mapping[str, tuple[str, ...]], known_fields: Collection[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(manifest, plain fields) from any accepted ``args`` form: the base manifest with every plain
    field of ``field_paths`` set at its path, numbers as ints, ``metadata.name`` defaulting to the
    Pulumi resource name and ``metadata.namespace`` to ``default``. Not validated yet."""
    from pulumi_lws.core.model import ints_back

    reject_outputs(args, model.KIND)
    base, fields = split_args(args, model, known_fields)
    manifest = copy.deepcopy(base)
    manifest.setdefault("apiVersion", getattr(model, "model_fields")["api_version"].default)
    manifest.setdefault("kind", model.KIND)
    for key, path in field_paths.items():
        if key in fields:
            set_path(manifest, path, copy.deepcopy(fields[key]))
    manifest = ints_back(manifest)
    meta = manifest.setdefault("metadata", {})
    meta.setdefault("name", resource_name)
    meta.setdefault("namespace", "default")
    return manifest, fields
