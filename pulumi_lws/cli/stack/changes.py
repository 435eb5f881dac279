"""What one ``preview``/``up`` changes, against the stack's last registered state (pure).

A resource is ``create`` (not registered last time), ``delete`` (registered last time, not now),
``replace`` (a custom Kubernetes resource whose immutable fields changed: the provider deletes and
recreates it, ``sim/apply.immutable_changes``), ``update`` (other input changes) or ``same``.
Components and the stack have no inputs of their own: ``create`` or ``same``.
Order: the program's construction order, deleted resources after the others in their old order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pulumi_lws.cli.stack.state import Resource, StackState, masked
from pulumi_lws.core.k8s.model import ints_back

STACK_TYPE = "pulumi:pulumi:Stack"


@dataclass(frozen=True)
class Change:
    resource: Resource  # the current one (the old one for a delete)
    op: str  # create | update | replace | delete | same
    old: Mapping[str, Any] | None = None

    @property
    def urn(self) -> str:
        return self.resource.urn


def current_resources(result: Any) -> dict[str, Resource]:
    """The registrations of an :class:`~pulumi_lws.sim.driver.pulumi_engine.EngineResult` as resources
    (secrets masked), in construction order (the stack first)."""
    order = result.construction_order

    def place(item: tuple[str, Any]) -> tuple[int, str]:
        urn, reg = item
        return (-1 if reg.type == STACK_TYPE else order.get((reg.type, reg.name), len(order)), urn)

    out = {}
    for urn, reg in sorted(result.registrations.items(), key=place):
        inputs = ints_back(masked(reg.inputs or {})) if reg.custom else {}  # the wire's numbers are doubles
        out[urn] = Resource(urn, reg.type, reg.name, reg.parent, reg.custom, inputs)
    return out


def _kind(resource: Resource) -> str | None:
    return resource.type.rsplit(":", 1)[-1] if resource.custom and resource.type.startswith("kubernetes:") else None


def changes(previous: StackState, current: Mapping[str, Resource]) -> list[Change]:
    from pulumi_lws.sim.cluster.apply_diff import immutable_changes

    out: list[Change] = []
    for urn, resource in current.items():
        old = previous.resources.get(urn)
        if old is None:
            out.append(Change(resource, "create"))
        elif old.inputs == resource.inputs:
            out.append(Change(resource, "same", old.inputs))
        else:
            kind = _kind(resource)
            replace = kind is not None and immutable_changes(kind, old.inputs, resource.inputs)
            out.append(Change(resource, "replace" if replace else "update", old.inputs))
    out += [Change(old, "delete", old.inputs) for urn, old in previous.resources.items() if urn not in current]
    return out


def counts(items: list[Change]) -> dict[str, int]:
    tally = {"create": 0, "update": 0, "delete": 0, "replace": 0, "same": 0}
    for change in items:
        tally[change.op] += 1
    return tally
