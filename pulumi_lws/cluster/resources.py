"""Which lightkube resource class the live backend reads and writes for each kind, and the plain
dicts it turns lightkube's objects into.

Apart from :mod:`.live` because naming a kind's API (typed model or generic resource, which
PodGroup a bare ``PodGroup`` means) follows from the registered APIs alone and never talks to a
server; :class:`~pulumi_lws.cluster.live.LiveCluster` only looks the classes up. Invariants: one
class per :class:`~pulumi_lws.core.contract.facts.KindRef` (a generic resource is built once and
cached), a kind two APIs share is also reachable by its qualified name, and every object leaves as
a wire-format dict with its ``kind``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lightkube.generic_resource import create_namespaced_resource
from lightkube.resources.apps_v1 import ControllerRevision, Deployment, StatefulSet
from lightkube.resources.core_v1 import Pod, Service
from lightkube.resources.scheduling_v1beta1 import PodGroup, Workload

from pulumi_lws.core.contract.facts import GANG_PODGROUPS, KindRef
from pulumi_lws.core.contract.ports import ABSENT, SelectorValue
from pulumi_lws.workloads import registered

#: lightkube's typed models of the built-in kinds; any other kind an API observes gets a generic
#: resource built from its :class:`~pulumi_lws.core.contract.facts.KindRef` (group, version, plural)
TYPED: dict[tuple[str, str], Any] = {
    ("apps/v1", "StatefulSet"): StatefulSet,
    ("apps/v1", "Deployment"): Deployment,
    ("v1", "Pod"): Pod,
    ("apps/v1", "ControllerRevision"): ControllerRevision,
    ("v1", "Service"): Service,
    ("scheduling.k8s.io/v1beta1", "PodGroup"): PodGroup,
    ("scheduling.k8s.io/v1beta1", "Workload"): Workload,
}
_GENERIC: dict[tuple[str, str], Any] = {}


def resource_of(ref: KindRef) -> Any:
    """The lightkube resource class of one namespaced kind at one API version (one class per ref)."""
    typed = TYPED.get((ref.api_version, ref.kind))
    if typed is not None:
        return typed
    key = (ref.api_version, ref.kind)
    if key not in _GENERIC:
        group, _, version = ref.api_version.rpartition("/")
        _GENERIC[key] = create_namespaced_resource(group, version, ref.kind, ref.resource)
    return _GENERIC[key]


#: Volcano's PodGroup (the volcano gang provider's; ModelServing's always)
VolcanoPodGroup = resource_of(GANG_PODGROUPS["volcano"])


#: the cluster-scoped and core kinds the live backend reads besides the APIs' scope kinds
CORE_REFS: Mapping[str, KindRef] = {
    "Node": KindRef("Node", "v1", namespaced=False),
    "Event": KindRef("Event", "v1"),
}


def kind_refs(gang_provider: str = "kubernetes") -> dict[str, KindRef]:
    """The :class:`KindRef` of every namespaced kind a registered API observes
    (``Workload.observes``), by the name a scope uses. A kind name two APIs share (``PodGroup``)
    is also reachable by its qualified name (``PodGroup.scheduling.volcano.sh``); the bare name
    means ``gang_provider``'s."""
    refs: dict[str, list[KindRef]] = {}
    for workload in registered().values():
        for ref in workload.observes:
            if ref.namespaced and ref not in refs.setdefault(ref.kind, []):
                refs[ref.kind].append(ref)
    out: dict[str, KindRef] = {}
    for kind, choices in refs.items():
        if len(choices) > 1:
            out.update({ref.qualified: ref for ref in choices})
        gang = GANG_PODGROUPS[gang_provider]
        out[kind] = gang if gang in choices else choices[0]
    return out


def resource_classes(gang_provider: str = "kubernetes") -> dict[str, Any]:
    """The lightkube resource class of every kind of :func:`kind_refs`, by the same names."""
    return {name: resource_of(ref) for name, ref in kind_refs(gang_provider).items()}


def to_plain(obj: Any, kind: str) -> dict[str, Any]:
    """A lightkube object (typed or generic) as a plain wire-format dict with kind/apiVersion."""
    data = obj.to_dict() if hasattr(obj, "to_dict") else dict(obj)
    data.setdefault("kind", kind.split(".", 1)[0])
    return data


def lightkube_labels(selector: Mapping[str, SelectorValue]) -> dict[str, Any]:
    """A :class:`~pulumi_lws.core.contract.ports.Scope` selector as lightkube's ``labels`` (None:
    the key exists, ``key``; ABSENT: it does not, ``!key``)."""
    from lightkube import operators

    return {
        k: operators.exists() if v is None else operators.not_exists() if v is ABSENT else v
        for k, v in selector.items()
    }
