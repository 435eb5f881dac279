"""The built-in workload APIs. Importing this module registers each of them with
:mod:`pulumi_lws.core.contract.workload`; shells import it once and then dispatch on the manifest's kind.

A new API plugs in by adding its ``workload`` module here, and its Pulumi component module to
:data:`COMPONENT_MODULES` (and nothing else in the shells).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from pulumi_lws.core.contract.simulation import GroupLabels
from pulumi_lws.core.contract.workload import Workload, registered, workload_for, workload_of

#: One module per API; each calls :func:`pulumi_lws.core.contract.workload.register` on import.
BUILTIN: tuple[str, ...] = (
    "pulumi_lws.lws.workload",
    "pulumi_lws.modelserving.workload",
    "pulumi_lws.disaggregatedset.workload",
)

#: One Pulumi component module per API (each calls ``components.base.register_component``; imported
#: lazily, by the component provider: they load the Pulumi SDK).
COMPONENT_MODULES: tuple[str, ...] = (
    "pulumi_lws.components.leaderworkerset",
    "pulumi_lws.components.modelserving",
    "pulumi_lws.components.disaggregatedset",
)

for _module in BUILTIN:
    importlib.import_module(_module)


def modelled(manifest: Mapping[str, Any]) -> Workload:
    """The workload of a manifest the caller must deploy; ``SpecError`` (field ``kind``, the known
    kinds listed) when no registered API models its kind."""
    workload = workload_of(manifest)
    if workload is None:
        from pulumi_lws.core.contract.errors import FieldError, SpecError

        kind = manifest.get("kind") if isinstance(manifest, Mapping) else None
        raise SpecError(
            "manifest",
            None,
            [
                FieldError(
                    "kind", f"not a workload this project models (known: {', '.join(sorted(registered()))})", kind
                )
            ],
        )
    return workload


def option_refused(workload: Workload, option: str, flag: str) -> str | None:
    """Why ``flag`` (a shell's spelling of the pulumi-lws option ``option``, e.g. ``--update-order``
    for ``update_order``) cannot be given for ``workload``, or None when its API takes the option
    (``Workload.arguments``)."""
    if option in workload.arguments.option_names:
        return None
    takers = [kind for kind, w in registered().items() if option in w.arguments.option_names]
    where = f"only {', '.join(takers)} takes it" if takers else "no registered API takes it"
    return f"{flag} does not apply to a {workload.kind} ({where})"


def simulator_group_labels() -> tuple[GroupLabels, ...]:
    """Every registered API's :class:`~pulumi_lws.core.contract.simulation.GroupLabels`, in registration
    order, each once: what the simulated kubelet reads a pod's workload and group with."""
    return tuple(dict.fromkeys(w.group_labels for w in registered().values() if w.group_labels is not None))


__all__ = [
    "BUILTIN",
    "COMPONENT_MODULES",
    "Workload",
    "modelled",
    "option_refused",
    "registered",
    "simulator_group_labels",
    "workload_for",
    "workload_of",
]
