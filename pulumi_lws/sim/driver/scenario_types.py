"""What a loaded scenario is: the :class:`Scenario` and its timed :class:`Update`, :class:`Fault`
and :class:`Event` entries (the format: docs/simulator.md).

Apart from :mod:`.scenario`, which parses and checks the file, because the runner, the engines and
the tests build and read these values without a file; nothing here parses, checks or touches a
file or a cluster (:meth:`Update.apply_to` derives a new document from the current one). Every
``at`` is in simulated seconds from the scenario's start; a :class:`Fault`'s ``type`` is one of
:data:`FAULT_TYPES`, an :class:`Event`'s ``verb`` one of :data:`EVENT_VERBS`. :mod:`.scenario`,
which builds them, also names them (most callers import :class:`Scenario` from there).
"""

from __future__ import annotations

import copy
import pathlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pulumi_lws.sim.cluster.kubelet import KubeletConfig
from pulumi_lws.sim.driver.workspace import merge_patch

FAULT_TYPES = ("pod-crash", "container-restart", "node-loss")
#: the verb keys of a timed ``events:`` entry (exactly one per entry)
EVENT_VERBS = ("annotate", "deletePods", "addNodes", "removeNode", "cordon")


@dataclass(frozen=True)
class Update:
    """A spec change at ``at``.

    Without ``file``: the desired LWS becomes ``manifest`` or is merge-patched by ``patch`` (in a
    program scenario the desired LWS is the workspace file named by the scenario's ``manifest``).
    With ``file``: that workspace file is merge-patched by ``patch`` or replaced by ``replace``
    (exactly "edit the file, run ``pulumi up``").
    """

    at: float
    manifest: Mapping[str, Any] | None = None
    patch: Mapping[str, Any] | None = None
    file: str | None = None
    replace: Mapping[str, Any] | None = None

    def apply_to(self, current: Mapping[str, Any]) -> dict[str, Any]:
        """The new document from the current one (``manifest``/``replace``: the given document)."""
        whole = self.manifest if self.manifest is not None else self.replace
        if whole is not None:
            return copy.deepcopy(dict(whole))
        return merge_patch(current, self.patch or {})

    def describe(self) -> str:
        what = f"{self.file} " if self.file else "spec "
        return what + ("replaced" if self.manifest is not None or self.replace is not None else "patched")


@dataclass(frozen=True)
class Fault:
    at: float
    type: str  # pod-crash | container-restart | node-loss
    target: str  # pod name (pod faults) or node name (node-loss)


@dataclass(frozen=True)
class Event:
    """A timed cluster event (``events:``): ``verb`` one of :data:`EVENT_VERBS`; ``target`` the
    pod-name glob (annotate, deletePods), the node name (removeNode, cordon) or the node count
    (addNodes); ``annotations`` for annotate (``None`` deletes a key); ``gpus_per_node`` for addNodes."""

    at: float
    verb: str
    target: str | int
    annotations: Mapping[str, Any] | None = None
    gpus_per_node: float | None = None

    def describe(self) -> str:
        if self.verb == "annotate":
            return f"event: annotate pods {self.target} {dict(self.annotations or {})}"
        if self.verb == "deletePods":
            return f"event: delete pods {self.target}"
        if self.verb == "addNodes":
            gpus = f" ({self.gpus_per_node:g} nvidia.com/gpu each)" if self.gpus_per_node else ""
            return f"event: add {self.target} node{'s' if self.target != 1 else ''}{gpus}"
        return f"event: {'remove node' if self.verb == 'removeNode' else 'cordon'} {self.target}"


@dataclass
class Scenario:
    name: str = "scenario"
    description: str = ""
    seed: int = 0
    engine: str | None = None
    namespace: str = "default"
    manifest: dict[str, Any] | None = None
    objects: list[dict[str, Any]] = field(default_factory=list)
    program: pathlib.Path | None = None
    #: program scenarios: the workspace file holding the LWS (``manifest: lws.yaml``), else None
    manifest_file: str | None = None
    start: str = "empty"  # empty | converged
    updates: list[Update] = field(default_factory=list)
    nodes: list[dict[str, Any]] = field(default_factory=list)
    kubelet: KubeletConfig = field(default_factory=KubeletConfig)
    faults: list[Fault] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    interval: float = 10.0
    tick: float = 1.0
    update_order: str | None = None
    gang_provider: str | None = None
    #: ``reconcile.checkCapacity`` (pure engine; None: the manifest's pulumi-lws.io/check-capacity)
    check_capacity: bool | None = None
    max_time: float = 600.0
    when_converged: bool = True
    require_converged: bool = True
    statefulset_history: str = "objects"
    apply_keep: float = 1.0
    path: pathlib.Path | None = None

    @property
    def default_engine(self) -> str:
        return self.engine or ("pulumi" if self.program is not None else "pure")
