"""Which cluster the components observe and act on.

The default is the live cluster (kubeconfig / current context, as the pulumi-kubernetes provider
uses). The simulator and tests install their own observer and actuator with
:func:`use_backend`; the component code never knows which one it talks to.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Iterator

from pulumi_lws.core.ports import Observer
from pulumi_lws.core.ports import Actuator




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


def current_backend(*, context: str | None = None, kubeconfig: str | None = None,
                    gang_provider: str = "kubernetes") -> Backend:
    """The innermost installed backend, else a live-cluster backend.

    The live backend targets the cluster the default pulumi-kubernetes provider would: the
    ``kubeconfig`` (a path or the file's content, like the provider's ``kubernetes:kubeconfig``
    config) or ``KUBECONFIG``/``~/.kube/config``/in-cluster, at ``context`` or the current context.
    """
    if _installed:
        return _installed[-1]
    from pulumi_lws.cluster.live import LiveCluster

    live = LiveCluster.from_kubeconfig(context, kubeconfig=kubeconfig, gang_provider=gang_provider)
    return Backend(live, live)
