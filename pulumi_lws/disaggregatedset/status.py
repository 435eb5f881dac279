"""upstream ``updateStatus`` / ``disaggregatedSetCondition`` / ``setDisaggregatedSetCondition``, pure.

``roleStatuses``: one entry per **spec** role, in spec order (a role removed from the spec has
none, even while its old children drain): ``replicas`` / ``readyReplicas`` summed over every
slice and revision of the role's children (their LWS ``status.replicas`` /
``status.readyReplicas``); ``updatedReplicas`` the children's ``status.updatedReplicas`` of the
**target** revision only.

Conditions (addenda §4.7): ``Available`` (``AllRolesReady``) when every role has ``Σreplicas ==
Σready == Σupdated == target × slices``, else ``Progressing`` (``RolloutInProgress``); an
External role without a scaler (``target`` None) is never available. The two are mutually
exclusive: setting one True flips the other, when present and True, to False with the same
reason and message; ``lastTransitionTime`` changes only when a condition's status flips.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pulumi_lws.core.k8s.conditions import FALSE, TRUE, Condition

AVAILABLE = "Available"
PROGRESSING = "Progressing"
ALL_ROLES_READY = "AllRolesReady"
ROLLOUT_IN_PROGRESS = "RolloutInProgress"
AVAILABLE_MESSAGE = "All roles have reached their desired replica count, ready and updated to the current revision"
PROGRESSING_MESSAGE = (
    "Not all roles have reached their desired replica count, ready and updated to the current revision"
)


@dataclass(frozen=True)
class ChildStatus:
    """One child LWS's status as observed (its role, slice and revision labels)."""

    role: str
    revision: str
    replicas: int = 0
    ready_replicas: int = 0
    updated_replicas: int = 0
    slice: int = 0


@dataclass(frozen=True)
class RoleStatus:
    name: str
    replicas: int = 0
    ready_replicas: int = 0
    updated_replicas: int = 0

    def to_wire(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "replicas": self.replicas,
            "readyReplicas": self.ready_replicas,
            "updatedReplicas": self.updated_replicas,
        }


@dataclass(frozen=True)
class DisaggregatedSetStatus:
    role_statuses: tuple[RoleStatus, ...]
    conditions: tuple[Condition, ...]
    available: bool
    observed_generation: int | None = None

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "roleStatuses": [r.to_wire() for r in self.role_statuses],
            "conditions": [c.to_wire() for c in self.conditions],
        }
        if self.observed_generation is not None:
            out["observedGeneration"] = self.observed_generation
        return out


def role_statuses(
    roles: Sequence[str], children: Iterable[ChildStatus], target_revision: str
) -> tuple[RoleStatus, ...]:
    """Per spec role: replicas/ready over every child, updated over the target revision's children."""
    children = list(children)
    out = []
    for name in roles:
        mine = [c for c in children if c.role == name]
        out.append(
            RoleStatus(
                name,
                sum(c.replicas for c in mine),
                sum(c.ready_replicas for c in mine),
                sum(c.updated_replicas for c in mine if c.revision == target_revision),
            )
        )
    return tuple(out)


def is_available(statuses: Sequence[RoleStatus], targets: Sequence[int | None], slices: int) -> bool:
    """Every role at ``Σreplicas == Σready == Σupdated == target × slices`` (None target: never)."""
    for s, t in zip(statuses, targets):
        if t is None:
            return False
        desired = t * slices
        if not (s.replicas == s.ready_replicas == s.updated_replicas == desired):
            return False
    return True


def condition(available: bool, generation: int | None = None) -> Condition:
    """``disaggregatedSetCondition``: the condition that is True."""
    if available:
        return Condition(AVAILABLE, TRUE, ALL_ROLES_READY, AVAILABLE_MESSAGE, generation)
    return Condition(PROGRESSING, TRUE, ROLLOUT_IN_PROGRESS, PROGRESSING_MESSAGE, generation)


def _exclusive(a: str, b: str) -> bool:
    return {a, b} == {AVAILABLE, PROGRESSING}


def set_condition(previous: Sequence[Condition], new: Condition, now: str | None = None) -> tuple[Condition, ...]:
    """``setDisaggregatedSetCondition``: record ``new`` and flip its exclusive partner (module doc)."""
    out = []
    found = False
    for cond in previous:
        if cond.type == new.type:
            found = True
            if cond.status != new.status:
                out.append(replace(new, last_transition_time=now))
            else:
                out.append(
                    replace(cond, observed_generation=new.observed_generation, reason=new.reason, message=new.message)
                )
            continue
        if not _exclusive(cond.type, new.type):
            out.append(cond)
        elif cond.status == TRUE:
            out.append(
                replace(
                    cond,
                    status=FALSE,
                    last_transition_time=now,
                    observed_generation=new.observed_generation,
                    reason=new.reason,
                    message=new.message,
                )
            )
        else:
            out.append(replace(cond, observed_generation=new.observed_generation))
    if not found:
        out.append(replace(new, last_transition_time=now))
    return tuple(out)


def update_status(
    roles: Sequence[tuple[str, int | None]],
    children: Iterable[ChildStatus],
    target_revision: str,
    slices: int,
    previous: Sequence[Condition] = (),
    generation: int | None = None,
    now: str | None = None,
) -> DisaggregatedSetStatus:
    """``updateStatus``: ``roles`` = (name, per-slice target replicas; None for an External role
    without a scaler) in spec order."""
    statuses = role_statuses([n for n, _ in roles], children, target_revision)
    available = is_available(statuses, [t for _, t in roles], slices)
    return DisaggregatedSetStatus(
        statuses, set_condition(previous, condition(available, generation), now), available, generation
    )
