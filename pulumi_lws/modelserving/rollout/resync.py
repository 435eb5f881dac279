"""What the next replica sync would recreate at one ordinal, answered in O(log n) per question.

The ServingGroup fixed point (:mod:`.servinggroup`) asks, for every group the rolling deletion
picks: "if this group were gone, would ``sync_servinggroup_replicas`` recreate exactly its
ordinal, and on which revision?" Asking ``sync_servinggroup_replicas`` itself costs O(groups) per
pick — O(maxUnavailable x groups) per pass. :class:`ResyncIndex` answers the same question from
a few counters over the planned state, kept current as the picks are applied.

Why this is the same answer (``controller_revision_create_fails`` is False in the fixed point,
and the update revision is always stored):

* the sync without ``o`` counts ``len - 1`` groups and expects ``replicas`` (+ ``maxSurge`` while
  an updateable outdated group is left — any status; ``choices.partition`` decides which are
  protected); it only creates when ``len - 1 < expected``, ``expected - (len - 1)`` of them;
* it creates the lowest missing ordinals of ``[0, expected)``: ``o`` (missing once removed) is
  among them iff ``0 <= o < expected`` and fewer than that many ordinals below ``o`` are missing;
* the only error it can hit is a protected ordinal whose current revision is not stored; it hits
  it on the first ordinal it visits — the lowest missing one — or never (every later one is higher);
* a protected ordinal (``0 < P``, ``o < P``) takes ``current_revision or update_revision``, any
  other the update revision.

Statuses never enter: only ordinals, revisions and the count do.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Collection, Mapping

from pulumi_lws.modelserving.rollout.budgets import Choices, ServingGroupBudget


class ResyncIndex:
    """The planned state's ordinals (sorted) and its updateable-outdated count, kept incrementally.

    Invariant: ``ordinals`` is ``sorted(revisions)`` and ``outdated_eligible`` the number of
    groups the partition does not protect whose revision is not the update revision.
    """

    def __init__(
        self,
        revisions: Mapping[int, str],
        budget: ServingGroupBudget,
        update_revision: str,
        current_revision: str | None,
        stored: Collection[str],
        choices: Choices,
    ) -> None:
        self.budget, self.update_revision, self.current_revision = budget, update_revision, current_revision
        self.position = choices.partition == "position"
        #: scaling up stops at the first protected missing ordinal (its revision has no template)
        self.protected_fails = bool(current_revision) and current_revision not in stored and budget.partition > 0
        self.revisions = dict(revisions)
        self._reindex()

    def _reindex(self) -> None:
        self.ordinals = sorted(self.revisions)
        self.zero = bisect_left(self.ordinals, 0)
        self.outdated_eligible = sum(1 for o in self.ordinals if self._eligible(o) and self._outdated(o))

    def _outdated(self, o: int) -> bool:
        return self.revisions[o] != self.update_revision

    def _eligible(self, o: int) -> bool:
        if self.position:
            return bisect_left(self.ordinals, o) >= self.budget.partition
        return not 0 <= o < self.budget.partition

    def _outdated_eligible_without(self, o: int) -> int:
        p = self.budget.partition
        if not self.position:
            return self.outdated_eligible - (self._eligible(o) and self._outdated(o))
        if bisect_left(self.ordinals, o) >= p:
            return self.outdated_eligible - self._outdated(o)
        # o is protected: removing it moves the first eligible group into the protected prefix
        if p >= len(self.ordinals):
            return 0
        return self.outdated_eligible - self._outdated(self.ordinals[p])

    def _below(self, o: int) -> int:
        """How many planned ordinals lie in ``[0, o)``."""
        return bisect_left(self.ordinals, o) - self.zero

    def _first_missing(self) -> int:
        """The lowest non-negative ordinal not planned (binary search: ``ordinals[zero + i] >= i``)."""
        lo, hi = 0, len(self.ordinals) - self.zero
        while lo < hi:
            mid = (lo + hi) // 2
            if self.ordinals[self.zero + mid] == mid:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def recreated_revision(self, o: int) -> str | None:
        """The revision the sync would recreate ``o`` on were ``o`` gone; None if it would not."""
        b = self.budget
        expected = b.replicas
        if b.max_surge > 0 and self._outdated_eligible_without(o) > 0:
            expected += b.max_surge
        remaining = len(self.ordinals) - 1
        if remaining >= expected or not 0 <= o < expected:
            return None
        if (o - self._below(o)) >= expected - remaining:  # missing ordinals below o exhaust the creations
            return None
        if self.protected_fails and min(self._first_missing(), o) < b.partition:
            return None
        if b.partition > 0 and o < b.partition:
            return self.current_revision or self.update_revision
        return self.update_revision

    def set_revision(self, o: int, revision: str) -> None:
        was = self._eligible(o) and self._outdated(o)
        self.revisions[o] = revision
        self.outdated_eligible += (self._eligible(o) and self._outdated(o)) - was

    def remove(self, o: int) -> None:
        """``o`` left the planned state (a group created this stage, deleted again): rare, O(n)."""
        del self.revisions[o]
        self._reindex()
