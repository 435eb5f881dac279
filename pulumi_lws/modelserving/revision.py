"""ModelServing revisions: upstream ``ModelServingRevision`` / ``CalRoleTemplateHash`` keys, the
ControllerRevision data, and a catalog of every revision a reconcile may render.

Covered by the key (upstream semantics, ``utils/revision_util.go``): ``spec.template.roles``, each
role with ``replicas`` and the inlined rolling-update fields (``maxUnavailable``, ``maxSurge``,
``partition``) cleared. Not covered: ``spec.replicas``, ``schedulerName``, ``plugins``,
``template.gangPolicy``, ``template.networkTopology``, ``restartGracePeriodSeconds``,
``rolloutStrategy``, ``recoveryPolicy``, metadata (upstream issue #690 asks for networkTopology;
pulumi-lws keeps upstream's key so a topology change never restarts pods, and applies the
scheduling fields to every group's PodGroup in place instead, see docs/modelserving.md
"Rendering").

Invariants:

* a key is a pure function of the covered *values*: canonical JSON (sorted keys, no whitespace,
  integral floats as ints, ``null`` map values dropped) hashed with FNV-32a and encoded with
  apimachinery's ``SafeEncodeString`` alphabet (<= 10 characters) -- the same in every process, for
  any dict order. Upstream hashes Go's ``dump.ForHash`` text, which cannot be reproduced
  byte-for-byte, so keys differ from upstream's (names, not behaviour, differ);
* the ControllerRevision ``data`` (``{"data": [roles...]}``) holds exactly the hashed roles, so
  the data is a function of the key: the (immutable) ControllerRevision never has to change under
  one name, whatever ``replicas`` or budgets do (upstream main overwrites it, PR #1626 errors);
* ``modelserving_revision(ms) == key_of_roles(revision_data(ms)["data"])`` and
  ``role_template_hash(r) == role_hash_of(role_data(r))``; a catalog built from observed objects
  resolves a revision key to its roles, and a (role, template hash) to a revision holding it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from pulumi_lws.core.features.adoption import pruned
from pulumi_lws.core.k8s import keys as K
from pulumi_lws.core.k8s.hashing import stable_key
from pulumi_lws.core.k8s.manifests import metadata
from pulumi_lws.core.k8s.model import ints_back
from pulumi_lws.core.k8s.podspec import without_nulls
from pulumi_lws.modelserving import labels as L
from pulumi_lws.modelserving import names
from pulumi_lws.modelserving.api.modelserving import ModelServing, Role

#: Role fields cleared before hashing (upstream: ``Replicas`` and the inlined RollingUpdateConfiguration).
CLEARED_ROLE_FIELDS = ("replicas", "maxUnavailable", "maxSurge", "partition")


def role_data(role: Role | Mapping[str, Any]) -> dict[str, Any]:
    """One role as hashed and stored: wire (camelCase) form, cleared fields removed, normalised."""
    wire = role.to_wire() if isinstance(role, Role) else dict(role)
    data: dict[str, Any] = ints_back(without_nulls({k: v for k, v in wire.items() if k not in CLEARED_ROLE_FIELDS}))
    return data


def role_hash_of(data: Mapping[str, Any]) -> str:
    return stable_key(role_data(data))


def key_of_roles(roles: Iterable[Mapping[str, Any]]) -> str:
    """The revision key of a roles list (order matters: reordering roles is a new revision)."""
    return stable_key([role_data(r) for r in roles])


def role_template_hash(role: Role | Mapping[str, Any]) -> str:
    """Upstream ``CalRoleTemplateHash``: the key of one role (label ``role-template-hash``)."""
    return stable_key(role_data(role))


def modelserving_revision(ms: ModelServing) -> str:
    """Upstream ``ModelServingRevision``: the key of ``spec.template.roles`` (fields above cleared)."""
    return key_of_roles(r.to_wire() for r in ms.roles)


def revision_data(ms: ModelServing) -> dict[str, Any]:
    """The ControllerRevision ``data`` of ``ms``'s revision: ``{"data": [roles...]}`` (hashed form)."""
    return {"data": [role_data(r) for r in ms.roles]}


def roles_of_data(data: Any) -> list[dict[str, Any]] | None:
    """Roles stored in ControllerRevision ``data``: wrapped ``{"data": [...]}`` or (legacy) a bare
    list, as upstream's ``GetRolesFromControllerRevision`` reads them; ``None`` if neither."""
    if isinstance(data, Mapping) and isinstance(data.get("data"), list):
        data = data["data"]
    if isinstance(data, list) and all(isinstance(r, Mapping) and r.get("name") for r in data):
        return [dict(r) for r in data]
    return None


def controller_revision(ms_name: str, namespace: str, key: str, roles: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The ControllerRevision ``<ms>-<key>`` (labels ``{name, revision}``, ``revision: 1``)."""
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": metadata(names.controller_revision(ms_name, key), namespace, {L.NAME: ms_name, L.REVISION: key}),
        "data": {"data": [role_data(r) for r in roles]},
        "revision": 1,
    }


@dataclass(frozen=True)
class RevisionCatalog:
    """Every revision a reconcile may render: the live spec's (``target``) plus every observed one.

    ``roles[key]`` are the stored (hashed-form) role dicts of revision ``key``; their pod templates
    and ``workerReplicas`` are authoritative for groups on that revision. Role replica counts are
    not stored (they are not part of a revision): callers take them from the live spec.
    """

    target: str
    roles: Mapping[str, tuple[Mapping[str, Any], ...]]
    #: observed ControllerRevision names whose data could not be read (reported, never rendered)
    unreadable: tuple[str, ...] = field(default=())
    #: memo of parsed roles and role hashes per revision (a reconcile asks once per role replica);
    #: the catalog's data never changes, so neither do these. Callers treat the models as read-only.
    _memo: dict[Any, Any] = field(default_factory=dict, init=False, repr=False, compare=False, hash=False)

    def __contains__(self, key: object) -> bool:
        return key in self.roles

    def keys(self) -> tuple[str, ...]:
        return tuple(sorted(self.roles))

    def roles_of(self, key: str) -> tuple[Role, ...]:
        """The roles of revision ``key`` as models (``replicas`` = the CRD default 1: not stored)."""
        if key not in self.roles:
            raise KeyError(f"revision {key!r} is not stored in any ControllerRevision")
        memo = ("roles", key)
        if memo not in self._memo:
            self._memo[memo] = tuple(Role.model_validate(dict(r)) for r in self.roles[key])
        roles: tuple[Role, ...] = self._memo[memo]
        return roles

    def role(self, key: str, name: str) -> Role:
        """Role ``name`` of revision ``key``; KeyError when the revision or the role is unknown."""
        for r in self.roles_of(key):
            if r.name == name:
                return r
        raise KeyError(f"role {name!r} is not in revision {key!r}")

    def role_hash(self, key: str, name: str) -> str | None:
        """``CalRoleTemplateHash`` of role ``name`` in revision ``key`` (legacy label fallback); None if unknown."""
        memo = ("hash", key, name)
        if memo not in self._memo:
            self._memo[memo] = next((role_hash_of(r) for r in self.roles.get(key, ()) if r.get("name") == name), None)
        found: str | None = self._memo[memo]
        return found

    def same_role(self, a: str, b: str, name: str) -> bool:
        """Whether role ``name`` is the same content in revisions ``a`` and ``b`` (pruned: an
        adopted, Go-serialised revision differs from pulumi-lws's only in nulls and empty maps)."""
        memo = ("same", a, b, name)
        if memo not in self._memo:
            first, second = (next((r for r in self.roles.get(k, ()) if r.get("name") == name), None) for k in (a, b))
            self._memo[memo] = first is not None and second is not None and pruned(dict(first)) == pruned(dict(second))
        return bool(self._memo[memo])

    def revision_with_role_hash(self, name: str, template_hash: str, prefer: Iterable[str] = ()) -> str | None:
        """A revision whose role ``name`` has ``template_hash``: the first of ``prefer`` that does,
        else the target, else the smallest such key (deterministic); None when no revision does."""
        candidates = [*prefer, self.target, *self.keys()]
        return next((k for k in candidates if self.role_hash(k, name) == template_hash), None)


def build_catalog(ms: ModelServing, observed: Iterable[Mapping[str, Any]] = ()) -> RevisionCatalog:
    """Catalog from the live spec and observed ControllerRevisions labelled ``{name: ms, revision}``.

    The ``revision`` label is the key (upstream-written revisions keep their upstream keys). The
    live spec's revision always comes from the spec itself, so a stale object never shadows it —
    except that when no observed revision has the spec's own key, one whose stored roles are the
    spec's (content, :func:`pulumi_lws.core.features.adoption.pruned`) is the target under its observed key:
    a fleet the Kthena controller (or another hash) created is adopted without a roll.

    A StatefulSet's own history is skipped before anything else is read: it carries the pod
    template's labels, ``{name, revision}`` included, so a role replica's StatefulSets would put one
    per template into the same LIST (the scope's selector leaves them out server-side:
    :func:`~pulumi_lws.modelserving.observe.modelserving_scope`; this is the second guard), and it
    is never a ModelServing revision, not even an unreadable one. The StatefulSet controller labels
    every revision it keeps ``controller.kubernetes.io/hash`` (``history.NewControllerRevision``),
    the DaemonSet controller ``controller-revision-hash``; a ModelServing's revision is labelled
    ``{name, revision}`` only, by Kthena and pulumi-lws alike.
    """
    roles: dict[str, tuple[Mapping[str, Any], ...]] = {}
    unreadable: list[str] = []
    for cr in observed:
        meta = cr.get("metadata") or {}
        lbl = meta.get("labels") or {}
        if K.STS_HISTORY_HASH in lbl or K.CONTROLLER_REVISION_HASH in lbl:  # a controller's own history (docstring)
            continue
        key = lbl.get(L.REVISION)
        if cr.get("kind", "ControllerRevision") != "ControllerRevision" or lbl.get(L.NAME) != ms.name or not key:
            continue
        stored = roles_of_data(cr.get("data"))
        try:
            for r in stored or ():
                Role.model_validate(role_data(r))
        except ValidationError:
            stored = None
        if stored is None:
            unreadable.append(str(meta.get("name")))
            continue
        roles[key] = tuple(role_data(r) for r in stored)
    target = modelserving_revision(ms)
    wanted = tuple(revision_data(ms)["data"])
    if target not in roles:  # adoption: a revision upstream stored with its own key, same content
        target = next((k for k in sorted(roles) if pruned(list(roles[k])) == pruned(list(wanted))), target)
    roles.setdefault(target, wanted)
    return RevisionCatalog(target=target, roles=roles, unreadable=tuple(sorted(unreadable)))
