"""Every name pulumi-lws generates for a ModelServing, and the length budgets they must fit.

Invariants: names are pure functions of (ModelServing name, ServingGroup ordinal ``g``, role name,
role replica ordinal ``r``, worker index ``w``, revision). They keep upstream's spellings where
Kubernetes allows it (docs/modelserving.md, "Expansion"):

* ServingGroup / PodGroup ``<ms>-<g>`` (also the ``group-name`` label value)
* role id ``<role>-<r>`` (the ``role-id`` label value and ``volcano.sh/task-spec``)
* entry StatefulSet ``<ms>-<g>-<role>-<r>``; its single pod ``<ms>-<g>-<role>-<r>-0`` (upstream's
  entry pod name); headless Service ``<ms>-<g>-<role>-<r>-0`` (= the entry pod name)
* worker StatefulSet ``<ms>-<g>-<role>-<r>-w``; pods ``<ms>-<g>-<role>-<r>-w-<w>``, ``w >= 1``
  (upstream: ``<ms>-<g>-<role>-<r>-<w>``; two StatefulSets cannot share one name)
* ControllerRevision ``<ms>-<rev>``

Budgets: every name and label value is at most :data:`LABEL_MAX` (63) characters (the
ControllerRevision, a DNS-1123 subdomain, :data:`SUBDOMAIN_MAX`); a StatefulSet
name leaves room for its pods' ``controller-revision-hash`` label ``<sts>-<hash>`` with a hash of
at most :data:`REVISION_HASH_MAX` (10) characters, so a StatefulSet name is at most
:data:`STATEFULSET_MAX` (52) characters.
"""

from __future__ import annotations

LABEL_MAX = 63
#: object names that are DNS-1123 subdomains only (ControllerRevision)
SUBDOMAIN_MAX = 253
#: StatefulSet revision hashes are FNV-32 decimal strings run through SafeEncodeString: <= 10 chars.
REVISION_HASH_MAX = 10
STATEFULSET_MAX = LABEL_MAX - 1 - REVISION_HASH_MAX
WORKER_SUFFIX = "w"


def group_name(ms: str, g: int) -> str:
    """ServingGroup ``g``: ``<ms>-<g>`` (``group-name`` label, PodGroup name)."""
    return f"{ms}-{g}"


def role_id(role: str, r: int) -> str:
    """Role replica ``r`` of ``role``: ``<role>-<r>`` (``role-id`` label, ``volcano.sh/task-spec``)."""
    return f"{role}-{r}"


def entry_statefulset(ms: str, g: int, role: str, r: int) -> str:
    """``<ms>-<g>-<role>-<r>``: ``f"{group_name(ms, g)}-{role_id(role, r)}"`` in one format (the
    renderer and the observer ask for it per role replica, several times a reconcile)."""
    return f"{ms}-{g}-{role}-{r}"


def entry_pod(ms: str, g: int, role: str, r: int) -> str:
    """Upstream's entry pod name ``<ms>-<g>-<role>-<r>-0`` (pod 0 of the entry StatefulSet)."""
    return f"{ms}-{g}-{role}-{r}-0"  # entry_statefulset(...)-0


def service(ms: str, g: int, role: str, r: int) -> str:
    """The headless Service of a role replica: the entry pod's name (``ENTRY_ADDRESS`` resolves)."""
    return f"{ms}-{g}-{role}-{r}-0"  # entry_pod(...)


def worker_statefulset(ms: str, g: int, role: str, r: int) -> str:
    return f"{ms}-{g}-{role}-{r}-{WORKER_SUFFIX}"  # entry_statefulset(...)-w


def worker_pod(ms: str, g: int, role: str, r: int, w: int) -> str:
    """Worker ``w`` (1..workerReplicas): ``<ms>-<g>-<role>-<r>-w-<w>`` (the StatefulSet starts at ordinal 1)."""
    return f"{worker_statefulset(ms, g, role, r)}-{w}"


def podgroup(ms: str, g: int) -> str:
    return group_name(ms, g)


def controller_revision(ms: str, rev: str) -> str:
    """Upstream ``GenerateControllerRevisionName``: ``<ms>-<rev>``."""
    return f"{ms}-{rev}"


def revision_hash_label(statefulset: str) -> str:
    """The longest ``controller-revision-hash`` pod label a StatefulSet of this name can produce."""
    return f"{statefulset}-{'x' * REVISION_HASH_MAX}"
