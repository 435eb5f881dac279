"""The cyclic garbage collector while one CLI command runs: young collections 285x rarer.

A command of this CLI builds a fleet's worth of small dicts (parsed manifests, rendered objects,
snapshots) that all stay alive until it prints, and frees nothing cyclic; CPython's default
thresholds (700, 10, 10) run a young collection every 700 allocations and promote survivors
into full collections that traverse everything built so far. mypy, a CLI with the same kind of
heap, raises the first threshold to 200,000 for that reason (``mypy/main.py``); pulumi-lws does
the same for the duration of :func:`pulumi_lws.cli.main` and restores the caller's thresholds on
the way out, so a script or test calling ``main`` twice finds its collector as it left it.
Measured on ``render --stage steady`` of 1,000 LeaderWorkerSet groups: 1.24 -> 0.87 s CPU (the
collector off entirely: 0.79 s); docs/performance.md. The components never do this: they run
inside the user's Pulumi program (docs/performance.md, "The cyclic garbage collector"), and the
simulator's own loop schedules the collector itself (:mod:`pulumi_lws.sim.driver.collector`).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

#: mypy's first-generation threshold (mypy/main.py: ``gc.set_threshold(200 * 1000, 30, 30)``)
COMMAND_THRESHOLDS = (200_000, 30, 30)


@contextmanager
def fewer_collections() -> Iterator[None]:
    """:data:`COMMAND_THRESHOLDS` inside, the caller's thresholds restored after (exceptions too)."""
    before = gc.get_threshold()
    gc.set_threshold(*COMMAND_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)
