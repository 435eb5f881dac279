"""Retaining an exhausted group's pods with a cleanup finalizer, and releasing them (pure).

Upstream, a group that exhausts ``maxGroupRestarts`` is terminated (its containers stop and its
resources are freed) but its pod API objects are kept with a cleanup finalizer: nothing can
recreate them (a StatefulSet cannot create a pod whose name is still taken; in Hash mode the
retained leader holds back its gated replacement) until the user annotates the leader
``recover=true``. pulumi-lws does the same with two action verbs:

* **retain** = ``finalize {"add": [RETAIN_FINALIZER]}`` on every pod of the group that is not
  deleting yet (leader first), then ``delete`` them (Background), all uid-guarded, in that order
  (the finalizer is on the object before the delete can remove it). A pod already deleting
  cannot receive a finalizer (the API server forbids it) and is neither finalized nor deleted:
  it disappears as usual;
* **release** = ``finalize {"remove": [RETAIN_FINALIZER]}`` on every pod that carries it: the
  terminated objects go away and the group's controller recreates it.

Invariants: every action is uid-guarded; retain never adds a finalizer to a deleting pod nor
deletes a pod twice; release touches only pods carrying :data:`RETAIN_FINALIZER`; re-planning
on the snapshot after the actions ran yields no action (idempotent).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_lws.core.contract.snapshot import is_deleting
from pulumi_lws.core.contract.stage import Action
from pulumi_lws.core.features.retention import (
    RETAIN_FINALIZER,
    finalize_action,
    finalizers_of,
    has_retain_finalizer,
    metadata_of,
    release_actions,
)

__all__ = [
    "RETAIN_FINALIZER",
    "finalize_action",
    "finalizers_of",
    "has_retain_finalizer",
    "release_actions",
    "retain_actions",
]

Pod = Mapping[str, Any]


def retain_actions(pods: Sequence[Pod], reason: str) -> tuple[Action, ...]:
    """Finalize then delete (Background) every pod of ``pods`` that is not deleting yet.
    ``pods``: the group, leader first. All finalizers are added before the first delete."""
    live = [p for p in pods if not is_deleting(p)]
    adds = [finalize_action(p, "add", f"{reason}: retain the pod object") for p in live if not has_retain_finalizer(p)]
    deletes = [
        Action(
            "delete",
            "Pod",
            str(metadata_of(p).get("name") or ""),
            {"propagation": "Background"},
            uid=metadata_of(p).get("uid"),
            reason=f"{reason}: stop the pod, release its resources",
        )
        for p in live
    ]
    return tuple(adds + deletes)
