"""An observer's promise that lets readers reuse work across its snapshots (:attr:`Snapshot.reuse`).

A :class:`Reuse` is handed out by one observer with every snapshot it makes, and it promises:
an object of a later snapshot that is the *very same* object (``is``) as one of an earlier
snapshot carrying the same :class:`Reuse` has the same content — the observer makes a new object
whenever the stored one changes and nobody writes the objects it hands out (the simulator's
``Store.observed`` copies, re-made on every ``resourceVersion``). Snapshots without it (literal
dicts in tests, a live cluster's reads) promise nothing: a reader must not reuse anything there.

A reader keeps what it derived under its own name (:meth:`Reuse.memo`) and must keep it
invisible: its answers are exactly the un-memoised ones, it keys only on the objects (held, so
no identity is reused while remembered) and on values, and it bounds its own memory.
"""

from __future__ import annotations

from typing import Any


class Reuse:
    """One observer's promise (module docstring) and the memos readers keep under it."""

    __slots__ = ("_memos",)

    def __init__(self) -> None:
        self._memos: dict[str, dict[Any, Any]] = {}

    def memo(self, owner: str) -> dict[Any, Any]:
        """The dict reader ``owner`` (a module name) keeps its memo in; the reader bounds it."""
        found = self._memos.get(owner)
        if found is None:
            found = self._memos[owner] = {}
        return found

    def clear(self) -> None:
        """Forget every reader's memo (tests compare against reads without it)."""
        self._memos.clear()
