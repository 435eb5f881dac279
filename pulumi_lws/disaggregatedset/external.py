"""External scaling (``scaling.mode: External``): a role whose replicas an autoscaler owns.

**Which object carries the scale subresource with no controller running**: upstream's own
``DisaggregatedSetRoleScaler`` (``disaggregatedset.x-k8s.io/v1``, CRD
``disaggregatedsetrolescalers.disaggregatedset.x-k8s.io``, read from
``api/disaggregatedset/v1/disaggregatedsetrolescaler_types.go`` @ ``060ab4d``), one per External
role, named ``<ds>-<role>`` and labelled ``disaggregatedset.x-k8s.io/{name,role}``. Its CRD declares
``subresources.scale`` (``specReplicasPath .spec.replicas``, ``statusReplicasPath
.status.replicas``, ``labelSelectorPath .status.selector``): the API server itself serves
``/scale`` for it, so an HPA, KEDA or ``kubectl scale`` can target it with no controller in the
cluster. The child LeaderWorkerSets are not objects here (they are expanded into StatefulSets),
so nothing else could carry ``/scale`` for a role across its revisions.

Who owns what:

* ``spec.replicas`` belongs to the autoscaler. pulumi-lws **seeds** it (upstream's rule: 1 for a
  fresh role — 0 would leave a vanilla HPA in ScalingDisabled — or the role's current replicas
  on a Static -> External switch, so the role does not drain) and afterwards **echoes back what
  it observes**: the scaler is declared with ``spec.replicas`` = the value read this reconcile.
  A Pulumi ``ignoreChanges`` cannot be expressed in a manifest and a scaler registered only once
  would be deleted by the next ``up`` that no longer declares it; echoing keeps the object in
  the stack while never changing the value (an apply of an unchanged value is a no-op, and under
  server-side apply an equal value never conflicts with the autoscaler's field manager). The one
  window: an autoscaler write between this reconcile's read and its apply is overwritten with
  the value read (the autoscaler writes again on its next tick, ~15 s for HPA).
* the reconcile reads ``spec.replicas`` back as the role's per-slice target
  (``RoleTarget.replicas``) at every reconcile — during a rollout too (upstream blocks scaling
  for the whole rollout, lws#1022): the stage planner re-targets the new revision and the
  rollout converges to the new value;
* ``status.replicas`` (groups of the role over every revision) and ``status.selector`` (one pod
  per group: ``<name>,<role>,leaderworkerset.sigs.k8s.io/worker-index=0``) are what an HPA
  reads; :func:`status_actions` writes them with the ``patch-status`` action (a merge of those
  keys into the scaler's ``/status``, uid-guarded) whenever the observed status differs. Pulumi
  cannot declare a status subresource, so this is an imperative action, previewable like the
  others; a scaler created by this stage gets its status at the next reconcile.

**The CRD is a cluster prerequisite, never declared by a DisaggregatedSet.** It is cluster-scoped
and shared by every namespace and stack: declared per DisaggregatedSet, two sets in one stack
would register the same object twice, and deleting either would delete the CRD and with it every
scaler of every set. It is installed once per cluster (upstream's lws install manifests already
carry it): :func:`scaler_crd` / ``python -m pulumi_lws.disaggregatedset.external | kubectl apply
-f -`` / ``pulumi_lws.components.disaggregatedset.role_scaler_crd()`` in one stack (docs/component.md,
"DisaggregatedSet: External scaling").

**Scope.** The read-back needs the scaler kind in the DisaggregatedSet's observation scope:
``observe.ds_scope(..., scalers=True)`` whenever a role is External (the workload's ``scope``),
so an External role's value is always read back before it is declared and never re-seeded. A
cluster without the CRD serves no such API: the LIST reads nothing (404 skipped) and the apply of
the scaler fails with the API server's "no matches for kind" until the CRD is installed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pulumi_lws.core.contract.snapshot import Snapshot, labels_of
from pulumi_lws.core.contract.stage import Action
from pulumi_lws.core.k8s.yamlio import dump_document
from pulumi_lws.disaggregatedset import labels as DL
from pulumi_lws.disaggregatedset import names
from pulumi_lws.lws import labels as L

#: the DisaggregatedSet model (``api.DisaggregatedSet``); this module sits in layer 0 (labels,
#: names: it imports neither the API model nor the observer), so it is typed structurally
DisaggregatedSet = Any

GROUP = "disaggregatedset.x-k8s.io"
SCALER_KIND = "DisaggregatedSetRoleScaler"
SCALER_API_VERSION = f"{GROUP}/v1"
SCALER_PLURAL = "disaggregatedsetrolescalers"
CRD_NAME = f"{SCALER_PLURAL}.{GROUP}"
#: seed of a fresh External role's scaler (upstream: 0 would deadlock a vanilla HPA)
FRESH_SEED = 1


def scaler_crd() -> dict[str, Any]:
    """Upstream's CRD (the schema's fields and defaults, the scale and status subresources)."""
    cond = {
        "type": "object",
        "required": ["lastTransitionTime", "message", "reason", "status", "type"],
        "properties": {
            "lastTransitionTime": {"type": "string", "format": "date-time"},
            "message": {"type": "string", "maxLength": 32768},
            "observedGeneration": {"type": "integer", "format": "int64", "minimum": 0},
            "reason": {"type": "string", "maxLength": 1024, "minLength": 1},
            "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
            "type": {"type": "string", "maxLength": 316},
        },
    }
    schema = {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "required": ["replicas"],
                "properties": {"replicas": {"type": "integer", "format": "int32", "minimum": 0, "default": 0}},
            },
            "status": {
                "type": "object",
                "properties": {
                    "replicas": {"type": "integer", "format": "int32"},
                    "selector": {"type": "string"},
                    "observedGeneration": {"type": "integer", "format": "int64"},
                    "conditions": {
                        "type": "array",
                        "items": cond,
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["type"],
                    },
                },
            },
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD_NAME, "labels": {L.MANAGED_BY: L.MANAGED_BY_VALUE}},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {
                "kind": SCALER_KIND,
                "listKind": f"{SCALER_KIND}List",
                "plural": SCALER_PLURAL,
                "singular": SCALER_KIND.lower(),
                "shortNames": ["dsrs"],
            },
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                    "subresources": {
                        "status": {},
                        "scale": {
                            "specReplicasPath": ".spec.replicas",
                            "statusReplicasPath": ".status.replicas",
                            "labelSelectorPath": ".status.selector",
                        },
                    },
                    "additionalPrinterColumns": [
                        {"name": "Desired", "type": "integer", "jsonPath": ".spec.replicas"},
                        {"name": "Current", "type": "integer", "jsonPath": ".status.replicas"},
                        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                    ],
                }
            ],
        },
    }


def scaler(ds: DisaggregatedSet, role: str, replicas: int) -> dict[str, Any]:
    """The role's scaler ``<ds>-<role>`` declaring ``spec.replicas`` = ``replicas`` (the seed, or the
    value observed this reconcile: never a value of pulumi-lws's own)."""
    return {
        "apiVersion": SCALER_API_VERSION,
        "kind": SCALER_KIND,
        "metadata": {
            "name": names.scaler(ds.name, role),
            "namespace": ds.namespace,
            "labels": {DL.NAME: ds.name, DL.ROLE: role, L.MANAGED_BY: L.MANAGED_BY_VALUE},
        },
        "spec": {"replicas": int(replicas)},
    }


def selector(ds: DisaggregatedSet, role: str) -> str:
    """Upstream's ``status.selector``: the leader pod of every group of the role, every revision."""
    return f"{DL.NAME}={ds.name},{DL.ROLE}={role},{L.WORKER_INDEX}=0"


def scaler_status(ds: DisaggregatedSet, role: str, children: Iterable[Any]) -> dict[str, Any]:
    """What upstream's ``WriteStatus`` puts in the scaler's status (replicas over every revision)."""
    replicas = sum(c.replicas for c in children if c.role == role and not c.being_deleted)
    return {"replicas": replicas, "selector": selector(ds, role)}


def observed_replicas(ds: DisaggregatedSet, snapshot: Snapshot) -> dict[str, int]:
    """``{role: spec.replicas}`` of every scaler of ``ds`` in the snapshot (this DS's name label and
    the ``<ds>-<role>`` name; a missing or malformed ``spec.replicas`` reads as the CRD default 0)."""
    out: dict[str, int] = {}
    for obj in snapshot.list(SCALER_KIND):
        role = labels_of(obj).get(DL.ROLE)
        if labels_of(obj).get(DL.NAME) != ds.name or not role or obj["metadata"]["name"] != names.scaler(ds.name, role):
            continue
        value = (obj.get("spec") or {}).get("replicas", 0)
        out[role] = int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else 0
    return out


def seed(role: str, children: Iterable[Any]) -> int:
    """Upstream's seed: the role's current replicas (a Static -> External switch: the newest
    revision's child, i.e. what runs at its target), else 1 for a fresh role."""
    own = [c for c in children if c.role == role and not c.being_deleted]
    if not own:
        return FRESH_SEED
    newest = max(own, key=lambda c: (c.created or 0.0, c.name))
    return max(newest.replicas, 0) or FRESH_SEED


def targets(ds: DisaggregatedSet, snapshot: Snapshot, children: Iterable[Any]) -> dict[str, int]:
    """Per External role the per-slice target this reconcile: the scaler's observed
    ``spec.replicas``, else its seed."""
    children = list(children)
    observed = observed_replicas(ds, snapshot)
    return {r.name: observed[r.name] if r.name in observed else seed(r.name, children) for r in ds.roles if r.external}


def manifests(ds: DisaggregatedSet, values: Mapping[str, int]) -> tuple[dict[str, Any], ...]:
    """One scaler per External role (``values``: :func:`targets`); never the CRD (module doc)."""
    return tuple(scaler(ds, role, n) for role, n in values.items())


#: ``Action.reason`` of the scaler status writes
STATUS_REASON = "scale subresource status (what an HPA reads)"


def status_actions(ds: DisaggregatedSet, snapshot: Snapshot, children: Iterable[Any]) -> tuple[Action, ...]:
    """A ``patch-status`` per observed scaler of an External role whose ``status.replicas`` /
    ``status.selector`` (:func:`scaler_status`) or ``observedGeneration`` differ from what is
    observed; uid-guarded, so a recreated scaler is never patched with a stale view."""
    children = list(children)
    external = {r.name for r in ds.roles if r.external}
    out = []
    for obj in snapshot.list(SCALER_KIND):
        meta = obj.get("metadata") or {}
        role = labels_of(obj).get(DL.ROLE)
        if (
            role is None
            or labels_of(obj).get(DL.NAME) != ds.name
            or role not in external
            or meta.get("name") != names.scaler(ds.name, role)
        ):
            continue
        want = scaler_status(ds, role, children)
        if isinstance(meta.get("generation"), int):
            want["observedGeneration"] = meta["generation"]
        have = obj.get("status") or {}
        if any(have.get(k) != v for k, v in want.items()):
            out.append(
                Action(
                    "patch-status",
                    SCALER_KIND,
                    meta["name"],
                    {"status": want},
                    uid=meta.get("uid"),
                    reason=STATUS_REASON,
                )
            )
    return tuple(out)


def crd_yaml() -> str:
    """The CRD as YAML (``python -m pulumi_lws.disaggregatedset.external | kubectl apply -f -``)."""
    return dump_document(scaler_crd())


if __name__ == "__main__":  # pragma: no cover - exercised through crd_yaml
    print(crd_yaml(), end="")
