"""LWS status for Hash mode: upstream ``updateStatusHash`` from the observed groups (reference §2.2).

Upstream copies ``replicas``/``readyReplicas``/``updatedReplicas`` from the leader Deployment's
status. pulumi-lws counts the same quantities from the observed groups (the planner's
:class:`GroupView` s), so the numbers agree with the stage table and need no Deployment status:

* ``replicas``: live leaders (not deleting; gated and surplus surge leaders included), as the
  Deployment's ``status.replicas`` counts every active pod of its ReplicaSets;
* ``readyReplicas``: live leaders whose group is ready: leader Running+Ready (its ``Ready``
  includes the ``group-ready`` readiness gate) and, for size > 1, the worker StatefulSet ready;
* ``updatedReplicas``: live leaders on the target revision (the new ReplicaSet's pods).

Conditions (mutually exclusive as upstream, all three listed with True/False; same reasons and
messages as Ordinal, :func:`pulumi_lws.lws.status.ordinal.conditions`):

* ``Available`` (``AllGroupsReady``) when replicas = ready = updated = ``spec.replicas`` **and**
  the Deployment has observed its latest generation (``status.observedGeneration >=
  metadata.generation``). Upstream ignores the generation and reports Available too early
  (reference §2.8); here a Deployment whose controller has not seen its latest spec never
  makes the set Available;
* else ``UpdateInProgress`` + ``Progressing`` (``GroupsUpdating``) while updated < replicas;
* else ``Progressing`` (``GroupsProgressing``).

Pure: no I/O; returns a plain dict in wire format.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_lws.core.contract.stage import GroupView
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.status.ordinal import AVAILABLE, PROGRESSING, UPDATE_IN_PROGRESS, conditions

#: GroupView phases of groups that are not live leaders (leader deleting or gone).
NOT_LIVE = ("terminating",)


def is_live_group(group: GroupView) -> bool:
    """A group with an observed leader pod that is not being deleted."""
    return group.exists and bool(group.leader) and group.phase not in NOT_LIVE


def hash_counts(groups: Sequence[GroupView]) -> tuple[int, int, int]:
    """``(replicas, readyReplicas, updatedReplicas)`` over the live groups."""
    live = [g for g in groups if is_live_group(g)]
    return len(live), sum(1 for g in live if g.ready), sum(1 for g in live if g.updated)


def deployment_caught_up(deployment: Mapping[str, Any] | None) -> bool:
    """The Deployment exists and its controller has observed its latest generation (a missing
    ``metadata.generation`` counts as observed: nothing to compare against)."""
    if deployment is None:
        return False
    generation = (deployment.get("metadata") or {}).get("generation")
    if generation is None:
        return True
    observed = (deployment.get("status") or {}).get("observedGeneration")
    return int(observed or 0) >= int(generation)


def hash_condition_state(replicas: int, ready: int, updated: int, spec_replicas: int, caught_up: bool) -> str:
    """Which exclusive condition holds: ``Available``, ``UpdateInProgress`` or ``Progressing``."""
    if caught_up and replicas == ready == updated == spec_replicas:
        return AVAILABLE
    if updated < replicas:
        return UPDATE_IN_PROGRESS
    return PROGRESSING


def hash_status(
    lws_name: str, groups: Sequence[GroupView], spec_replicas: int, deployment: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The LWS ``status`` dict for Hash mode (see module docstring)."""
    replicas, ready, updated = hash_counts(groups)
    state = hash_condition_state(replicas, ready, updated, spec_replicas, deployment_caught_up(deployment))
    return {
        "replicas": replicas,
        "readyReplicas": ready,
        "updatedReplicas": updated,
        "hpaPodSelector": f"{L.NAME}={lws_name},{L.WORKER_INDEX}=0",
        "conditions": conditions(state),
        "updateDone": state == AVAILABLE,
    }
