"""The package schema the ``lws`` component provider serves, and its committed copy ``schema.json``.

The schema starts as what Pulumi's Python analyzer infers from the registered components' type
annotations (:class:`pulumi.provider.experimental.component.ComponentProvider`), then gets what
the analyzer cannot express:

* **int-or-percent inputs** (:data:`INT_OR_PERCENT`): the analyzer rejects ``Union`` types, so the
  Python annotation is ``Input[str]``; users of TypeScript, Go and YAML write ``2`` or ``"25%"``,
  so the schema types them ``oneOf: [integer, string]``. The components accept both
  (:func:`pulumi_lws.components.args.int_or_percent`);
* **package metadata** (:data:`PACKAGE_METADATA`): description, license, homepage, repository,
  keywords, publisher — what ``pulumi package add`` and the registry show.

Invariants: :func:`package_schema` is deterministic (no clock, no environment); the text written to
``schema.json`` is ``json.dumps(..., indent=2, sort_keys=True)`` plus a newline, so a drift is a
readable diff. Regenerate with ``make schema`` (= ``python -m pulumi_lws.provider.schema``); the
test ``tests/provider/test_schema_drift.py`` fails naming that command when the file is stale.
"""

from __future__ import annotations

import argparse
import copy
import json
import pathlib
import sys
from typing import Any

NAME = "lws"
REPOSITORY = "https://github.com/pulumi-lws/pulumi-lws"
REGENERATE = "make schema"

#: ``{type token: (property, ...)}``: inputs Kubernetes types IntOrString (a count or "N%")
INT_OR_PERCENT: dict[str, tuple[str, ...]] = {
    "lws:index:RolloutArgs": ("maxUnavailable", "maxSurge"),
}

PACKAGE_METADATA: dict[str, Any] = {
    "displayName": "pulumi-lws",
    "description": "LeaderWorkerSet, Kthena ModelServing and DisaggregatedSet semantics for Pulumi: multi-host LLM "
    "inference groups expanded into native Kubernetes objects, one safe rollout stage per `pulumi up`, "
    "no operator.",
    "keywords": ["kubernetes", "leaderworkerset", "llm", "inference", "category/cloud", "kind/component"],
    "license": "Apache-2.0",
    "homepage": REPOSITORY,
    "repository": REPOSITORY,
    "publisher": "pulumi-lws",
}

#: the Go SDK's import path (what ``examples/provider-go`` imports after ``pulumi package add``)
GO_IMPORT_BASE_PATH = "github.com/pulumi-lws/pulumi-lws/sdk/go/lws"


def components() -> list[type]:
    """The component classes the provider serves: every registered one (the built-in modules of
    :data:`pulumi_lws.workloads.COMPONENT_MODULES` register theirs on import; imported lazily:
    they load the Pulumi SDK)."""
    import importlib

    from pulumi_lws.workloads import COMPONENT_MODULES

    for module in COMPONENT_MODULES:
        importlib.import_module(module)
    from pulumi_lws.components.base import registered_components

    return list(registered_components().values())


def int_or_percent_property(prop: dict[str, Any]) -> dict[str, Any]:
    """``{"type": "string", ...}`` -> ``{"oneOf": [integer, string], ...}`` (description kept)."""
    out = {k: v for k, v in prop.items() if k != "type"}
    out["oneOf"] = [{"type": "integer"}, {"type": "string"}]
    return out


def refine(inferred: dict[str, Any]) -> dict[str, Any]:
    """The inferred schema with :data:`INT_OR_PERCENT` and :data:`PACKAGE_METADATA` applied (a copy).

    Raises ``KeyError`` naming a registered int-or-percent property the analyzer no longer
    produces, so a renamed argument cannot silently lose its typing."""
    schema = copy.deepcopy(inferred)
    schema.update(copy.deepcopy(PACKAGE_METADATA))
    schema.setdefault("language", {}).setdefault("go", {})["importBasePath"] = GO_IMPORT_BASE_PATH
    for token, names in INT_OR_PERCENT.items():
        if token in schema.get("types", {}):
            props = schema["types"][token].get("properties")
        elif token in schema.get("resources", {}):
            props = schema["resources"][token].get("inputProperties")
        else:
            raise KeyError(f"int-or-percent type {token!r} is not in the inferred schema")
        for name in names:
            if name not in (props or {}):
                raise KeyError(f"int-or-percent property {token}.{name} is not in the inferred schema")
            props[name] = int_or_percent_property(props[name])
    return schema


def make_provider(version: str | None = None) -> Any:
    """A :class:`ComponentProvider` serving the three components with the refined schema."""
    from pulumi.provider.experimental.component import ComponentProvider

    from pulumi_lws import __version__

    class LwsComponentProvider(ComponentProvider):
        """ComponentProvider whose ``GetSchema`` answer is :func:`refine` of the inferred one, and
        whose ``Construct`` errors are the components' own messages (:func:`construct_error`)."""

        def __init__(self) -> None:
            super().__init__(components(), name=NAME, version=version or __version__)
            inferred = self.schema
            assert inferred is not None  # ComponentProvider.__init__ always passes the schema it inferred
            self.schema = json.dumps(refine(json.loads(inferred)))

        def construct(self, name: str, resource_type: str, inputs: Any, options: Any = None) -> Any:
            from pulumi.provider.server import ComponentInitError

            try:
                return super().construct(name, resource_type, inputs, options)
            except ComponentInitError as exc:
                raise construct_error(exc.inner) from None

    return LwsComponentProvider()


def construct_error(error: Exception) -> Exception:
    """What ``Construct`` raises for an exception of a component's ``__init__``.

    The SDK's provider server answers any exception but ``RunError`` and ``InputPropertiesError``
    with its message *and a Python traceback*, which every TypeScript, Go and YAML user would see.
    So: a :class:`~pulumi_lws.core.contract.errors.SpecError` (bad input) becomes an ``InputPropertiesError``
    (gRPC ``INVALID_ARGUMENT``) whose message is the SpecError's text, the one a Python program
    shows, with one property error per field; an error the components raise for the cluster
    (``RunError``, :class:`~pulumi_lws.backend.NoClusterError`) becomes a ``RunError`` of the same
    text; anything else (a bug) keeps the SDK's traceback."""
    import pulumi
    from pulumi.errors import InputPropertiesError

    from pulumi_lws.backend import NoClusterError
    from pulumi_lws.core.contract.errors import SpecError

    if isinstance(error, SpecError):
        return InputPropertiesError(str(error), [{"property_path": e.path, "reason": str(e)} for e in error.errors])
    if isinstance(error, (pulumi.RunError, NoClusterError)):
        return pulumi.RunError(str(error))
    from pulumi.provider.server import ComponentInitError

    return ComponentInitError(error)


def package_schema() -> dict[str, Any]:
    """The schema (as a dict) the provider serves, generated without an engine or the CLI."""
    return json.loads(make_provider().schema)


def schema_text() -> str:
    """What ``schema.json`` holds: stable key order, two-space indent, trailing newline."""
    return json.dumps(package_schema(), indent=2, sort_keys=True) + "\n"


def default_path() -> pathlib.Path:
    """``schema.json`` at the repository root (next to ``PulumiPlugin.yaml``)."""
    return pathlib.Path(__file__).resolve().parents[2] / "schema.json"


def main(argv: list[str] | None = None) -> int:
    """``python -m pulumi_lws.provider.schema [--check] [PATH]``: write (or check) ``schema.json``."""
    parser = argparse.ArgumentParser(prog="python -m pulumi_lws.provider.schema", description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=pathlib.Path, default=default_path())
    parser.add_argument("--check", action="store_true", help="exit 1 if PATH differs from the generated schema")
    args = parser.parse_args(argv)
    text = schema_text()
    if args.check:
        current = args.path.read_text() if args.path.exists() else ""
        if current != text:
            print(f"{args.path} is stale: regenerate it with `{REGENERATE}`", file=sys.stderr)
            return 1
        return 0
    args.path.write_text(text)
    print(f"wrote {args.path}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
