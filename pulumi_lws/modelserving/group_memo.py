"""The ServingGroups of one observation, reusing each group's state from the previous observation
of the same ModelServing when the group's objects are the very same ones (a memo; output unchanged).

:func:`pulumi_lws.modelserving.observe.observe_groups` runs once per reconcile and once per trace
row, and between two observations of a rollout most groups are untouched: only the ~10-20% a tick
moves change an object. A snapshot whose observer promises that an identical object is an
unchanged one (:attr:`~pulumi_lws.core.contract.snapshot.Snapshot.reuse`, the simulator's) lets
the observation keep, per ModelServing ``(namespace, name)``:

* the **context**: everything a group's state reads besides its own objects — the ModelServing's
  name and its roles (``repr``: equal reprs of these plain-data models mean equal values; replicas,
  worker replicas and templates all in it), the catalog's target and stored roles (``repr``);
* per group ordinal: its replica keys, its StatefulSets and Pods (in replica order, held), its
  PodGroup (held, or None), and the :class:`~pulumi_lws.modelserving.groups.GroupState` computed
  from them;

and hands the state back when the context is equal and the keys equal and every object is the
same object (``is``; the memo holds them, so no identity is reused while remembered). A group's
state is a function of exactly these (observe.py's invariants: its revision and role replicas
read only its own objects, its status also its PodGroup, the spec and the catalog), and an
object's replica is a function of its labels, so the same objects in the same order are the same
replicas. Invariants:

* the result equals, group for group, the un-memoised observation (tests/modelserving/test_group_memo.py,
  on every tick of the example scenarios and of a fleet rollout, and a hypothesis property);
* without the promise (``snapshot.reuse is None``: literal snapshots, a live cluster) nothing is
  reused, nothing is kept;
* memory: per ModelServing only what its last observation returned and read (alive anyway in the
  observer's copies), for at most :data:`LIMIT` ModelServings (the least recently observed dropped first).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from operator import is_
from typing import TYPE_CHECKING, Any

from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.modelserving.groups import GroupState

if TYPE_CHECKING:
    from pulumi_lws.modelserving.api.modelserving import ModelServing
    from pulumi_lws.modelserving.revision import RevisionCatalog

#: ModelServings whose last observation is remembered, per observer
LIMIT = 64
OWNER = __name__

Obj = Mapping[str, Any]
#: group ordinal -> (replica keys, the group's objects, its PodGroup, its state)
Entries = dict[int, tuple[list[Any], tuple[Obj, ...], Obj | None, GroupState]]


def context(ms: ModelServing, catalog: RevisionCatalog) -> Hashable:
    """What a group's state reads besides its own objects (module docstring)."""
    return (ms.name, repr(ms.roles), catalog.target, repr(sorted(catalog.roles.items())))


class GroupMemo:
    """One observation's use of the memo: :meth:`get` the previous observation's state of a group,
    :meth:`put` every group's state (hit or computed); :meth:`close` keeps this observation's."""

    __slots__ = ("_ctx", "_ident", "_kept", "_memo", "_previous")

    def __init__(self, memo: dict[Any, Any], ms: ModelServing, catalog: RevisionCatalog) -> None:
        self._memo = memo
        self._ident = (ms.namespace, ms.name)
        self._ctx = context(ms, catalog)
        last = memo.pop(self._ident, None)
        self._previous: Entries = last[1] if last is not None and last[0] == self._ctx else {}
        self._kept: Entries = {}

    def get(self, g: int, keys: list[Any], objs: tuple[Obj, ...], podgroup: Obj | None) -> GroupState | None:
        """The state the previous observation computed for group ``g`` from these very objects; None if none."""
        hit = self._previous.get(g)
        if (
            hit is None
            or hit[2] is not podgroup
            or len(hit[1]) != len(objs)
            or hit[0] != keys
            or not all(map(is_, hit[1], objs))
        ):
            return None
        return hit[3]

    def put(self, g: int, keys: list[Any], objs: tuple[Obj, ...], podgroup: Obj | None, state: GroupState) -> None:
        self._kept[g] = (keys, objs, podgroup, state)

    def close(self) -> None:
        """Remember this observation's groups (only these) for the next one."""
        self._memo[self._ident] = (self._ctx, self._kept)
        while len(self._memo) > LIMIT:
            del self._memo[next(iter(self._memo))]


def group_memo(snapshot: Snapshot, ms: ModelServing, catalog: RevisionCatalog) -> GroupMemo | None:
    """The memo of ``ms``'s groups under ``snapshot``'s observer; None when it promises nothing."""
    reuse = snapshot.reuse
    return None if reuse is None else GroupMemo(reuse.memo(OWNER), ms, catalog)


def group_objects(sts_lists: Sequence[Sequence[Obj]], pod_lists: Sequence[Sequence[Obj]]) -> tuple[Obj, ...]:
    """A group's StatefulSets then its Pods, replica by replica (what :meth:`GroupMemo.get` compares)."""
    return (*(o for objs in sts_lists for o in objs), *(o for objs in pod_lists for o in objs))
