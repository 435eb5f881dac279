"""The cyclic garbage collector while one CLI command runs: young collections 285x rarer.

A command of this CLI builds a fleet's worth of small dicts (parsed manifests, rendered objects,
snapshots) that all stay alive until it prints, and frees nothing cyclic; CPython's default
thresholds (700, 10, 10) run a young collection every 700 allocations and promote survivors
into full collections that traverse everything built so far. mypy, a CLI with the same kind of
heap, raises the first threshold to 200,000 for that reason (``mypy/main.py``); pulumi-lws does
the same for the duration of :func:`pulumi_lws.cli.main` and restores the caller's thresholds on
the way out, so a script or test calling ``main`` twice finds its collector as it left it.
Measured on ``render --stage steady`` of 1,000 LeaderWorkerSet groups: 1.24 -> 0.87 s CPU (the
collector off entirely: 0.79 s); docs/performance.md.

``render`` and ``plan`` go further: automatic collection is off while they run (``off=True``, set
by the command as ``parser.set_defaults(collector_off=True)``). They are pure planning and
printing, and the cyclic garbage they leave is the same few hundred objects (the parser's) at 20
or 1,000 groups (tests/cli/test_cli_collector.py), so nothing grows uncollected; even the young
collections cost ~5% of a 10,000-group ``render --stage steady`` (5.5 -> 5.2 s CPU). ``preview``
and ``up`` keep the thresholds: the Pulumi engine they run leaves asyncio cycles behind per
resource. The components never do this: they run
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
def fewer_collections(off: bool = False) -> Iterator[None]:
    """:data:`COMMAND_THRESHOLDS` inside (``off``: and automatic collection disabled), the caller's
    thresholds and enabled state restored after (exceptions too)."""
    before, enabled = gc.get_threshold(), gc.isenabled()
    gc.set_threshold(*COMMAND_THRESHOLDS)
    if off:
        gc.disable()
    try:
        yield
    finally:
        gc.set_threshold(*before)
        if enabled:
            gc.enable()
