"""The built-in workload APIs. Importing this module registers each of them with
:mod:`pulumi_lws.core.workload`; shells import it once and then dispatch on the manifest's kind.

A new API plugs in by adding its ``workload`` module here (and nothing else in the shells).
"""
from __future__ import annotations

import importlib

from pulumi_lws.core.workload import Workload, registered, workload_for, workload_of

#: One module per API; each calls :func:`pulumi_lws.core.workload.register` on import.
BUILTIN: tuple[str, ...] = ("pulumi_lws.lws.workload", "pulumi_lws.modelserving.workload",
                            "pulumi_lws.disaggregatedset.workload")

for _module in BUILTIN:
    importlib.import_module(_module)

__all__ = ["BUILTIN", "Workload", "registered", "workload_for", "workload_of"]
