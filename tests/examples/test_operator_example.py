"""examples/operator: the Pulumi Kubernetes Operator Stack and the RBAC of its workspace.

No pip or npm package ships the operator's CRDs, so the Stack is validated against
:data:`STACK_SCHEMA`, stated here: the ``pulumi.com/v1`` Stack spec fields this example uses, with
their types as ``operator/api/pulumi/shared/stack_types.go`` declares them
(pulumi/pulumi-kubernetes-operator @ 475dbc6c), unknown spec fields rejected (a typo would be
silently ignored by the API server's pruning), plus what continuous reconcile needs
(``continueResyncOnCommitMatch: true``, ``resyncFrequencySeconds`` >= 60, the operator's minimum).
Core objects are validated with kubernetes-validate (strict, 1.35).
"""

from __future__ import annotations

import jsonschema
import pytest
import tomllib
import yaml
from conftest import REPO_ROOT, validate_manifest
from packaging.requirements import Requirement
from support.pip_report import pip_resolves, requirement_names

from pulumi_lws import __version__
from pulumi_lws.rbac import rbac_yaml

OPERATOR = REPO_ROOT / "examples" / "operator"

_RESOURCE_REF = {
    "type": "object",
    "required": ["type"],
    "additionalProperties": False,
    "properties": {
        "type": {"enum": ["Env", "FS", "Secret", "Literal"]},
        "secret": {
            "type": "object",
            "required": ["name", "key"],
            "properties": {"name": {"type": "string"}, "key": {"type": "string"}},
        },
        "env": {"type": "object"},
        "filesystem": {"type": "object"},
        "literal": {"type": "object"},
    },
}

STACK_SCHEMA = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "pulumi.com/v1"},
        "kind": {"const": "Stack"},
        "metadata": {"type": "object", "required": ["name", "namespace"]},
        "spec": {
            "type": "object",
            "required": [
                "stack",
                "serviceAccountName",
                "projectRepo",
                "continueResyncOnCommitMatch",
                "resyncFrequencySeconds",
            ],
            "additionalProperties": False,
            "properties": {
                "stack": {"type": "string", "pattern": "^[^/]+/[^/]+/[^/]+$"},
                "serviceAccountName": {"type": "string", "minLength": 1},
                "projectRepo": {"type": "string", "pattern": "^https://"},
                "branch": {"type": "string", "minLength": 1},
                "commit": {"type": "string"},
                "repoDir": {"type": "string"},
                "shallow": {"type": "boolean"},
                "continueResyncOnCommitMatch": {"const": True},
                "resyncFrequencySeconds": {"type": "integer", "minimum": 60},
                "retryMaxBackoffDurationSeconds": {"type": "integer", "minimum": 1},
                "refresh": {"type": "boolean"},
                "destroyOnFinalize": {"type": "boolean"},
                "envRefs": {"type": "object", "additionalProperties": _RESOURCE_REF},
                "workspaceTemplate": {
                    "type": "object",
                    "properties": {"spec": {"type": "object", "properties": {"image": {"type": "string"}}}},
                },
            },
            # git source: exactly one of branch (tracked) or commit (pinned)
            "oneOf": [
                {"required": ["branch"], "not": {"required": ["commit"]}},
                {"required": ["commit"], "not": {"required": ["branch"]}},
            ],
        },
    },
}


def _pyproject() -> dict:
    return tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())


def _docs() -> list[dict]:
    return [d for d in yaml.safe_load_all((OPERATOR / "stack.yaml").read_text()) if d]


def _stack() -> dict:
    return next(d for d in _docs() if d["kind"] == "Stack")


def test_stack_follows_the_stated_schema():
    jsonschema.validate(_stack(), STACK_SCHEMA)


@pytest.mark.parametrize(
    "mutate, fragment",
    [
        (lambda s: s.update(continueResyncOnCommitMatch=False), "True was expected"),
        (lambda s: s.update(resyncFrequencySeconds=30), "minimum"),
        (lambda s: s.update(resyncFrequencySecond=120), "resyncFrequencySecond"),
        (lambda s: s.update(commit="abc"), "is not valid under any of the given schemas"),
    ],
)
def test_the_schema_rejects_what_breaks_continuous_reconcile(mutate, fragment):
    stack = _stack()
    mutate(stack["spec"])
    with pytest.raises(jsonschema.ValidationError) as info:
        jsonschema.validate(stack, STACK_SCHEMA)
    assert fragment in str(info.value)


def test_core_objects_are_valid_and_the_workspace_identity_is_consistent():
    docs = _docs()
    for doc in docs:
        if doc["kind"] != "Stack":
            validate_manifest(doc)
    stack = _stack()
    account = next(d for d in docs if d["kind"] == "ServiceAccount")
    assert (account["metadata"]["namespace"], account["metadata"]["name"]) == (
        stack["metadata"]["namespace"],
        stack["spec"]["serviceAccountName"],
    )
    delegator = next(d for d in docs if d["kind"] == "ClusterRoleBinding")
    assert delegator["roleRef"]["name"] == "system:auth-delegator"
    assert delegator["subjects"] == [{"kind": "ServiceAccount", "name": "lws-stack", "namespace": "lws-operator"}]


def test_program_comes_from_this_repository():
    stack = _stack()["spec"]
    urls = _pyproject()["project"]["urls"]
    assert stack["projectRepo"] == urls["Repository"]
    program = REPO_ROOT / stack["repoDir"]
    project = yaml.safe_load((program / "Pulumi.yaml").read_text())
    assert project["runtime"]["name"] == "python" and (program / "__main__.py").exists()
    # `pulumi install` in the operator's workspace runs pip in the program directory: it installs
    # pulumi-lws from the clone's root (the same commit), not from an index it is not on
    (item,) = pip_resolves("requirements.txt", program)
    assert item["metadata"]["name"] == _pyproject()["project"]["name"] and item["metadata"]["version"] == __version__
    assert item["download_info"] == {"url": REPO_ROOT.as_uri(), "dir_info": {}}
    assert {"pulumi", "pulumi-kubernetes"} <= requirement_names(item["metadata"]["requires_dist"])


def test_a_copied_program_names_a_pinned_ref_of_this_repository():
    """The line docs/operator.md (and the requirements.txt comment) give a program copied out of
    this repository: a PEP 508 direct reference to the Repository URL at a tag or commit."""
    repository = _pyproject()["project"]["urls"]["Repository"]
    line = f"pulumi-lws @ git+{repository}@<tag or commit>"
    assert line in (REPO_ROOT / "docs" / "operator.md").read_text()
    assert line in (OPERATOR / "program" / "requirements.txt").read_text()
    requirement = Requirement(line.replace("<tag or commit>", f"v{__version__}"))
    assert requirement.name == _pyproject()["project"]["name"]
    assert requirement.url == f"git+{repository}@v{__version__}"


def test_rbac_is_what_render_rbac_prints_for_the_program():
    """rbac.yaml is generated; regenerate with the command on its first line when it drifts."""
    text = (OPERATOR / "rbac.yaml").read_text()
    command = text.splitlines()[0].removeprefix("# Generated: ")
    assert command == (
        "pulumi-lws render --rbac examples/operator/program/lws.yaml --service-account lws-operator/lws-stack"
    )
    manifest = yaml.safe_load((OPERATOR / "program" / "lws.yaml").read_text())
    expected = rbac_yaml([manifest], service_account="lws-operator/lws-stack")
    body = "\n".join(text.splitlines()[2:]) + "\n"
    assert body == expected, f"examples/operator/rbac.yaml is stale: regenerate it with `{command}`"
    docs = list(yaml.safe_load_all(text))
    for doc in docs:
        validate_manifest(doc)
    assert [d["kind"] for d in docs] == ["Role", "RoleBinding"]  # nothing cluster-scoped for this program
    assert docs[0]["metadata"]["namespace"] == manifest["metadata"]["namespace"] == "inference"
    assert any(d["kind"] == "Namespace" and d["metadata"]["name"] == "inference" for d in _docs())
