"""Plain-word descriptions of the DisaggregatedSet stage planner's cases, for people reading a stage.

The case ids (``Stage.case``: slice 0's planner branch, or ``steady``) stay machine-readable (the
component's ``stage.case`` output, JSON); human output — the component's preview log, ``status`` —
shows these words instead, through the API's ``Workload.case_words``, as LeaderWorkerSet's. They
say what the stage does in the rollout's own terms (roles, old and new groups, the barrier), never
the planner's function names. Invariant: every id the planner emits has an entry (a test checks
it), so no description falls back to ``planner step <id>``.
"""

from __future__ import annotations

from pulumi_lws.disaggregatedset.planner import (
    CORRECT_ABNORMAL,
    FORCE_DRAIN,
    NEW_AT_TARGET,
    PROPORTIONAL_DRAIN,
    SCALE_UP,
)
from pulumi_lws.disaggregatedset.rollout.slice_plan import (
    BARRIER,
    PLANNER_DONE,
    RAISE_FIRST,
    REMOVED_SLICE,
    STEADY,
)

CASE_WORDS: dict[str, str] = {
    STEADY: "one revision: each role's groups set to its target replicas",
    SCALE_UP: "rolling update: new groups added to each role within maxSurge",
    PROPORTIONAL_DRAIN: "rolling update: old groups removed from every role in proportion",
    FORCE_DRAIN: "rolling update: old groups removed to make room for new ones",
    NEW_AT_TARGET: "rolling update: every role's new groups at target; the remaining old groups removed",
    CORRECT_ABNORMAL: "rolling update: a role's old groups cut back to where the rollout started",
    RAISE_FIRST: "rolling update: new groups added first, so removing old ones keeps the availability floor",
    BARRIER: "rolling update: waiting until every role's new groups are ready",
    PLANNER_DONE: "rolling update: nothing left to move; old revisions cleaned up",
    REMOVED_SLICE: "a slice removed from the spec: its groups deleted",
}
