"""What an API tells the simulator about its pods and groups (pure data, no API knowledge here).

The simulated cluster (``sim/``: store, controllers, kubelet, scheduler) knows no API: whatever it
needs beyond generic Kubernetes behaviour is a fact the API declares on its
:class:`~pulumi_lws.core.contract.workload.Workload`, handed to the cluster by the driver side:

* :class:`GroupLabels` (``Workload.group_labels``): which labels name a pod's workload and group,
  so a scenario's kubelet timing override ``{group: 3}`` / ``{lws: name}`` finds its pods;
* :class:`Placement` (``Workload.placement(spec)``): how a spec's groups take nodes, so the
  simulator can assume a node pool when none is given (``render --stage steady``,
  ``simulate --from/--to`` without ``--nodes``).

Invariants: every dataclass is frozen; :func:`group_of` and :func:`owner_of` read only a pod's
labels and name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class GroupLabels:
    """How a pod of one API names its workload and group.

    ``owner``: the label whose value is the owning workload's name; ``group``: the label whose
    value carries the group ordinal, ``group_pattern`` the regular expression (full match) whose
    first group is that ordinal; ``ordinal_in_name``: without the group label, the ordinal is read
    from a pod name ``<owner>-<ordinal>[-<worker>]``."""

    owner: str
    group: str | None = None
    group_pattern: str = r"(.*)"
    ordinal_in_name: bool = False


def _labels(pod: Mapping[str, Any]) -> Mapping[str, Any]:
    return (pod.get("metadata") or {}).get("labels") or {}


def owner_of(pod: Mapping[str, Any], facts: Iterable[GroupLabels]) -> str | None:
    """The owning workload's name: the first declared ``owner`` label the pod carries."""
    labels = _labels(pod)
    return next((labels[f.owner] for f in facts if labels.get(f.owner)), None)


def group_of(pod: Mapping[str, Any], facts: Iterable[GroupLabels]) -> str | None:
    """The pod's group ordinal: the first declared group label that matches (in declaration
    order), else the first pod name ``<owner>-<i>[-<j>]`` of an API that allows it, else None."""
    facts = tuple(facts)
    labels = _labels(pod)
    for f in facts:
        value = labels.get(f.group) if f.group else None
        if value is not None:
            match = re.fullmatch(f.group_pattern, str(value))
            if match:
                return match.group(1)
    name = str((pod.get("metadata") or {}).get("name") or "")
    for f in facts:
        owner = labels.get(f.owner)
        if f.ordinal_in_name and owner:
            match = re.fullmatch(re.escape(str(owner)) + r"-(\d+)(?:-\d+)?", name)
            if match:
                return match.group(1)
    return None


@dataclass(frozen=True)
class Placement:
    """How one spec's groups take nodes.

    ``topology_key``: the node label whose domains each group takes exclusively (None: groups
    share nodes freely; the simulator then assumes no pool); ``groups``: how many groups (one
    domain each); ``nodes_per_domain``: nodes per domain (one per subgroup when each subgroup takes
    a node of its own, with ``subgroup_key`` set to a value per node); ``group_pods``: the pod
    templates of one whole group with how many pods of each (a node is sized to fit them all)."""

    topology_key: str | None
    groups: int
    group_pods: tuple[tuple[Mapping[str, Any], int], ...]
    nodes_per_domain: int = 1
    subgroup_key: str | None = None
