"""Which cluster the components observe and act on.

The default is the live cluster (kubeconfig / current context, as the pulumi-kubernetes provider
uses). The simulator and tests install their own observer and actuator with
:func:`use_backend`; the component code never knows which one it talks to.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

from pulumi_lws.core.contract.ports import Actuator, ClusterError, Observer

NO_CLUSTER_HELP = (
    "For tests and the simulator, install a backend first: `with pulumi_lws.backend.use_backend(observer, actuator):` "
    "(pulumi_lws.sim.cluster.simcluster.SimCluster is both); for a real cluster, point KUBECONFIG (or ~/.kube/config) at it, "
    "or set the stack config kubernetes:kubeconfig / kubernetes:context"
)


class NoClusterError(ClusterError):
    """No backend is installed and no live cluster can be configured (no kubeconfig, an empty or
    invalid one, unknown context).

    Raised by :func:`current_backend` instead of the Kubernetes client's own configuration error,
    with what to do in either case (``use_backend`` for tests/simulator, a kubeconfig for a cluster);
    ``__cause__`` is the :class:`~pulumi_lws.cluster.kubeconfig.KubeconfigError` naming the file.
    ``reason`` is the cause's own message and ``where`` names the context, for a command line to
    give its own advice (its users pass flags, not backends).
    """

    reason: str = ""
    where: str = ""


def command_line_advice(error: NoClusterError) -> str:
    """``error`` as a command line says it: its users pass ``--kubeconfig``/``--context``, not
    backends (``use_backend`` is for tests and the simulator)."""
    return (
        f"no cluster to read{error.where}: {error.reason}. Point --kubeconfig and --context, or "
        "KUBECONFIG / ~/.kube/config, at the cluster; to try a program without one, `pulumi-lws up DIR` "
        "runs it on the simulated cluster"
    )


@dataclass(frozen=True)
class Backend:
    observer: Observer
    actuator: Actuator


_installed: list[Backend] = []


@contextlib.contextmanager
def use_backend(observer: Observer, actuator: Actuator) -> Iterator[Backend]:
    """Install a backend for the duration of a ``with`` block (nestable)."""
    backend = Backend(observer, actuator)
    _installed.append(backend)
    try:
        yield backend
    finally:
        _installed.remove(backend)


def current_backend(
    *, context: str | None = None, kubeconfig: str | None = None, gang_provider: str = "kubernetes"
) -> Backend:
    """The innermost installed backend, else a live-cluster backend.

    The live backend targets the cluster the default pulumi-kubernetes provider would: the
    ``kubeconfig`` (a path or the file's content, like the provider's ``kubernetes:kubeconfig``
    config) or ``KUBECONFIG``/``~/.kube/config``/in-cluster, at ``context`` or the current context.
    A ``kubeconfig`` without a newline that is not a JSON object is a path, read as a path
    (:mod:`pulumi_lws.cluster.kubeconfig`). Raises :class:`NoClusterError` (naming the file, the
    cause and what to do) when no such configuration exists or it cannot be used.
    """
    if _installed:
        return _installed[-1]
    from lightkube.core.exceptions import ConfigError

    from pulumi_lws.cluster.live import LiveCluster

    try:
        live = LiveCluster.from_kubeconfig(context, kubeconfig=kubeconfig, gang_provider=gang_provider)
    except (ClusterError, ConfigError, OSError) as exc:
        where = f" (context {context!r})" if context else ""
        error = NoClusterError(f"pulumi-lws has no cluster to observe{where}: {exc}. {NO_CLUSTER_HELP}")
        error.reason, error.where = str(exc), where
        raise error from exc
    return Backend(live, live)
