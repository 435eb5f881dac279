"""Scratch workspaces: a copy of a Pulumi program's directory that scenario updates edit.

What a user does is "edit lws.yaml, run ``pulumi up``". The runner reproduces exactly that: it
copies the program's project directory into a temporary directory, runs the program from the
copy on every reconcile, and applies a scenario update ``{at, file, patch|replace}`` by rewriting
that file in the copy before the next reconcile.

Invariants:
- the original example directory is never written (every edit goes to the copy);
- an edit is a pure function of the file's current content and the update: ``patch`` is an
  RFC 7386 JSON merge patch of the first YAML document, ``replace`` the full new document;
- every path stays inside the workspace (``..`` and absolute paths are refused);
- ``close()`` removes the copy; it is idempotent.
"""

from __future__ import annotations

import copy
import pathlib
import shutil
import tempfile
from collections.abc import Mapping
from typing import Any

from pulumi_lws.core.k8s.resource import load_manifest
from pulumi_lws.core.k8s.yamlio import dump_document, load_documents, read_text


def load_workload_manifest(path: pathlib.Path) -> dict[str, Any]:
    """The first document of ``path`` whose kind a registered API models, else the first (a file
    holding a Service and then the workload reads as the workload); ``SpecError`` on bad YAML."""
    from pulumi_lws.workloads import registered

    kinds = registered()
    docs = load_documents(read_text(path), str(path))
    kind = next((str(d["kind"]) for d in docs if isinstance(d, Mapping) and d.get("kind") in kinds), "manifest")
    return load_manifest(path, kind)


#: not copied: caches and virtualenvs that never influence a program run.
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", ".venv", "venv", ".pytest_cache")


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch (``None`` deletes a key; lists and scalars are replaced)."""
    if not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    out = dict(copy.deepcopy(target)) if isinstance(target, Mapping) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


class Workspace:
    """A temporary copy of ``project_dir``; ``program`` is the program file inside the copy."""

    def __init__(self, project_dir: pathlib.Path, program_name: str = "__main__.py") -> None:
        self._tmp: tempfile.TemporaryDirectory[str] | None = tempfile.TemporaryDirectory(prefix="pulumi-lws-sim-")
        self.root = pathlib.Path(self._tmp.name) / project_dir.name
        shutil.copytree(project_dir, self.root, ignore=IGNORED)
        self.program = self.root / program_name

    @classmethod
    def for_program(cls, program: pathlib.Path) -> Workspace:
        """The workspace of a program file (its directory is the Pulumi project)."""
        return cls(program.parent, program.name)

    def path(self, relative: str | pathlib.Path) -> pathlib.Path:
        """``relative`` inside the workspace; refuses paths that would leave it."""
        rel = pathlib.PurePosixPath(str(relative))
        if rel.is_absolute() or ".." in rel.parts:
            raise ValueError(f"workspace paths must be relative and inside the project: {relative}")
        return self.root / rel

    def read(self, relative: str | pathlib.Path) -> dict[str, Any]:
        """The workload document of a workspace file (:func:`load_workload_manifest`)."""
        return load_workload_manifest(self.path(relative))

    def write(self, relative: str | pathlib.Path, document: Mapping[str, Any]) -> None:
        self.path(relative).write_text(dump_document(dict(document)))

    def patch(self, relative: str | pathlib.Path, patch: Mapping[str, Any]) -> None:
        """Merge-patch the file's first document (comments are not preserved)."""
        self.write(relative, merge_patch(self.read(relative), patch))

    def close(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
