"""The base of every API's top-level object (LeaderWorkerSet, ModelServing, ...) and manifest reading.

A subclass sets ``KIND`` and implements :meth:`ManifestResource.validation_errors`; it gets:

* construction that raises :class:`SpecError` with wire paths on any type error (``Cls(**data)``,
  :meth:`parse`), never pydantic's own exception;
* ``status`` in a manifest ignored (the cluster owns it);
* :meth:`from_manifest` from a dict, YAML/JSON text or a file path — strict YAML
  (:mod:`pulumi_lws.core.k8s.yamlio`); from several documents the first of the subclass's kind;
* :meth:`validate` (every error at once), :meth:`to_wire` (empty metadata fields omitted), and
  the ``name`` / ``namespace`` (``default`` when unset) of its metadata.
"""

from __future__ import annotations

import copy
import pathlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from pydantic import ValidationError, model_validator

from pulumi_lws.core.contract.errors import FieldError, SpecError
from pulumi_lws.core.k8s.model import K8sModel, pydantic_field_errors
from pulumi_lws.core.k8s.yamlio import load_documents, read_text

if TYPE_CHECKING:  # every subclass declares it as a pydantic field (with its own default)
    from pulumi_lws.core.k8s.objectmeta import ObjectMeta

R = TypeVar("R", bound="ManifestResource")


def load_manifest(source: str | pathlib.Path | Mapping[str, Any], kind: str) -> dict[str, Any]:
    """A manifest dict from a dict, YAML/JSON text or a file path; from several documents the first
    whose ``kind`` is ``kind``, else the first."""
    if isinstance(source, Mapping):
        return dict(source)
    if isinstance(source, pathlib.Path) or (
        isinstance(source, str) and "\n" not in source and source.endswith((".yaml", ".yml", ".json"))
    ):
        text, where = read_text(source), str(source)
    else:
        text, where = str(source), "<input>"
    docs = load_documents(text, where)
    if not docs:
        raise SpecError(kind, None, [FieldError("<manifest>", "no YAML document found")])
    chosen = next((d for d in docs if isinstance(d, Mapping) and d.get("kind") == kind), docs[0])
    if not isinstance(chosen, Mapping):
        raise SpecError(kind, None, [FieldError("<manifest>", "expected a mapping at the top level")])
    return dict(chosen)


class ManifestResource(K8sModel):
    """Base of an API's top-level object; see the module docstring."""

    KIND: ClassVar[str] = ""
    if TYPE_CHECKING:
        metadata: ObjectMeta

    def __init__(self, /, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            meta = data.get("metadata")
            name = meta.get("name") if isinstance(meta, Mapping) else getattr(meta, "name", None)
            raise SpecError(self.KIND, name, pydantic_field_errors(exc, type(self))) from None

    @model_validator(mode="before")
    @classmethod
    def _drop_status(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "status" in data:
            data = {k: v for k, v in data.items() if k != "status"}
        return data

    @classmethod
    def from_manifest(
        cls: type[R],
        source: str | pathlib.Path | Mapping[str, Any],
        *,
        validate: bool = True,
        namespace: str | None = None,
    ) -> R:
        """Build from an upstream manifest, accepted unchanged; ``namespace`` fills an unset one.
        Raises :class:`SpecError` listing every problem with field paths."""
        obj = cls.parse(load_manifest(source, cls.KIND))
        meta = obj.metadata
        if namespace and not meta.namespace:
            meta.namespace = namespace
        if validate:
            obj.validate()
        return obj

    @classmethod
    def parse(cls: type[R], data: Mapping[str, Any]) -> R:
        """Type-check a dict (camelCase or snake_case keys) and apply defaults; no semantic rules."""
        if not isinstance(data, Mapping):
            raise SpecError(cls.KIND, None, [FieldError("<root>", "must be of type object", type(data).__name__)])
        return cls(**{str(k): v for k, v in copy.deepcopy(dict(data)).items()})  # __init__ raises SpecError

    def validation_errors(self, old: Any = None) -> list[FieldError]:
        """Every problem with this object (and, given ``old``, with the update from ``old``)."""
        raise NotImplementedError

    # the name shadows pydantic v1's deprecated classmethod ``BaseModel.validate`` (unused here)
    def validate(self: R, old: Any = None) -> R:  # type: ignore[override]  # an instance method where pydantic v1 has a classmethod of the same name, on purpose (above)
        """Run every rule (with ``old`` also the update rules); raise one SpecError listing them all."""
        errors = self.validation_errors(old)
        if errors:
            raise SpecError(self.KIND, self.metadata.name, errors)
        return self

    @property
    def name(self) -> str:
        """``metadata.name`` ("" when unset)."""
        return self.metadata.name or ""

    @property
    def namespace(self) -> str:
        """``metadata.namespace``, ``default`` when unset (as kubectl applies it)."""
        return self.metadata.namespace or "default"

    def to_wire(self) -> dict[str, Any]:
        out = super().to_wire()
        out["metadata"] = {k: v for k, v in out.get("metadata", {}).items() if v not in ({}, None)}
        return out
