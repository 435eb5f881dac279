"""examples/provider-{yaml,typescript,go}: each program checked against schema.json without the CLI.

* YAML: parsed; every resource's type is one of the schema's components and its ``properties``
  validate against that component's inputs (:func:`pulumi_schema_rules.input_json_schema`:
  unknown keys rejected, int-or-percent as integer or string);
* TypeScript / Go: no SDK generator runs offline (``pulumi package add`` is the Go code generator
  inside the CLI), so the sources are scanned: every ``new lws.<C>(...)`` / ``lws.New<C>(...)``
  names a component, every key of its argument literal (and of a nested typed literal such as
  ``rollout`` / ``&lws.RolloutArgsArgs{...}``) is one of the schema's inputs, and every output
  read (``sample.leaderName`` / ``sample.LeaderName``) is one of its outputs. Type-checking the
  values needs the generated SDK (README, "Using it from TypeScript / Go / YAML").
"""

from __future__ import annotations

import json
import re

import jsonschema
import pytest
import yaml
from conftest import REPO_ROOT
from pulumi_schema_rules import input_json_schema

EXAMPLES = REPO_ROOT / "examples"
SCHEMA = json.loads((REPO_ROOT / "schema.json").read_text())
COMPONENTS = {token.split(":")[-1]: res for token, res in SCHEMA["resources"].items()}


def _type_of(res: dict, key: str) -> dict | None:
    """The named object type of input ``key`` (None for primitives / Any)."""
    ref = res["inputProperties"][key].get("$ref", "")
    return SCHEMA["types"].get(ref[len("#/types/") :]) if ref.startswith("#/types/") else None


def _literal_keys(source: str, start: int, key_pattern: str) -> dict[str, int]:
    """``{key: offset of its value}`` of the depth-1 keys of the literal whose ``{`` is at ``start``."""
    depth, i, keys, in_string = 0, start, {}, None
    key_re = re.compile(key_pattern)
    while i < len(source):
        ch = source[i]
        if in_string:
            if ch == "\\":
                i += 1
            elif ch == in_string:
                in_string = None
        elif ch in "\"'`":
            in_string = ch
        elif source.startswith("//", i):  # line comment (TypeScript and Go)
            i = source.find("\n", i)
            continue
        elif ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
            if depth == 0:
                return keys
        elif depth == 1:
            match = key_re.match(source, i)
            if match and (i == 0 or not (source[i - 1].isalnum() or source[i - 1] in '_."')):
                keys[match.group(1)] = match.end()
                i = match.end()
                continue
        i += 1
    raise AssertionError("unbalanced literal")


def _check_yaml(program: dict) -> set[str]:
    used = set()
    for name, resource in program["resources"].items():
        assert resource["type"].startswith("lws:"), name
        component = resource["type"].split(":")[-1]
        assert component in COMPONENTS, f"{name}: {resource['type']} is not served by the provider"
        used.add(component)
        jsonschema.validate(resource.get("properties", {}), input_json_schema(SCHEMA, f"lws:index:{component}"))
    return used


def test_yaml_program_uses_every_component_with_valid_properties():
    program = yaml.safe_load((EXAMPLES / "provider-yaml" / "Pulumi.yaml").read_text())
    assert program["runtime"] == "yaml" and program["packages"] == {"lws": "../.."}
    assert _check_yaml(program) == set(COMPONENTS)
    for value in program["outputs"].values():  # ${resource.output}
        resource, output = re.fullmatch(r"\$\{(\w+)\.(\w+)\}", value).groups()
        component = program["resources"][resource]["type"].split(":")[-1]
        assert output in COMPONENTS[component]["properties"], value


@pytest.mark.parametrize(
    "properties, fragment",
    [
        ({"replicas": "four"}, "'four' is not of type 'integer'"),
        ({"rollout": {"maxSurge": 1.5}}, "1.5"),
        ({"rollout": {"maxsurge": 1}}, "maxsurge"),
        ({"replica": 4}, "replica"),
    ],
)
def test_yaml_validation_rejects_bad_properties(properties, fragment):
    program = {"resources": {"bad": {"type": "lws:LeaderWorkerSet", "properties": properties}}}
    with pytest.raises(jsonschema.ValidationError) as info:
        _check_yaml(program)
    assert fragment in str(info.value)


def _check_calls(source: str, call: re.Pattern, key_pattern: str, to_schema_name, nested_type) -> dict[str, str]:
    """Check every component call of ``source``; return ``{variable: component}``."""
    variables = {}
    for match in call.finditer(source):
        variable, component = match.group("var"), match.group("component")
        assert component in COMPONENTS, f"{component} is not served by the provider"
        variables[variable] = component
        res = COMPONENTS[component]
        keys = _literal_keys(source, match.end() - 1, key_pattern)
        assert keys, f"{variable}: no arguments found"
        for key, offset in keys.items():
            name = to_schema_name(key)
            assert name in res["inputProperties"], f"{component} has no input {name!r} ({key})"
            typ = _type_of(res, name)
            literal = nested_type(source, offset, typ)
            if typ is not None and literal is not None:
                for inner in _literal_keys(source, literal, key_pattern):
                    assert to_schema_name(inner) in typ["properties"], f"{component}.{name} has no {inner!r}"
    return variables


def _check_outputs(source: str, variables: dict[str, str], to_schema_name) -> int:
    reads = 0
    for variable, component in variables.items():
        for output in re.findall(rf"\b{variable}\.(\w+)", source):
            assert to_schema_name(output) in COMPONENTS[component]["properties"], f"{component} has no output {output}"
            reads += 1
    return reads


def test_typescript_program_uses_every_component_with_schema_inputs():
    source = (EXAMPLES / "provider-typescript" / "index.ts").read_text()
    assert 'import * as lws from "@pulumi/lws";' in source
    call = re.compile(r"const (?P<var>\w+) = new lws\.(?P<component>\w+)\(\s*\"[\w-]+\",\s*\{")

    def nested(src: str, offset: int, typ: dict | None) -> int | None:
        rest = src[offset:].lstrip()
        return offset + (len(src[offset:]) - len(rest)) if typ is not None and rest.startswith("{") else None

    variables = _check_calls(source, call, r"(\w+)\s*:", lambda k: k, nested)
    assert set(variables.values()) == set(COMPONENTS)
    assert _check_outputs(source, variables, lambda k: k) >= len(COMPONENTS)
    project = yaml.safe_load((EXAMPLES / "provider-typescript" / "Pulumi.yaml").read_text())
    assert project["runtime"]["name"] == "nodejs" and project["packages"] == {"lws": "../.."}
    tsconfig = json.loads((EXAMPLES / "provider-typescript" / "tsconfig.json").read_text())
    assert tsconfig["compilerOptions"]["strict"] is True and tsconfig["files"] == ["index.ts"]


def test_go_program_uses_every_component_with_schema_inputs():
    source = (EXAMPLES / "provider-go" / "main.go").read_text()
    assert f'"{SCHEMA["language"]["go"]["importBasePath"]}"' in source
    call = re.compile(r"(?P<var>\w+), err := lws\.New(?P<component>\w+)\(ctx, \"[\w-]+\", &lws\.(?P=component)Args\{")

    def camel(key: str) -> str:
        return key[0].lower() + key[1:]

    def nested(src: str, offset: int, typ: dict | None) -> int | None:
        if typ is None:
            return None
        token = next(t for t, v in SCHEMA["types"].items() if v is typ).split(":")[-1]
        match = re.compile(rf"\s*&lws\.{token}Args\{{").match(src, offset)  # Go input types: <Type>Args
        assert match, f"expected &lws.{token}Args{{...}} at offset {offset}"
        return match.end() - 1

    variables = _check_calls(source, call, r"([A-Z]\w*)\s*:", camel, nested)
    assert set(variables.values()) == set(COMPONENTS)
    assert _check_outputs(source, variables, camel) >= len(COMPONENTS)
    project = yaml.safe_load((EXAMPLES / "provider-go" / "Pulumi.yaml").read_text())
    assert project["runtime"] == "go" and project["packages"] == {"lws": "../.."}


def test_scanners_catch_an_unknown_argument():
    source = 'const x = new lws.LeaderWorkerSet("x", { replicas: 1, replicaz: 2 });'
    call = re.compile(r"const (?P<var>\w+) = new lws\.(?P<component>\w+)\(\s*\"[\w-]+\",\s*\{")
    with pytest.raises(AssertionError, match="replicaz"):
        _check_calls(source, call, r"(\w+)\s*:", lambda k: k, lambda *a: None)
