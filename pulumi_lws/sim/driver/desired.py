"""The desired workload (LeaderWorkerSet, ModelServing, ...) of a run, kept where the program reads it.

Inline scenarios (pure engine, no ``program``) keep the manifest in memory. Program scenarios
keep it in the workspace file named by the scenario's ``manifest:`` (e.g. ``lws.yaml``): every
update is written to that file before the next reconcile, and the runner's budget invariants read
the LWS back from the same file, so the program and the invariants can never disagree.

Invariants: ``manifest`` always equals the current content of the workspace file (when there is
one); an update is applied exactly once, in scenario order; ``parsed()`` is re-parsed only after
a change.
"""

from __future__ import annotations

import pathlib
from typing import Any

from pulumi_lws.sim.driver.scenario import Scenario, Update
from pulumi_lws.sim.driver.workspace import Workspace
from pulumi_lws.workloads import Workload, modelled


class DesiredSpec:
    """The LWS the next reconcile deploys (``manifest``) and its parsed form (``lws()``)."""

    def __init__(self, scenario: Scenario, workspace: Workspace | None) -> None:
        self.namespace = scenario.namespace
        self.workspace = workspace
        self.file = scenario.manifest_file if workspace is not None else None
        self.manifest: dict[str, Any] | None = (
            workspace.read(self.file)
            if workspace is not None and self.file
            else (dict(scenario.manifest) if scenario.manifest is not None else None)
        )
        self._parsed: Any = None

    @property
    def workload(self) -> Workload:
        """The workload API of the desired manifest (its ``kind``); ``SpecError`` naming the known
        kinds when no API models it."""
        return modelled(self.manifest or {})

    def parsed(self) -> Any:
        """The validated spec of the desired manifest (None before there is one)."""
        if self.manifest is None:
            return None
        if self._parsed is None:
            self._parsed = self.workload.parse(self.manifest, namespace=self.namespace)
        return self._parsed

    def lws(self) -> Any:
        """Alias of :meth:`parsed` (LeaderWorkerSet scenarios)."""
        return self.parsed()

    def apply(self, update: Update) -> str:
        """Apply one scenario update; return the trace note (``lws.yaml patched``, ``spec patched``)."""
        if update.file is not None:
            self._edit_file(update)
        else:
            self.manifest = update.apply_to(self.manifest or {})
            if self.workspace is not None and self.file:
                self.workspace.write(self.file, self.manifest)
        self._parsed = None
        return update.describe()

    def _edit_file(self, update: Update) -> None:
        ws = self.workspace
        assert ws is not None and update.file is not None  # scenario validation guarantees a program
        if update.patch is not None:
            ws.patch(update.file, update.patch)
        else:
            ws.write(update.file, dict(update.replace or {}))
        if self.file and _same_file(ws, update.file, self.file):
            self.manifest = ws.read(self.file)


def _same_file(ws: Workspace, a: str, b: str) -> bool:
    return pathlib.Path(ws.path(a)).resolve() == pathlib.Path(ws.path(b)).resolve()
