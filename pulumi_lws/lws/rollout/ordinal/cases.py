"""Plain-word descriptions of the Ordinal planner's cases, for people reading a plan or a stage.

The case ids (``"1"``, ``"2"``, ``"3"``, ``"3b"``, ``"4"``, ``"5"``, ``"rf"``) are the branches of
:func:`pulumi_lws.lws.rollout.ordinal.algo._inner` (upstream's rollingUpdateParameters) and of the
RolloutFirst rule; they stay machine-readable (``Stage.case``, the JSON ``case`` field). Human
output shows :func:`describe_case` instead. Invariant: every case id the planner emits has an
entry here (a test checks it), so no description ever falls back to a bare number.
"""

from __future__ import annotations

from pulumi_lws.lws.rollout.budget import ROLLOUT_FIRST_CASE

CASE_WORDS: dict[str, str] = {
    "1": "no leader StatefulSet yet: created with every group on the current revision",
    "2": "template changed: new revision admitted from the top ordinal",
    "3": "partition 0: every group admitted to the current revision",
    "3b": "scaling up: added groups created on the current revision",
    "4": "replica count changed mid-rollout: partition held while the surge is resized",
    "5": "rolling update: partition lowered as updated groups become ready",
    ROLLOUT_FIRST_CASE: "RolloutFirst: old groups replaced within maxUnavailable before scaling up",
}


def describe_case(case: str | None) -> str:
    """The plain-word description of ``case`` ('' for None; the id itself only if unknown)."""
    if not case:
        return ""
    return CASE_WORDS.get(case, f"planner step {case}")
