"""What ``pulumi-lws up`` keeps between runs, under ``DIR/.pulumi-lws/<stack>/``:

- ``cluster.json``: the simulated cluster (:mod:`pulumi_lws.sim.cluster.persist`, versioned);
- ``stack.json``: the stack's last registered state, as Pulumi's state file keeps it — every
  resource (URN, type, name, parent, inputs) and the stack outputs, format ``pulumi-lws/stack`` v1.
  Secret values are kept only as a SHA-256 digest (``{"[secret]": "<digest>"}``): enough to see
  that one changed, never the value. (The simulated cluster's Secret objects hold their data, as
  a cluster does: ``.pulumi-lws/`` is written with a ``.gitignore`` of ``*`` so it stays out of git.)

Invariant: a run that fails writes nothing (both files are replaced together, after the run);
``clear`` removes the stack's directory and nothing else.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
import shutil
from dataclasses import dataclass, field
from typing import Any

from pulumi_lws.cli.stack.project import STATE_DIR, Project, ProjectError

FORMAT = "pulumi-lws/stack"
VERSION = 1
SECRET = "[secret]"
_SECRET_SIG = ("4dabf18193072939515e22adb298388d", "1b47061264138c4ac30d75fd1eb44270")


def is_secret_value(value: Any) -> bool:
    return isinstance(value, dict) and value.get(_SECRET_SIG[0]) == _SECRET_SIG[1]


def masked(value: Any) -> Any:
    """``value`` with every secret (Pulumi's secret signature) replaced by a digest of it."""
    if is_secret_value(value):
        digest = hashlib.sha256(json.dumps(value.get("value"), sort_keys=True).encode()).hexdigest()
        return {SECRET: digest}
    if isinstance(value, dict):
        return {k: masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v) for v in value]
    return value


@dataclass
class Resource:
    urn: str
    type: str
    name: str
    parent: str
    custom: bool
    inputs: dict[str, Any] = field(default_factory=dict)


@dataclass
class StackState:
    resources: dict[str, Resource] = field(default_factory=dict)  # URN -> resource, in registration order
    outputs: dict[str, Any] = field(default_factory=dict)


class StateStore:
    """The ``.pulumi-lws/<stack>/`` directory of one stack."""

    def __init__(self, project: Project, stack: str) -> None:
        self.root = project.directory / STATE_DIR
        self.directory = self.root / stack
        self.cluster_file = self.directory / "cluster.json"
        self.stack_file = self.directory / "stack.json"

    def exists(self) -> bool:
        return self.cluster_file.exists() or self.stack_file.exists()

    def load_cluster(self):
        from pulumi_lws.sim.cluster.persist import load_cluster
        from pulumi_lws.sim.cluster.simcluster import SimCluster

        if not self.cluster_file.exists():
            return SimCluster()
        return load_cluster(self._read(self.cluster_file), where=str(self.cluster_file))

    def load_stack(self) -> StackState:
        if not self.stack_file.exists():
            return StackState()
        data = self._read(self.stack_file)
        if data.get("format") != FORMAT or data.get("version") != VERSION:
            raise ProjectError(
                f"{self.stack_file}: not a {FORMAT} v{VERSION} file; remove it (pulumi-lws destroy) to start afresh"
            )
        resources = {r["urn"]: Resource(**r) for r in data.get("resources") or []}
        return StackState(resources, dict(data.get("outputs") or {}))

    def save(self, cluster, stack: StackState) -> None:
        from pulumi_lws.sim.cluster.persist import dump_cluster

        self.directory.mkdir(parents=True, exist_ok=True)
        ignore = self.root / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# pulumi-lws preview/up: the simulated cluster and stack state (docs/stacks.md)\n*\n")
        stack_doc = {
            "format": FORMAT,
            "version": VERSION,
            "resources": [vars(r) for r in stack.resources.values()],
            "outputs": stack.outputs,
        }
        for path, doc in ((self.cluster_file, dump_cluster(cluster)), (self.stack_file, stack_doc)):
            tmp = path.with_suffix(".json.tmp")
            tmp.write_text(json.dumps(doc, indent=1, sort_keys=False))
            tmp.replace(path)

    def clear(self) -> bool:
        """Remove the stack's state; True if there was any."""
        if not self.directory.exists():
            return False
        shutil.rmtree(self.directory)
        return True

    @staticmethod
    def _read(path: pathlib.Path) -> dict[str, Any]:
        try:
            data = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise ProjectError(
                f"{path}: unreadable state ({exc}); remove it (pulumi-lws destroy) to start afresh"
            ) from exc
        if not isinstance(data, dict):
            raise ProjectError(f"{path}: unreadable state; remove it (pulumi-lws destroy) to start afresh")
        return data
