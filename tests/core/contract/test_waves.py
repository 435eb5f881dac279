"""core/contract/waves.py: a long walk grouped into waves, and the note that says so."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pulumi_lws.core.contract.waves import waves, waves_note


def test_a_walk_that_fits_is_shown_whole() -> None:
    assert waves([1, 2, 3], rows=3) == (1, 2, 3)


def test_each_wave_is_shown_as_its_last_stage_and_the_last_row_is_the_walks_end() -> None:
    assert waves(list(range(1, 11)), rows=4) == (3, 6, 9, 10)


@given(st.integers(min_value=1, max_value=3000), st.integers(min_value=1, max_value=60))
def test_waves_are_an_ordered_subsequence_ending_at_the_last_stage(n: int, rows: int) -> None:
    stages = list(range(n))
    out = waves(stages, rows)
    assert 1 <= len(out) <= rows and out[-1] == stages[-1]
    assert list(out) == sorted(set(out))


def test_the_note_says_how_many_stages_each_row_groups() -> None:
    assert waves_note(1999, 500, 50) == (
        "prediction in waves: 1,999 stages exceed the 500 shown one by one, "
        "so each row groups up to 40 consecutive stages (the state after the last of them)"
    )
