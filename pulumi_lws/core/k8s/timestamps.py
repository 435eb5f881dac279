"""Kubernetes timestamps (RFC 3339) as epoch seconds: the one parser every API's clock reads.

Invariant: a missing or unparsable value is ``None`` (never an exception): a planner treats an
object without a readable timestamp as "time unknown", not as a reason to fail the reconcile.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any


def parse_timestamp(value: Any) -> float | None:
    """RFC 3339 (``2026-01-01T00:00:00Z``, fractional seconds allowed) -> epoch seconds; a value
    without a zone is UTC (the API server always writes ``Z``)."""
    if not value:
        return None
    try:
        dt = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return (dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)).timestamp()
