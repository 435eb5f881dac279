"""The Pulumi package-schema rules the provider tests check, written down here.

No published Python/npm package ships Pulumi's package metaschema (``pulumi.json``, which lives
in the Go SDK's codegen sources, not in the ``pulumi`` wheel), so :data:`PACKAGE_RULES` states the
subset of "Pulumi Package Schema" (https://www.pulumi.com/docs/iac/extending-pulumi/schema/) this
package relies on, as a JSON Schema, and :func:`semantic_problems` adds what a JSON Schema cannot
say (references resolve, required names exist). Stricter than Pulumi where it matters to users:
every input, output and type property must carry a description.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

PRIMITIVES = ["boolean", "integer", "number", "string", "array", "object"]

_TYPE_REF = {
    "type": "string",
    "pattern": r"^(#/types/[a-z]+:[a-z]+:[A-Za-z0-9]+|pulumi\.json#/(Any|Archive|Asset|Json)|/[a-z-]+/v[0-9.]+/schema\.json#/(types|resources)/.+)$",
}

PACKAGE_RULES: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$defs": {
        "typeSpec": {
            "type": "object",
            "properties": {
                "type": {"enum": PRIMITIVES},
                "$ref": _TYPE_REF,
                "items": {"$ref": "#/$defs/typeSpec"},
                "additionalProperties": {"$ref": "#/$defs/typeSpec"},
                "oneOf": {"type": "array", "minItems": 2, "items": {"$ref": "#/$defs/typeSpec"}},
                "plain": {"type": "boolean"},
            },
            # exactly one way of saying what the value is
            "oneOf": [{"required": ["type"]}, {"required": ["$ref"]}, {"required": ["oneOf"]}],
            "allOf": [
                {
                    "if": {"properties": {"type": {"const": "array"}}, "required": ["type"]},
                    "then": {"required": ["items"]},
                },
            ],
        },
        "property": {
            "allOf": [{"$ref": "#/$defs/typeSpec"}],
            "properties": {"description": {"type": "string", "minLength": 1}},
            "required": ["description"],
        },
        "properties": {"type": "object", "additionalProperties": {"$ref": "#/$defs/property"}},
        "names": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
    },
    "type": "object",
    "required": ["name", "version", "description", "resources"],
    "properties": {
        "name": {"type": "string", "pattern": "^[a-z][a-z0-9-]*$"},
        "version": {"type": "string", "pattern": r"^[0-9]+\.[0-9]+\.[0-9]+([-+].+)?$"},
        "description": {"type": "string", "minLength": 1},
        "license": {"type": "string"},
        "homepage": {"type": "string", "pattern": "^https://"},
        "repository": {"type": "string", "pattern": "^https://"},
        "keywords": {"type": "array", "items": {"type": "string"}},
        "resources": {
            "type": "object",
            "propertyNames": {"pattern": "^[a-z]+:index:[A-Z][A-Za-z0-9]*$"},
            "additionalProperties": {
                "type": "object",
                "required": ["description", "isComponent", "inputProperties", "properties"],
                "properties": {
                    "description": {"type": "string", "minLength": 1},
                    "isComponent": {"const": True},
                    "inputProperties": {"$ref": "#/$defs/properties"},
                    "properties": {"$ref": "#/$defs/properties"},
                    "required": {"$ref": "#/$defs/names"},
                    "requiredInputs": {"$ref": "#/$defs/names"},
                },
            },
        },
        "types": {
            "type": "object",
            "propertyNames": {"pattern": "^[a-z]+:index:[A-Z][A-Za-z0-9]*$"},
            "additionalProperties": {
                "type": "object",
                "required": ["type", "description"],
                "properties": {
                    "type": {"enum": ["object", "string", "integer", "number", "boolean"]},
                    "description": {"type": "string", "minLength": 1},
                    "properties": {"$ref": "#/$defs/properties"},
                    "required": {"$ref": "#/$defs/names"},
                },
            },
        },
    },
}


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def semantic_problems(schema: dict[str, Any]) -> list[str]:
    """What :data:`PACKAGE_RULES` cannot check: local ``$ref`` s resolve, required names exist."""
    problems = []
    types = schema.get("types", {})
    for ref in _refs(schema):
        if ref.startswith("#/types/") and ref[len("#/types/") :] not in types:
            problems.append(f"unresolved $ref {ref}")
    for token, res in schema.get("resources", {}).items():
        for listed, declared in (("required", "properties"), ("requiredInputs", "inputProperties")):
            for name in set(res.get(listed, [])) - set(res.get(declared, {})):
                problems.append(f"{token}.{listed} names {name!r}, absent from {declared}")
    for token, typ in types.items():
        for name in set(typ.get("required", [])) - set(typ.get("properties", {})):
            problems.append(f"{token}.required names {name!r}, absent from properties")
    return problems


def input_json_schema(schema: dict[str, Any], token: str) -> dict[str, Any]:
    """A JSON Schema for a resource's inputs as a program writes them (unknown keys rejected)."""
    types = schema.get("types", {})

    def convert(spec: dict[str, Any]) -> dict[str, Any]:
        ref = spec.get("$ref")
        if ref == "pulumi.json#/Any":
            return {}
        if ref and ref.startswith("#/types/"):
            typ = types[ref[len("#/types/") :]]
            if "enum" in typ:
                return {"enum": [e["value"] for e in typ["enum"]]}
            return obj(typ.get("properties", {}), typ.get("required", []))
        if "oneOf" in spec:
            return {"oneOf": [convert(s) for s in spec["oneOf"]]}
        kind = spec.get("type")
        if kind == "array":
            return {"type": "array", "items": convert(spec.get("items", {}))}
        if kind == "object":
            return {"type": "object", "additionalProperties": convert(spec.get("additionalProperties", {}))}
        return {"type": kind} if kind else {}

    def obj(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {k: convert(v) for k, v in props.items()},
            "required": list(required),
            "additionalProperties": False,
        }

    res = schema["resources"][token]
    return obj(res.get("inputProperties", {}), res.get("requiredInputs", []))
