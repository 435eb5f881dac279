"""pulumi-lws: LeaderWorkerSet semantics as Pulumi components, without an operator.

Pure core (no Pulumi, no I/O): :mod:`pulumi_lws.lws.api`, :mod:`pulumi_lws.lws.revision`,
:mod:`pulumi_lws.lws.rollout`, :mod:`pulumi_lws.lws.render`, :mod:`pulumi_lws.lws.reconcile`.
Shells: :mod:`pulumi_lws.components` (Pulumi), :mod:`pulumi_lws.sim` (embedded cluster),
:mod:`pulumi_lws.cluster` (live API), :mod:`pulumi_lws.cli`.

The Pulumi component is imported lazily so that the pure core stays importable (and fast)
without loading the Pulumi SDK.
"""
from pulumi_lws.lws.api import FieldError, LeaderWorkerSetSpecError, LeaderWorkerSet as LeaderWorkerSetSpec

__version__ = "0.1.0"

__all__ = ["LeaderWorkerSet", "LeaderWorkerSetSpec", "FieldError", "LeaderWorkerSetSpecError", "__version__"]


def __getattr__(name: str):
    if name == "LeaderWorkerSet":
        from pulumi_lws.components.leaderworkerset import LeaderWorkerSet

        return LeaderWorkerSet
    raise AttributeError(name)
