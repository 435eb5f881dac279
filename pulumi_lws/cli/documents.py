"""The documents of a manifest file, as every command reads them.

A file may hold any number of documents. Those whose ``kind`` a registered workload API models
(:func:`pulumi_lws.workloads.workload_of`) are workloads; everything else (Service, HPA,
ConfigMap, ...) is passed through untouched by ``render`` and ignored by ``plan``/``simulate``,
never validated as a workload. Commands that need exactly one workload (``plan``,
``simulate --from/--to``) take ``--name``; without it, a file with several workloads is an error
that lists their names (never silently the first).
"""

from __future__ import annotations

import pathlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pulumi_lws.core.contract.errors import FieldError, SpecError
from pulumi_lws.core.k8s.yamlio import read_documents
from pulumi_lws.workloads import Workload, registered, workload_of


@dataclass(frozen=True)
class Document:
    """One document of a file: its position, its data, and the workload API that models it (or None)."""

    index: int
    data: Any
    workload: Workload | None

    @property
    def name(self) -> str:
        meta = self.data.get("metadata") if isinstance(self.data, Mapping) else None
        return str(meta.get("name") or "") if isinstance(meta, Mapping) else ""

    @property
    def kind(self) -> str:
        return str(self.data.get("kind") or "") if isinstance(self.data, Mapping) else ""


def read(path: str | pathlib.Path) -> list[Document]:
    """Every document of ``path`` ('-' = stdin); a document that is not a mapping is an error."""
    docs = read_documents(path)
    for i, doc in enumerate(docs):
        if not isinstance(doc, Mapping):
            raise SpecError(
                "manifest",
                None,
                [FieldError(f"{path}[document {i}]", "expected a mapping at the top level", type(doc).__name__)],
            )
    return [Document(i, doc, workload_of(doc)) for i, doc in enumerate(docs)]


def workloads(docs: Sequence[Document], name: str | None = None) -> list[Document]:
    """The workload documents, in file order (only those named ``name`` when given)."""
    found = [d for d in docs if d.workload is not None]
    return [d for d in found if d.name == name] if name else found


def listed(docs: Sequence[Document]) -> str:
    """``LeaderWorkerSet/a, ModelServing/b`` (the workloads of ``docs``), or ``none``."""
    return ", ".join(f"{d.kind}/{d.name or '?'}" for d in workloads(docs)) or "none"


def named(docs: Sequence[Document], name: str, path: str | pathlib.Path) -> list[Document]:
    """The workload documents named ``name``; SpecError listing the file's workloads when none is."""
    found = workloads(docs, name)
    if not found:
        raise SpecError(
            "manifest", None, [FieldError(str(path), f"no workload named {name!r} (the file holds: {listed(docs)})")]
        )
    return found


def one_workload(path: str | pathlib.Path, name: str | None = None) -> Document:
    """The single workload document of ``path`` (or the one named ``name``); SpecError otherwise."""
    docs = read(path)
    found = named(docs, name, path) if name else workloads(docs)
    if len(found) == 1:
        return found[0]
    if not found:
        kinds = ", ".join(sorted({d.kind or "?" for d in docs}))
        modelled = ", ".join(registered())  # registration order: LeaderWorkerSet first
        message = f"no LeaderWorkerSet or other workload this project models ({modelled}) in the file (found: {kinds})"
    else:
        message = f"the file holds {len(found)} workloads ({listed(found)}): choose one with --name"
    raise SpecError("manifest", None, [FieldError(str(path), message)])
