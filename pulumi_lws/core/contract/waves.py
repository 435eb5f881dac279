"""A long predicted walk shown in waves (``plan``'s rows of every API that predicts stage by stage).

A walk longer than the stages an API shows one by one is shown as at most ``rows`` waves of
consecutive stages, each row the stage that ends its wave: every row is a stage the exact walk
reaches, and the last row is the walk's last stage. :func:`waves` groups; :func:`waves_note` is
the sentence that says so. Pure; the stages are whatever the API predicts (only their order
counts).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def waves(stages: Sequence[T], rows: int) -> tuple[T, ...]:
    """``stages`` grouped into at most ``rows`` waves of consecutive stages, each shown as its last
    stage (the last wave ends at the last stage)."""
    if len(stages) <= rows:
        return tuple(stages)
    per = -(-len(stages) // rows)
    return tuple(stages[min(i, len(stages)) - 1] for i in range(per, len(stages) + per, per))


def waves_note(walked: int, shown: int, rows: int) -> str:
    """The note of a walk of ``walked`` stages, more than the ``shown`` shown one by one, drawn as
    ``rows`` waves."""
    per = -(-walked // max(1, rows))
    return (
        f"prediction in waves: {walked:,} stages exceed the {shown} shown one by one, "
        f"so each row groups up to {per} consecutive stages (the state after the last of them)"
    )
