"""What ``pulumi up`` finds changed between a live object and a registered manifest: an update,
or a replacement when an immutable field differs.

Apart from :mod:`.apply` because what the API server would refuse to change in place, and what
Pulumi compares to decide an update, are per-kind facts read from two objects alone (no store, no
stack state); the applier only acts on the answer. Invariants: the applier passes the live object
and the manifest as the API server would default it (sim/cluster/defaults.py), so a field left to
its default never looks changed; :func:`differs` never counts ``status``, metadata other than
labels and annotations, or the simulator's own ``_sim`` fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: StatefulSet spec fields that may change in place (everything else is forbidden on update).
_STS_MUTABLE = {
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
}
_POD_MUTABLE = {"schedulingGates", "activeDeadlineSeconds", "tolerations"}


def immutable_changes(kind: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """Paths of immutable fields that differ between the live object and the desired manifest."""
    os_, ns_ = old.get("spec") or {}, new.get("spec") or {}
    if kind == "StatefulSet":
        return [f"spec.{k}" for k in sorted(set(os_) | set(ns_)) if k not in _STS_MUTABLE and os_.get(k) != ns_.get(k)]
    if kind in ("Deployment", "ReplicaSet", "DaemonSet"):
        return ["spec.selector"] if os_.get("selector") != ns_.get("selector") else []
    if kind == "Job":
        return [f"spec.{k}" for k in ("selector", "template") if k in ns_ and os_.get(k) != ns_.get(k)]
    if kind == "Service":
        ip_old, ip_new = os_.get("clusterIP"), ns_.get("clusterIP")
        return ["spec.clusterIP"] if ip_new and ip_old and ip_old != ip_new else []
    if kind == "ControllerRevision":
        return [k for k in ("data", "revision") if old.get(k) != new.get(k)]
    if kind == "PersistentVolumeClaim":
        return [f"spec.{k}" for k in sorted(set(os_) | set(ns_)) if k != "resources" and os_.get(k) != ns_.get(k)]
    if kind == "Pod":
        strip = lambda s: {k: v for k, v in s.items() if k not in _POD_MUTABLE and k != "nodeName"}  # noqa: E731
        images = lambda s: [{k: v for k, v in c.items() if k != "image"} for c in s.get("containers") or []]  # noqa: E731
        a, b = strip(os_), strip(ns_)
        a["containers"], b["containers"] = images(os_), images(ns_)
        return ["spec"] if a != b else []
    if kind in ("ConfigMap", "Secret") and old.get("immutable"):
        return [k for k in ("data", "binaryData", "stringData") if old.get(k) != new.get(k)]
    return []


def differs(live: Mapping[str, Any], want: Mapping[str, Any]) -> bool:
    for k in set(live) | set(want):
        if k in ("metadata", "status", "kind", "apiVersion") or k.startswith("_sim"):
            continue
        if live.get(k) != want.get(k):
            return True
    lm, wm = live.get("metadata") or {}, want.get("metadata") or {}
    return any((lm.get(f) or {}) != (wm.get(f) or {}) for f in ("labels", "annotations"))
