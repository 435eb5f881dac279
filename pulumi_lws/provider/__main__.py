"""Component provider entry point: serves ``lws:index:LeaderWorkerSet``, ``lws:index:ModelServing`` and
``lws:index:DisaggregatedSet`` to every Pulumi language.

Launched by the Pulumi CLI through ``PulumiPlugin.yaml`` (``pulumi package add <repo>``); it
starts a gRPC server for the engine, so it cannot run without the CLI. The schema it serves can
be generated offline with :func:`schema` (see ``tests/provider/test_provider.py``).
"""
import pathlib
import sys

try:  # run from a source checkout without installing (python pulumi_lws/provider)
    import pulumi_lws  # noqa: F401
except ModuleNotFoundError:  # pragma: no cover
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))

from pulumi_lws import __version__  # noqa: E402
from pulumi_lws.components.leaderworkerset import LeaderWorkerSet  # noqa: E402
from pulumi_lws.components.modelserving import ModelServing  # noqa: E402
from pulumi_lws.components.disaggregatedset import DisaggregatedSet  # noqa: E402

NAME = "lws"
COMPONENTS = [LeaderWorkerSet, ModelServing, DisaggregatedSet]


def schema() -> str:
    """The package schema (JSON text) the provider serves, generated without an engine."""
    from pulumi.provider.experimental.component import ComponentProvider

    return ComponentProvider(COMPONENTS, name=NAME, version=__version__).schema


def main() -> None:  # pragma: no cover - needs the Pulumi engine
    from pulumi.provider.experimental import component_provider_host

    component_provider_host(name=NAME, components=COMPONENTS)


if __name__ == "__main__":  # pragma: no cover
    main()
