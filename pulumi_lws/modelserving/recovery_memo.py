"""Which role replicas recovery must look at, reusing the previous reconcile's answer for a replica
whose pods are the very same objects (a memo; :func:`~pulumi_lws.modelserving.recovery.plan_recovery`
unchanged).

Every reconcile asks of every live role replica whether its pods can make recovery act or wait
(:func:`~pulumi_lws.modelserving.recovery._needs_a_look`: a failed pod, or two generations); the
answer is a function of the replica's pods (their content and order) and the recovery policy
alone, and between two reconciles most replicas' pods are untouched. Under the observer's promise
(:attr:`~pulumi_lws.core.contract.snapshot.Snapshot.reuse`: an identical object is an unchanged
one) the memo keeps, per ModelServing ``(namespace, name)`` and replica key, the pods (held) and
the answer, and hands the answer back when the policy is equal and the pods are the same objects
in the same order. Invariants:

* every answer equals the un-memoised one (tests/modelserving/test_recovery_memo.py:
  every reconcile of the example scenarios, of fleet rollouts with failing pods, and a hypothesis
  property);
* without the promise (``snapshot.reuse is None``) nothing is reused, nothing is kept;
* memory: per ModelServing only the replicas its last reconcile asked about (their pods alive
  anyway in the observer's copies), for at most :data:`LIMIT` ModelServings (least recent first out).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from operator import is_
from typing import Any

from pulumi_lws.core.contract.snapshot import Snapshot

#: ModelServings whose last reconcile's answers are remembered, per observer
LIMIT = 64
OWNER = __name__

Pod = Mapping[str, Any]


class LookMemo:
    """One reconcile's use of the memo: :meth:`needs` answers (from the previous reconcile's
    answer when the pods are the same), :meth:`close` keeps this reconcile's answers."""

    __slots__ = ("_ident", "_kept", "_memo", "_policy", "_previous")

    def __init__(self, memo: dict[Any, Any], ident: Hashable, policy: str) -> None:
        self._memo, self._ident, self._policy = memo, ident, policy
        last = memo.pop(ident, None)
        self._previous: dict[Any, tuple[tuple[Pod, ...], bool]] = (
            last[1] if last is not None and last[0] == policy else {}
        )
        self._kept: dict[Any, tuple[tuple[Pod, ...], bool]] = {}

    def needs(self, key: Hashable, pods: Sequence[Pod], compute: Callable[[Sequence[Pod], str], bool]) -> bool:
        """``compute(pods, policy)``, or the previous answer for these very pods of replica ``key``."""
        hit = self._previous.get(key)
        if hit is not None and len(hit[0]) == len(pods) and all(map(is_, hit[0], pods)):
            answer = hit[1]
        else:
            answer = compute(pods, self._policy)
        self._kept[key] = (tuple(pods), answer)
        return answer

    def close(self) -> None:
        """Remember this reconcile's answers (only these) for the next one."""
        self._memo[self._ident] = (self._policy, self._kept)
        while len(self._memo) > LIMIT:
            del self._memo[next(iter(self._memo))]


def look_memo(snapshot: Snapshot, ident: Hashable, policy: str) -> LookMemo | None:
    """The memo of one ModelServing (``ident``: its namespace and name) under ``snapshot``'s
    observer; None when it promises nothing."""
    reuse = snapshot.reuse
    return None if reuse is None else LookMemo(reuse.memo(OWNER), ident, policy)
