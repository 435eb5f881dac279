"""ModelServing validation (placeholder; the rules land in the next commit)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from pulumi_lws.core.errors import FieldError

if TYPE_CHECKING:
    from pulumi_lws.modelserving.api.modelserving import ModelServing


def validate_modelserving(ms: ModelServing, old: ModelServing | None = None) -> list[FieldError]:
    return []
