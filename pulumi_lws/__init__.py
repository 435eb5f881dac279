"""pulumi-lws: LeaderWorkerSet semantics as Pulumi components, without an operator.

Pure, no Pulumi and no I/O: the shared core :mod:`pulumi_lws.core` and one package per workload
API above it (:mod:`pulumi_lws.lws` for LeaderWorkerSet: api, names, revision, rollout, render,
status, reconcile). Shells dispatch on the workload kind through :mod:`pulumi_lws.workloads`:
:mod:`pulumi_lws.components` (Pulumi), :mod:`pulumi_lws.sim` (embedded cluster),
:mod:`pulumi_lws.cluster` (live API), :mod:`pulumi_lws.cli`, :mod:`pulumi_lws.provider`.
The layout and its import rules: docs/design.md.

The Pulumi component is imported lazily so that the pure core stays importable (and fast)
without loading the Pulumi SDK.
"""

from pulumi_lws.lws.api import FieldError, LeaderWorkerSetSpecError
from pulumi_lws.lws.api import LeaderWorkerSet as LeaderWorkerSetSpec

__version__ = "0.1.0"

__all__ = [
    "DisaggregatedSet",
    "FieldError",
    "LeaderWorkerSet",
    "LeaderWorkerSetSpec",
    "LeaderWorkerSetSpecError",
    "ModelServing",
    "__version__",
]

#: Pulumi components, imported on first use (they load the Pulumi SDK).
_COMPONENTS = {
    "LeaderWorkerSet": "pulumi_lws.components.leaderworkerset",
    "ModelServing": "pulumi_lws.components.modelserving",
    "DisaggregatedSet": "pulumi_lws.components.disaggregatedset",
}


def __getattr__(name: str):
    module = _COMPONENTS.get(name)
    if module is None:
        raise AttributeError(name)
    import importlib

    return getattr(importlib.import_module(module), name)
