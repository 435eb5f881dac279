"""The blockers and notes of a stage (:mod:`~pulumi_lws.disaggregatedset.rollout.stage_planner`).

* :data:`WAITING` — some spec role's new child has unready replicas: the barrier holds, nothing
  advances; the message names each role, revision and ready count;
* :data:`PROGRESS_DEADLINE_EXCEEDED` — the same, once ``progress_deadline_seconds`` passed since
  the new revision's replicas were last raised: named with remedies, old capacity kept;
* :func:`steady_unready` — the same barrier once no old revision is left (the steady branch holds
  its raises while it lists a child);
* :func:`held_notes` — which roles' drain (floor) or raise (ceiling) waits this stage.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pulumi_lws.core.contract.stage import Blocker
from pulumi_lws.disaggregatedset.rollout.apply import Applied
from pulumi_lws.disaggregatedset.rollout.observation import ChildObservation

WAITING = "waiting-for-roles"
PROGRESS_DEADLINE_EXCEEDED = "progress-deadline-exceeded"


def _short(revision: str) -> str:
    return revision[:8]


def _waiting_message(pending: Sequence[tuple[str, str, ChildObservation]]) -> str:
    return "; ".join(
        f"waiting for role {role} of revision {_short(rev)} to have {c.replicas}/{c.replicas} ready "
        f"replicas ({c.ready} ready)"
        for role, rev, c in pending
    )


def barrier_blocker(
    slice_: int,
    pending: Sequence[tuple[str, str, ChildObservation]],
    progress_deadline_seconds: float | None,
    new_scaled_at: float | None,
    now: float | None,
    *,
    old_kept: bool = True,
) -> Blocker:
    groups = tuple(f"{slice_}/{role}/{rev}" for role, rev, _ in pending)
    if progress_deadline_seconds is not None and new_scaled_at is not None and now is not None:
        waited = now - new_scaled_at
        if waited > progress_deadline_seconds:
            detail = ", ".join(
                f"role {role} of revision {_short(rev)} has {c.ready}/{c.replicas} ready replicas"
                for role, rev, c in pending
            )
            return Blocker(
                PROGRESS_DEADLINE_EXCEEDED,
                f"slice {slice_}: {detail} {int(waited)}s after its last scale-up (progress deadline "
                f"{int(progress_deadline_seconds)}s)"
                + ("; the old revisions keep their capacity" if old_kept else "; no old revision is left"),
                groups,
                (
                    "check the new revision's pods (image, scheduling, readiness probes)",
                    "fix the template or roll back; the old revisions still serve",
                ),
            )
    return Blocker(WAITING, _waiting_message(pending), groups)


#: note of a raise applied on declared counts while old groups still run beyond them (nothing else moves)
OLD_GROUPS_NOTE = (
    "slice {slice}: raise of {roles} applied on declared counts: old groups still running beyond "
    "their declared replicas (held surge of an unready old revision) exceed the ceiling until gone"
)


def steady_unready(
    target: str, children: Mapping[str, ChildObservation | None]
) -> list[tuple[str, str, ChildObservation]]:
    """The steady branch's barrier (no old revision left): the target children (by spec role; None:
    none yet) with unready replicas (``ready < spec.replicas``, upstream's ``isRevisionStable``).
    While any is listed no target child is raised: an early full drain (``maxUnavailable``) reaches
    the steady branch before the target revision is at its targets, and raising every role to its
    target then would move roles ahead of the others' readiness. Observed state only (pure)."""
    return [(role, target, c) for role, c in children.items() if c is not None and c.ready < c.replicas]


def steady_held_note(slice_: int, held: Sequence[str]) -> str:
    return (
        f"slice {slice_}: raise of {', '.join(held)} waits for every role's new replicas to be ready "
        "(barrier; no old revision left)"
    )


def held_notes(slice_: int, applied: Applied) -> list[str]:
    notes = []
    if applied.held_drain:
        notes.append(
            f"slice {slice_}: drain of {', '.join(applied.held_drain)} waits for ready new replicas "
            "(availability floor on ready replicas)"
        )
    if applied.held_raise:
        notes.append(
            f"slice {slice_}: raise of {', '.join(applied.held_raise)} waits for the old replicas to "
            "drain (surge ceiling)"
        )
    return notes
