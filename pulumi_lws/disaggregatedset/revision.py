"""The DisaggregatedSet revision: upstream ``ComputeRevision`` (``pkg/utils/disaggregatedset/utils.go``).

``compute_revision(ds)`` = the first 8 hex characters of the sha256 of the JSON of
``[{name, template: role.spec.leaderWorkerTemplate}, ...]`` in role order, plus each role's
``groupIdentity`` (newer upstream, reference §2.7: a role switching identity rolls its children
like a template change).

Invariants:

* covered: role names and order, each role's ``leaderWorkerTemplate`` (both pod templates, size,
  restartPolicy, subGroupPolicy, volume claims, restart budget) and ``groupIdentity``; NOT covered:
  replicas, rolloutStrategy, startupPolicy, networkConfig, scaling, role metadata, ``slices``,
  ``placementPolicy`` (upstream's choice; their edits reach the running children without a
  DisaggregatedSet rollout — docs/disaggregatedset.md);
* ``groupIdentity`` is normalised as upstream's: ``Ordinal`` (the default, and what ``""`` means)
  adds nothing to a role's entry, so a DisaggregatedSet that never mentions groupIdentity keeps
  the key it had before the field existed; ``Hash`` adds ``"groupIdentity": "Hash"``;
* the template is hashed in its wire form (camelCase) **after** the embedded CRD / LWS defaults
  (``size 1``, ``restartPolicy RecreateGroupOnPodRestart``), so writing a default or omitting it
  gives the same key;
* the bytes are :func:`pulumi_lws.core.k8s.hashing.canonical_json` (sorted keys, no whitespace,
  integral floats as ints): the same spec gives the same key in every process, any
  ``PYTHONHASHSEED``, any dict key order. Go's ``encoding/json`` writes struct fields in
  declaration order and omits zero values by its own rules, which cannot be reproduced byte for
  byte, so **the keys differ from upstream's** for the same spec: a fleet moved from the upstream
  controller keeps its observed key as long as its content matches the spec
  (:mod:`pulumi_lws.disaggregatedset.adoption`), and rolls to pulumi-lws's key at the next change.
"""

from __future__ import annotations

import hashlib
from typing import Any

from pulumi_lws.core.k8s.hashing import canonical_json
from pulumi_lws.disaggregatedset import names
from pulumi_lws.disaggregatedset.api import DisaggregatedRole, DisaggregatedSet

#: the groupIdentity that adds nothing to a role's entry (upstream normalises "" to it)
DEFAULT_GROUP_IDENTITY = "Ordinal"


def role_entry(role: DisaggregatedRole) -> dict[str, Any]:
    """One element of the hashed list: ``{name, template}`` (+ ``groupIdentity`` when not Ordinal)."""
    entry: dict[str, Any] = {"name": role.name, "template": role.spec.leader_worker_template.to_wire()}
    identity = role.spec.group_identity or DEFAULT_GROUP_IDENTITY
    if identity != DEFAULT_GROUP_IDENTITY:
        entry["groupIdentity"] = identity
    return entry


def revision_payload(ds: DisaggregatedSet) -> str:
    """The exact text hashed by :func:`compute_revision` (canonical JSON of the role entries)."""
    return canonical_json([role_entry(r) for r in ds.roles])


def compute_revision(ds: DisaggregatedSet) -> str:
    """Upstream ``ComputeRevision``: the first 8 hex characters of sha256(:func:`revision_payload`)."""
    return hashlib.sha256(revision_payload(ds).encode()).hexdigest()[: names.REVISION_LEN]
