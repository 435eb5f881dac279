"""Adopted ("legacy") role replicas: the bare Pods a Kthena controller created, kept running after
operator-free mode takes the fleet over (docs/modes.md, "Adoption: ModelServing"). Pure.

Kthena creates Pods directly: entry ``<ms>-<g>-<role>-<r>-0`` and workers
``<ms>-<g>-<role>-<r>-<w>`` (``w`` = 1..workerReplicas), labelled as pulumi-lws labels its pods.
pulumi-lws renders a role replica as an entry StatefulSet (whose pod ``-0`` has upstream's name)
and a worker StatefulSet ``...-w`` (pods ``-w-<w>``): no StatefulSet can take Kthena's worker pods
over, so re-rendering an adopted replica would restart it. Instead:

* **observed** (:func:`is_legacy`): a role replica that has Pods, no StatefulSet of its own and no
  Pod a StatefulSet made (owner, or its ``statefulset.kubernetes.io/pod-name`` label) is *legacy*. It is ``Running`` when its entry pod and its
  ``workerReplicas`` upstream-named workers are Running+Ready, ``Deleting`` while one of its pods
  is being deleted, else ``Creating`` (:mod:`pulumi_lws.modelserving.observe`); its template hash
  is the one of its ``revision`` label's stored role (Kthena's own ``role-template-hash`` label is
  computed by upstream's hash, which is not pulumi-lws's), so the planners see an unchanged
  replica as current and count it as ready/available like a rendered one;
* **kept** (:func:`adopt_legacy`): while a stage declares a legacy replica on the revision its
  pods run, whole and with no pod being deleted, its StatefulSets are *not* registered (they
  would create a second copy of its pods); its headless Service (same name, selector and labels
  as Kthena's) and its group's PodGroup (same name) are re-declared as is and upserted in place;
* **replaced**: a legacy replica the stage no longer declares (the rollout reached its group, a
  scale-down), declares on another template, that is missing a pod, or that has a pod being
  deleted (recovery of a failed pod) gets uid-guarded ``delete`` actions for its remaining pods,
  and no StatefulSet until they are gone; then it is an ordinary missing replica that the
  planner recreates in pulumi-lws's shape under the same maxUnavailable / maxSurge (a Deleting
  replica keeps its group's ordinal reserved, as upstream).

Invariant: on a fleet pulumi-lws rendered itself (every pod controlled by a StatefulSet) nothing
is legacy and :func:`adopt_legacy` returns its inputs unchanged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pulumi_lws.core.contract.snapshot import Snapshot, is_deleting, labels_of
from pulumi_lws.core.contract.stage import Action, Stage
from pulumi_lws.core.k8s import keys as K
from pulumi_lws.modelserving import labels as L
from pulumi_lws.modelserving import names
from pulumi_lws.modelserving.groups import parse_ordinal
from pulumi_lws.modelserving.replicas import ObservedReplicas, observed_replicas

Obj = Mapping[str, Any]
Key = tuple[int, str, int]  # (group ordinal, role, role replica ordinal)

REPLACE_REASON = "replace an adopted (Kthena-created) role replica in pulumi-lws's shape"


def is_legacy(statefulsets: Iterable[Obj], pods: Iterable[Obj]) -> bool:
    """Pods, no StatefulSet of the replica, and no pod a StatefulSet made (controlled by one, or
    carrying the ``statefulset.kubernetes.io/pod-name`` label the StatefulSet controller sets:
    pulumi-lws's pods left behind by a deleted StatefulSet are Deleting, never legacy)."""
    pods = list(pods)
    return bool(pods) and not list(statefulsets) and not any(_statefulset_made(p) for p in pods)


def _statefulset_made(pod: Obj) -> bool:
    if K.STS_POD_NAME in labels_of(pod):
        return True
    return any(
        ref.get("kind") == "StatefulSet" and ref.get("controller")
        for ref in (pod.get("metadata") or {}).get("ownerReferences") or []
    )


def upstream_pod_names(ms: str, g: int, role: str, r: int, worker_replicas: int) -> list[str]:
    """Kthena's pod names of a role replica: entry ``-0``, then workers ``-1..-W``."""
    base = names.entry_statefulset(ms, g, role, r)
    return [f"{base}-{w}" for w in range(worker_replicas + 1)]


@dataclass(frozen=True)
class LegacyReplica:
    group: int
    role: str
    ordinal: int
    pods: tuple[Obj, ...]

    @property
    def key(self) -> Key:
        return self.group, self.role, self.ordinal

    @property
    def revision(self) -> str:
        """The entry pod's ``revision`` label (else any pod's): the revision its pods run."""
        ordered = sorted(self.pods, key=lambda p: (labels_of(p).get(L.ENTRY) != L.ENTRY_VALUE, _name(p)))
        return next((str(labels_of(p)[L.REVISION]) for p in ordered if labels_of(p).get(L.REVISION)), "")


def _name(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("name"))


def legacy_replicas(ms: str, snapshot: Snapshot, replicas: ObservedReplicas | None = None) -> dict[Key, LegacyReplica]:
    """Every legacy role replica of ModelServing ``ms`` in ``snapshot`` (module doc); ``replicas``:
    the reconcile's index of ``snapshot`` when the caller has it (same answer)."""
    replicas = replicas or observed_replicas(ms, snapshot)
    if "legacy" not in replicas.memo:
        replicas.memo["legacy"] = legacy_of(replicas)
    found: dict[Key, LegacyReplica] = replicas.memo["legacy"]
    return found


def legacy_of(replicas: ObservedReplicas) -> dict[Key, LegacyReplica]:
    """The legacy replicas of an index (:func:`legacy_replicas`), ascending key."""
    out = {}
    for key in replicas.pod_keys():
        pods = replicas.pods_of(key)
        if not replicas.has_statefulsets(key) and not any(_statefulset_made(p) for p in pods):
            out[key] = LegacyReplica(*key, tuple(sorted(pods, key=_name)))
    return dict(sorted(out.items())) if out else out


def _key(ms: str, obj: Obj) -> Key | None:
    lbl = labels_of(obj)
    prefix, g = parse_ordinal(str(lbl.get(L.GROUP_NAME, "")))
    role = str(lbl.get(L.ROLE) or "")
    role_prefix, r = parse_ordinal(str(lbl.get(L.ROLE_ID, "")))
    if prefix != ms or g < 0 or not role or role_prefix != role or r < 0:
        return None
    return g, role, r


def _rendered_replicas(ms: str, manifests: Sequence[Obj]) -> dict[Key, str]:
    """(group, role, r) -> the entry pod template's ``revision`` label, per rendered entry StatefulSet."""
    out: dict[Key, str] = {}
    for m in manifests:
        if m.get("kind") != "StatefulSet":
            continue
        key = _key(ms, m)
        if key is not None and _name(m) == names.entry_statefulset(ms, *key):
            out[key] = str(m["spec"]["template"]["metadata"]["labels"].get(L.REVISION, ""))
    return out


def adopt_legacy(
    ms: str,
    snapshot: Snapshot,
    manifests: Sequence[dict[str, Any]],
    stage: Stage,
    worker_replicas: Mapping[Key, int],
    legacy: Mapping[Key, LegacyReplica] | None = None,
) -> tuple[list[dict[str, Any]], Stage]:
    """``manifests`` without the StatefulSets of legacy replicas, and ``stage`` with the deletes
    that replace legacy replicas (module doc). ``worker_replicas[key]``: W of each legacy replica
    (from its revision), to tell a whole replica from one missing a pod; ``legacy``: the
    reconcile's :func:`legacy_replicas` of ``snapshot`` when the caller has them."""
    legacy = legacy_replicas(ms, snapshot) if legacy is None else legacy
    if not legacy:
        return list(manifests), stage
    rendered = _rendered_replicas(ms, manifests)
    skip = {names.entry_statefulset(ms, *k) for k in legacy} | {names.worker_statefulset(ms, *k) for k in legacy}
    kept = [m for m in manifests if not (m.get("kind") == "StatefulSet" and _name(m) in skip)]
    planned = {a.uid for a in stage.actions if a.verb == "delete" and a.uid}
    deletes: list[Action] = []
    for key, rep in legacy.items():
        present = {_name(p) for p in rep.pods}
        whole = set(upstream_pod_names(ms, *key, worker_replicas.get(key, 0))) <= present
        keep = key in rendered and rendered[key] == rep.revision and whole and not any(is_deleting(p) for p in rep.pods)
        if keep:
            continue
        deletes += [
            Action(
                "delete",
                "Pod",
                _name(p),
                {"propagation": "Background"},
                uid=p["metadata"].get("uid"),
                reason=REPLACE_REASON,
            )
            for p in rep.pods
            if not is_deleting(p) and p["metadata"].get("uid") not in planned
        ]
    if not deletes:
        return kept, stage
    return kept, dataclasses.replace(stage, actions=stage.actions + tuple(deletes), complete=False)
