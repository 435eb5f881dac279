"""Component provider entry point: serves ``lws:index:LeaderWorkerSet``, ``lws:index:ModelServing`` and
``lws:index:DisaggregatedSet`` to every Pulumi language.

The Pulumi CLI launches the source plugin (``PulumiPlugin.yaml``, ``pulumi package add <repo>``)
as ``<plugin dir>/.venv/bin/python <plugin dir> <engine address>``: the repository root's
``__main__.py`` calls :func:`main` here, which serves the ResourceProvider gRPC service on
127.0.0.1 and prints its port on stdout (``pulumi.provider.main``). ``python -m
pulumi_lws.provider <engine address>`` does the same from an installed package. The schema it
serves is :func:`pulumi_lws.provider.schema.package_schema` (committed as ``schema.json``,
regenerated with ``make schema``). tests/engine/test_provider_over_grpc.py starts it as the CLI
does and drives ``GetSchema`` and ``Construct`` from a test engine (tests/grpc_engine.py).
"""

import sys

from pulumi_lws.provider.schema import NAME, components, make_provider

__all__ = ["NAME", "components", "main", "schema"]


def schema() -> str:
    """The package schema (JSON text) the provider serves, generated without an engine."""
    return make_provider().schema


def main() -> None:  # pragma: no cover - runs in the plugin process (tests/engine/)
    # component_provider_host(...) builds a plain ComponentProvider; ours refines its schema
    # (int-or-percent inputs, package metadata), so it is served through the same entry point.
    from pulumi.provider import main as serve

    serve(make_provider(), sys.argv[1:])


if __name__ == "__main__":  # pragma: no cover
    main()
