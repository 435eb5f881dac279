"""What every workload component does before its reconcile, in one place (:func:`prepare`).

Order matters: ``mode`` is split off, Output inputs are resolved and the spec built (``SpecError``
before anything is registered), the upstream CRD is checked in controller mode (raises before
anything is registered), and only then is the component itself registered.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import pulumi

from pulumi_lws.components.base import WorkloadComponent
from pulumi_lws.components.controller import checked_backend, manifest_of, split_mode
from pulumi_lws.components.inputs import InvalidInput
from pulumi_lws.core.errors import SpecError
from pulumi_lws.core.workload import Workload

B = TypeVar("B")


def prepare(component: WorkloadComponent, t: str, name: str, args: Any, opts: pulumi.ResourceOptions | None,
            workload: Workload, build_spec: Callable[[str, Any], B], spec_of: Callable[[B], Any], *,
            gang_provider: str = "kubernetes") -> tuple[str, B, Mapping[str, Any], Any]:
    """Register ``component`` after validating ``args``; returns ``(mode, built, manifest, backend)``
    for :func:`pulumi_lws.components.controller.reconcile_in_mode`."""
    try:
        mode, args = split_mode(args, workload.kind)
    except SpecError as err:  # one clear error under the language host, never a traceback
        raise InvalidInput.of(err) from None
    inputs, (built, manifest) = component._build(args, lambda plain: (build_spec(name, plain),
                                                                      manifest_of(workload.kind, name, plain)))
    backend = checked_backend(mode, workload, spec_of(built), gang_provider=gang_provider)
    WorkloadComponent.__init__(component, t, name, opts, inputs)
    return mode, built, manifest, backend
