"""The parts one ModelServing render shares between the objects it returns (docs/performance.md,
"Rendering"; issue 27: a ServingGroup is 7 objects, and most of what they carry is the same in
every group).

Invariants:

* a shared part is equal, field for field and in key order, to the part each object would have
  built for itself: sharing changes no rendered byte (``tests/modelserving/render/test_ms_shared_parts.py``
  compares every rendered fleet with a render that shares nothing);
* **copy on write**: no renderer and no consumer mutates a rendered manifest in place (they already
  did not: the simulator's store copies what it keeps and its apply only reads what it registers,
  the CLI and the components serialise or copy), so a part may be held by any number of
  objects, of this render or of later ones;
* a part is shared between objects, **never between two places of one manifest** (a YAML dump of
  one document would then need an alias): each one sits at a single path of each object holding it;
* one :class:`SharedParts` lives for one render call, but two renders' outputs may share objects
  and parts: a role replica's objects are reused from the previous render of the same
  ModelServing when their inputs are equal (:mod:`.replica_memo`), parts and all — so read-only
  holds across renders too.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from pulumi_lws.modelserving import names

T = TypeVar("T")


class SharedParts:
    """A memo of constant parts (:meth:`part`) and of the parts of the group or replica being
    rendered (:meth:`latest`: one per slot, replaced when the key changes)."""

    def __init__(self) -> None:
        self._parts: dict[Hashable, Any] = {}
        self._latest: dict[str, tuple[Hashable, Any]] = {}

    def part(self, key: Hashable, make: Callable[[], T]) -> T:
        """The part ``make()`` builds, built once per ``key`` in this render (keys are constants
        or bounded by roles x replicas per group, never by the number of groups)."""
        try:
            return self._parts[key]  # type: ignore[no-any-return]
        except KeyError:
            value = self._parts[key] = make()
            return value

    def latest(self, slot: str, key: Hashable, make: Callable[[], T]) -> T:
        """``make()`` for ``key``, kept while the calls for ``slot`` repeat ``key`` (the objects of
        one group or one role replica are rendered together): bounded memory, whatever the fleet."""
        held = self._latest.get(slot)
        if held is None or held[0] != key:
            held = self._latest[slot] = (key, make())
        return held[1]

    def group_name(self, ms: str, g: int) -> str:
        """``names.group_name(ms, g)`` (also the PodGroup's name): one string per group."""
        return self.latest("group", (ms, g), lambda: names.group_name(ms, g))
