"""Hash identity while paused: admit the replacement of a group failure handling recreated (pure).

While a LeaderWorkerSet is paused (:mod:`pulumi_lws.core.features.control`) every admission the Hash
planner plans is a rollout move and is held. But a group that failure handling recreates comes
back as a new, gated leader made by its ReplicaSet (a paused Deployment creates and scales no
ReplicaSet; a ReplicaSet still replaces a pod that went away). Admitting that leader restores a
group the pause keeps; admitting any other gated leader (a surge leader the Deployment made
before the pause, an old-revision replacement made before it) would move the rollout.

The two look alike in the cluster once the failed group is gone (PostTermination waits for
exactly that), so the pause records what it holds, where the restart counts already live: the
leader Deployment's annotation :data:`HELD_GROUPS_ANNOTATION` = ``"<revision>=<n>,..."``, the
groups of each revision that existed when the pause began (leaders past the gate: admitted,
deleting, terminal or exhausted). The record is written by an ``annotate`` action of the first
paused reconcile (the held Deployment is registered with it and ``spec.paused: true`` in the same
object, so one never lands without the other) and read back while the observed Deployment is
paused; otherwise it is recomputed (a record from an earlier pause is stale) and, unpaused,
removed.

While paused, per revision, the newest gated leaders awaiting admission are admitted up to
``held - occupied`` (occupied = admitted live + exhausted leaders of that revision), still under
the ``G - T`` rule of the group-replacement gate (PostTermination: the replacement waits for the
failed group's pods to be gone). Such an ``ungate`` carries ``params[RECOVERY_PARAM] = True``, the
mark :func:`pulumi_lws.core.features.hold.hold` keeps.

Invariants: pure; while paused no revision ever has more groups past the gate than it had when
the pause began; the record is a function of observed state only (no clock).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_lws.core.contract.snapshot import Snapshot, annotations_of
from pulumi_lws.core.contract.stage import Action, Stage
from pulumi_lws.core.features.hold import RECOVERY_PARAM
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.observe import revision_of
from pulumi_lws.lws.rollout.failure.hash import admitted_live
from pulumi_lws.lws.rollout.hash.admission import (
    awaits_admission,
    creation_order,
    is_exhausted,
    is_gated,
    replacement_rank,
    tearing_down_groups,
)
from pulumi_lws.lws.rollout.hash.planner import leader_pods, lws_pods

HELD_GROUPS_ANNOTATION = "pulumi-lws.io/held-groups"

Pod = Mapping[str, Any]


def dump_held(held: Mapping[str, int]) -> str:
    return ",".join(f"{rev}={n}" for rev, n in sorted(held.items()) if n > 0)


def parse_held(raw: Any) -> dict[str, int] | None:
    """``"<rev>=<n>,..."`` -> ``{rev: n}``; None when absent or malformed (then recomputed)."""
    if raw is None:
        return None
    out: dict[str, int] = {}
    for part in filter(None, str(raw).split(",")):
        rev, _, n = part.partition("=")
        if not rev or not n.isdigit():
            return None
        out[rev] = int(n)
    return out


def held_now(leaders: Sequence[Pod]) -> dict[str, int]:
    """Groups per revision that exist now: leaders past the gate, whatever their state."""
    return dict(Counter(str(revision_of(p)) for p in leaders if not is_gated(p) and revision_of(p)))


def held_record(deployment: Mapping[str, Any] | None, leaders: Sequence[Pod]) -> tuple[dict[str, int], bool]:
    """``(held groups per revision, whether the Deployment must be annotated with them)``."""
    raw = None if deployment is None else annotations_of(deployment).get(HELD_GROUPS_ANNOTATION)
    recorded = parse_held(raw)
    if deployment is not None and ((deployment.get("spec") or {}).get("paused") is True) and recorded is not None:
        return recorded, False
    held = held_now(leaders)
    return held, deployment is not None and raw != dump_held(held)


def recovery_admissions(
    lws: LeaderWorkerSet, leaders: Sequence[Pod], pods: Sequence[Pod], held: Mapping[str, int], target: str
) -> list[Pod]:
    """The gated leaders to admit while paused (module docstring), in creation order."""
    chosen: list[Pod] = []
    for rev, n in sorted(held.items()):
        same = [p for p in leaders if revision_of(p) == rev]
        occupied = sum(1 for p in same if admitted_live(p) or is_exhausted(p))
        waiting = sorted((p for p in same if awaits_admission(p)), key=creation_order, reverse=True)
        chosen += waiting[: max(0, n - occupied)]
    tearing = len(tearing_down_groups(lws.namespace, pods, lws.spec.group_replacement_policy))
    if tearing:
        ranks = {_name(p): replacement_rank(p, leaders, target) for p in chosen}
        chosen = [p for p in chosen if ranks[_name(p)][0] < ranks[_name(p)][1] - tearing]
    return sorted(chosen, key=creation_order)


def _name(pod: Pod) -> str:
    return str((pod.get("metadata") or {}).get("name") or "")


def with_paused_recovery(lws: LeaderWorkerSet, snapshot: Snapshot, stage: Stage, paused: bool) -> Stage:
    """``stage`` with, while paused, the held-groups record and the recovery admissions (marked
    ``ungate`` actions replacing the planner's for the same pods); unpaused, the record removed."""
    deployment = snapshot.get("Deployment", lws.name)
    if not paused or stage.complete:
        if deployment is None or HELD_GROUPS_ANNOTATION not in annotations_of(deployment):
            return stage
        drop = Action(
            "annotate",
            "Deployment",
            lws.name,
            {"annotations": {HELD_GROUPS_ANNOTATION: None}},
            uid=(deployment.get("metadata") or {}).get("uid"),
            reason="rollout resumed: held-groups record dropped",
        )
        return dataclasses.replace(stage, actions=stage.actions + (drop,))
    pods = lws_pods(snapshot, lws)
    leaders = leader_pods(pods)
    held, record = held_record(deployment, leaders)
    admit = {_name(p): p for p in recovery_admissions(lws, leaders, pods, held, stage.target_revision)}
    actions: list[Action] = []
    if record and deployment is not None:  # (held_record asks for a record only when there is a Deployment)
        actions.append(
            Action(
                "annotate",
                "Deployment",
                lws.name,
                {"annotations": {HELD_GROUPS_ANNOTATION: dump_held(held)}},
                uid=(deployment.get("metadata") or {}).get("uid"),
                reason="rollout paused: record the groups the pause holds",
            )
        )
    marked = set()
    for a in stage.actions:
        if a.verb == "ungate" and a.kind == "Pod" and a.name in admit:
            a = dataclasses.replace(a, params={**a.params, RECOVERY_PARAM: True})
            marked.add(a.name)
        actions.append(a)
    for name, pod in admit.items():
        if name not in marked:
            actions.append(
                Action(
                    "ungate",
                    "Pod",
                    name,
                    {"gate": L.GROUP_REPLACEMENT_GATE, RECOVERY_PARAM: True},
                    uid=(pod.get("metadata") or {}).get("uid"),
                    reason=f"Leader pod {name} replaces a group recreated while paused",
                )
            )
    return dataclasses.replace(stage, actions=tuple(actions))
