"""upstream ``UpdateModelServingStatus`` (l.2207, PR #1626) and ``SetCondition``, pure.

Counts: ``replicas`` = every group (Deleting and surge included); ``availableReplicas`` = Running
groups; ``updatedReplicas`` = non-Deleting groups on the update revision; ``currentReplicas`` =
groups (Deleting included) on the resulting current revision.

Revisions: ``currentRevision`` is promoted to the update revision only when the rollout is
complete (``updated == available == len == replicas``); while a rollout is active (an outdated
non-Deleting group the partition does not protect, or ``len != replicas``, or
``available != replicas``) the previous current revision is held even when no group uses it
(surge drain). Otherwise the previous one while a group still uses it, else the most common old
revision — **ties broken by count, then lexicographically** (upstream iterates a Go map: random).

Conditions (exactly one True, upstream's types, reasons and messages): ``UpdateInProgress``
(``GroupsUpdating``) while the rollout is active; else ``Available`` (``AllGroupsReady``,
``All Serving groups are ready``) when no group is progressing; else ``Progressing``
(``GroupProgressing``). Group lists are ordinals, formatted as Go's ``%v`` of ``[]int``.

pulumi-lws choice (kthena#1344, opt-in flag ``roles_must_be_ready``): a group counts as available
only while every one of its role replicas is Running.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pulumi_lws.core.k8s.conditions import Condition
from pulumi_lws.modelserving.groups import DELETING, GroupState, by_ordinal, is_running

AVAILABLE = "Available"
PROGRESSING = "Progressing"
UPDATE_IN_PROGRESS = "UpdateInProgress"
REASONS = {AVAILABLE: "AllGroupsReady", PROGRESSING: "GroupProgressing", UPDATE_IN_PROGRESS: "GroupsUpdating"}
ALL_GROUPS_READY = "All Serving groups are ready"
SOME_GROUPS_PROGRESSING = "Some groups is progressing"
SOME_GROUPS_UPDATED = "Updated Groups are"


@dataclass(frozen=True)
class ModelServingStatus:
    replicas: int
    available_replicas: int
    updated_replicas: int
    current_replicas: int
    current_revision: str
    update_revision: str
    conditions: tuple[Condition, ...] = ()
    rollout_active: bool = False
    rollout_complete: bool = False

    @property
    def last_condition_type(self) -> str | None:
        true = [c for c in self.conditions if c.status == "True"]
        return true[-1].type if true else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "replicas": self.replicas,
            "availableReplicas": self.available_replicas,
            "updatedReplicas": self.updated_replicas,
            "currentReplicas": self.current_replicas,
            "currentRevision": self.current_revision,
            "updateRevision": self.update_revision,
            "conditions": [c.to_wire() for c in self.conditions],
        }


def go_ints(values: Iterable[int]) -> str:
    """Go ``fmt.Sprintf("%v", []int{...})``: ``[1 2 3]``."""
    return "[" + " ".join(str(v) for v in values) + "]"


def most_common_revision(revisions: Iterable[str]) -> str:
    """The most frequent revision; ties -> the lexicographically smallest (deterministic)."""
    counts = Counter(revisions)
    if not counts:
        return ""
    return min(counts, key=lambda r: (-counts[r], r))


def group_available(g: GroupState, roles_must_be_ready: bool = False) -> bool:
    if not is_running(g):
        return False
    if roles_must_be_ready:
        return all(is_running(r) for r in g.roles if r.status != DELETING)
    return True


def new_condition(kind: str, message: str) -> Condition:
    return Condition(kind, "True", REASONS[kind], message)


def set_condition(previous: Sequence[Condition], new: Condition) -> tuple[Condition, ...]:
    """upstream ``SetCondition``: replace the same type when its status changes, flip the exclusive
    ones (Available vs Progressing/UpdateInProgress) to False, append when absent."""
    out = list(previous)
    found = False
    exclusive = {
        AVAILABLE: {PROGRESSING, UPDATE_IN_PROGRESS},
        PROGRESSING: {AVAILABLE},
        UPDATE_IN_PROGRESS: {AVAILABLE},
    }
    for i, c in enumerate(out):
        if c.type == new.type:
            if c.status != new.status:
                out[i] = new
            found = True
        elif c.type in exclusive.get(new.type, ()) and c.status == "True":
            out[i] = replace(c, status="False")
    if not found:
        out.append(new)
    return tuple(out)


def update_modelserving_status(
    groups: Sequence[GroupState],
    replicas: int,
    update_revision: str,
    previous_current_revision: str = "",
    partition: int = 0,
    *,
    previous_conditions: Sequence[Condition] = (),
    partition_mode: str = "position",
    roles_must_be_ready: bool = False,
) -> ModelServingStatus:
    """The status fields for ``groups`` (see the module docstring). ``partition_mode="position"`` is
    upstream's ``rolloutActive`` check; pulumi-lws passes ``"ordinal"``."""
    ordered = by_ordinal(groups)
    live = [g for g in ordered if g.status != DELETING]
    available = sum(1 for g in ordered if group_available(g, roles_must_be_ready))
    updated = [g for g in live if g.revision == update_revision]
    old = [g for g in live if g.revision != update_revision]
    eligible: Sequence[GroupState]
    if partition_mode == "position":
        eligible = ordered[partition:]
    else:
        eligible = [g for g in ordered if not 0 <= g.ordinal < partition]
    outdated_eligible = any(g.status != DELETING and g.revision != update_revision for g in eligible)
    active = outdated_eligible or len(ordered) != replicas or available != replicas
    complete = len(updated) == replicas and available == replicas and len(ordered) == replicas
    prev = previous_current_revision
    if not ordered:
        cur = update_revision
    else:
        cur = prev if prev and any(g.revision == prev for g in old) else ""
        if complete:
            cur = update_revision
        elif cur == "" and active and prev != "":
            cur = prev
        if cur == "":
            cur = update_revision if (complete or not old) else most_common_revision(g.revision for g in old)
    current = sum(1 for g in ordered if g.revision == cur)
    progressing = [g.ordinal for g in ordered if not group_available(g, roles_must_be_ready)]
    if active:
        cond = new_condition(
            UPDATE_IN_PROGRESS,
            f"{SOME_GROUPS_PROGRESSING}: {go_ints(progressing)}, "
            f"{SOME_GROUPS_UPDATED}: {go_ints(g.ordinal for g in updated)}",
        )
    elif not progressing:
        cond = new_condition(AVAILABLE, ALL_GROUPS_READY)
    else:
        cond = new_condition(PROGRESSING, f"{SOME_GROUPS_PROGRESSING}: {go_ints(progressing)}")
    return ModelServingStatus(
        len(ordered),
        available,
        len(updated),
        current,
        cur,
        update_revision,
        set_condition(previous_conditions, cond),
        active,
        complete,
    )
