"""The StatefulSet controller's template hash: ``<hash>`` of a ``<sts>-<hash>`` revision name.

SafeEncodeString of FNV-32a of the template's canonical JSON (:mod:`pulumi_lws.core.k8s.hashing`,
whose FNV-32a is C code): one hash per (StatefulSet, generation), memoised by the controller.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_lws.core.k8s.hashing import stable_key


def template_hash(template: Mapping[str, Any]) -> str:
    """``<hash>`` of ``<sts>-<hash>``: SafeEncodeString of FNV-32a of the canonical JSON."""
    return stable_key(template)
