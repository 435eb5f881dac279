"""Deployment and ReplicaSet controllers (apps/v1), RollingUpdate and Recreate.

Deployment (``rolloutRolling``): maxSurge rounds up and maxUnavailable rounds down, both against
``spec.replicas``; if both are 0, maxUnavailable is 1 (``ResolveFenceposts``). The new
ReplicaSet (``<deploy>-<pod-template-hash>``) scales up while the total of all ReplicaSets'
``spec.replicas`` stays <= replicas + maxSurge; old ReplicaSets scale down (unhealthy replicas
first, then oldest ReplicaSet first) while available pods stay >= replicas - maxUnavailable,
counting the new ReplicaSet's unavailable pods against the budget. minReadySeconds is honoured.
``spec.paused``: no rollout step (no new ReplicaSet, no scaling of new/old ones) until unpaused;
scaling events still resize the ReplicaSets. A ``spec.replicas`` change while several ReplicaSets are active is a scaling event
(``isScalingEvent``: an active ReplicaSet's ``desired-replicas`` annotation differs): ``scale``
resizes them proportionally (``max-replicas`` annotation; largest first, leftover to the first)
so their total is replicas + maxSurge at once, before the rollout continues.

ReplicaSet: keeps ``spec.replicas`` active (not terminating, not terminal) pods named from
``generateName``; scale-down victims rank (Kubernetes ``ActivePodsWithRanks``): unassigned <
assigned; Pending < Unknown < Running; not ready < ready; lower ``pod-deletion-cost`` first;
ready for less time first; more restarts first; newer first.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pulumi_lws.core.k8s import keys as K  # Kubernetes well-known keys only: no API label
from pulumi_lws.core.k8s.scaling import scaled_value
from pulumi_lws.sim.cluster.clock import Clock
from pulumi_lws.sim.cluster.kubelet import Kubelet, condition_true
from pulumi_lws.sim.cluster.store import Conflict, NotFound, Store, clone, controller_uid, meta, owner_ref
from pulumi_lws.sim.cluster.template_hash import template_hash

REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
DESIRED_ANNOTATION = "deployment.kubernetes.io/desired-replicas"
MAX_ANNOTATION = "deployment.kubernetes.io/max-replicas"
_PHASE_RANK = {"Pending": 0, "Unknown": 1, "Running": 2}


def resolve_fenceposts(max_surge: Any, max_unavailable: Any, replicas: int) -> tuple[int, int]:
    surge = scaled_value(max_surge if max_surge is not None else "25%", replicas, round_up=True)
    unavailable = scaled_value(max_unavailable if max_unavailable is not None else "25%", replicas, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def _active(pod: Mapping[str, Any]) -> bool:
    return not meta(pod).get("deletionTimestamp") and pod["status"].get("phase") not in ("Succeeded", "Failed")


class ReplicaSetController:
    def __init__(self, store: Store, clock: Clock, kubelet: Kubelet) -> None:
        self.store, self.clock, self.kubelet = store, clock, kubelet

    def ready(self, pod: Mapping[str, Any]) -> bool:
        return pod["status"].get("phase") == "Running" and condition_true(pod, "Ready")

    def available(self, pod: Mapping[str, Any], min_ready: float) -> bool:
        since = self.kubelet.ready_since(pod)
        return self.ready(pod) and since is not None and self.clock.now - since >= min_ready

    def pods(self, rs: Mapping[str, Any]) -> list[dict[str, Any]]:
        uid = meta(rs)["uid"]
        return [p for p in self.store.dependents(uid) if p["kind"] == "Pod" and controller_uid(p) == uid]

    def sync_all(self) -> None:
        for rs in self.store.list("ReplicaSet"):
            if not meta(rs).get("deletionTimestamp"):
                self.sync(rs)

    def sync(self, rs: dict[str, Any]) -> None:
        active = [p for p in self.pods(rs) if _active(p)]
        diff = len(active) - int(rs["spec"].get("replicas", 1))
        if diff < 0:
            for _ in range(-diff):
                self._create_pod(rs)
        elif diff > 0:
            for pod in sorted(active, key=self.victim_key)[:diff]:
                try:
                    self.store.delete("Pod", meta(pod)["namespace"], meta(pod)["name"], uid=meta(pod)["uid"])
                except (NotFound, Conflict):
                    pass
        self._update_status(rs)

    def victim_key(self, pod: Mapping[str, Any]) -> tuple:
        """Sort key: the first pods are deleted first."""
        assigned = bool((pod.get("spec") or {}).get("nodeName"))
        phase = _PHASE_RANK.get(pod["status"].get("phase"), 0)
        ready = self.ready(pod)
        cost = int((meta(pod).get("annotations") or {}).get(K.POD_DELETION_COST, 0))
        since = self.kubelet.ready_since(pod)
        ready_for = (self.clock.now - since) if (ready and since is not None) else 0.0
        restarts = sum(int(s.get("restartCount") or 0) for s in pod["status"].get("containerStatuses") or [])
        created = float(pod.get("_sim_created_at", 0.0))
        return (assigned, phase, ready, cost, ready_for, -restarts, -created, meta(pod)["name"])

    def _create_pod(self, rs: dict[str, Any]) -> None:
        tmpl = clone(rs["spec"].get("template") or {})
        tmeta = tmpl.get("metadata") or {}
        pod_meta = {
            "generateName": f"{meta(rs)['name']}-",
            "namespace": meta(rs)["namespace"],
            "labels": dict(tmeta.get("labels") or {}),
            "ownerReferences": [owner_ref(rs)],
        }
        if tmeta.get("annotations"):
            pod_meta["annotations"] = dict(tmeta["annotations"])
        self.store.create({"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": tmpl.get("spec") or {}})

    def _update_status(self, rs: dict[str, Any]) -> None:
        min_ready = float(rs["spec"].get("minReadySeconds") or 0)
        pods = self.pods(rs)
        active = [p for p in pods if _active(p)]
        st = {
            "observedGeneration": meta(rs)["generation"],
            "replicas": len(active),
            "readyReplicas": sum(self.ready(p) for p in active),
            "availableReplicas": sum(self.available(p, min_ready) for p in active),
            "terminatingReplicas": sum(1 for p in pods if meta(p).get("deletionTimestamp")),
        }
        if rs["status"] != st:
            rs["status"] = st
            self.store.touch(rs)


class DeploymentController:
    def __init__(self, store: Store, clock: Clock, rsc: ReplicaSetController) -> None:
        self.store, self.clock, self.rsc = store, clock, rsc

    def sync_all(self) -> None:
        for d in self.store.list("Deployment"):
            if not meta(d).get("deletionTimestamp"):
                self.sync(d)

    def replica_sets(self, d: Mapping[str, Any]) -> list[dict[str, Any]]:
        uid = meta(d)["uid"]
        rss = [r for r in self.store.dependents(uid) if r["kind"] == "ReplicaSet" and controller_uid(r) == uid]
        return sorted(rss, key=lambda r: (r["_sim_created_at"], meta(r)["name"]))

    def sync(self, d: dict[str, Any]) -> None:
        rss = self.replica_sets(d)
        if self._is_scaling_event(d, rss):
            new_rs = self._find_new_rs(d, rss)
            old = [r for r in rss if r is not new_rs]
            self._scale_event(d, new_rs, old)
            self._update_status(d, new_rs, old)
            return
        if d["spec"].get("paused"):
            # ``spec.paused`` (Kubernetes ``sync`` of a paused Deployment): no new ReplicaSet, no
            # rollout step; only scaling events (handled above) resize the ReplicaSets
            new_rs = self._find_new_rs(d, rss)
            self._update_status(d, new_rs, [r for r in rss if r is not new_rs])
            return
        new_rs = self._new_rs(d, rss)
        old = [r for r in rss if r is not new_rs]
        if (d["spec"].get("strategy") or {}).get("type") == "Recreate":
            self._recreate(d, new_rs, old)
        else:
            self._reconcile_new(d, new_rs, old)
            self._reconcile_old(d, new_rs, old)
        self._update_status(d, new_rs, old)

    def _hash(self, d: Mapping[str, Any]) -> str:
        return template_hash((d.get("spec") or {}).get("template") or {})[:10]

    def _find_new_rs(self, d: Mapping[str, Any], rss: list[dict[str, Any]]) -> dict[str, Any] | None:
        h = self._hash(d)
        return next((rs for rs in rss if (meta(rs).get("labels") or {}).get(K.POD_TEMPLATE_HASH) == h), None)

    def _new_rs(self, d: dict[str, Any], rss: list[dict[str, Any]]) -> dict[str, Any]:
        found = self._find_new_rs(d, rss)
        if found is not None:
            return found
        h = self._hash(d)
        replicas, surge, _ = self._budgets(d)
        tmpl = clone(d["spec"].get("template") or {})
        tmpl.setdefault("metadata", {}).setdefault("labels", {})[K.POD_TEMPLATE_HASH] = h
        selector = clone(d["spec"].get("selector") or {})
        selector.setdefault("matchLabels", {})[K.POD_TEMPLATE_HASH] = h
        number = 1 + max((int((meta(r).get("annotations") or {}).get(REVISION_ANNOTATION, 0)) for r in rss), default=0)
        return self.store.create(
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    "name": f"{meta(d)['name']}-{h}",
                    "namespace": meta(d)["namespace"],
                    "labels": dict(tmpl["metadata"]["labels"]),
                    "annotations": {
                        REVISION_ANNOTATION: str(number),
                        DESIRED_ANNOTATION: str(replicas),
                        MAX_ANNOTATION: str(replicas + surge),
                    },
                    "ownerReferences": [owner_ref(d)],
                },
                "spec": {
                    "replicas": 0,
                    "selector": selector,
                    "template": tmpl,
                    "minReadySeconds": d["spec"].get("minReadySeconds", 0),
                },
            }
        )

    def _budgets(self, d: Mapping[str, Any]) -> tuple[int, int, int]:
        replicas = int(d["spec"].get("replicas", 1))
        ru = (d["spec"].get("strategy") or {}).get("rollingUpdate") or {}
        surge, unavailable = resolve_fenceposts(ru.get("maxSurge"), ru.get("maxUnavailable"), replicas)
        return replicas, surge, unavailable

    def _scale(self, d: Mapping[str, Any], rs: dict[str, Any], n: int, *, annotate: bool = False) -> None:
        """``scaleReplicaSet``: a size change also records desired/max-replicas annotations;
        ``annotate`` (proportional scaling) updates the annotations even at the same size."""
        resized = int(rs["spec"].get("replicas", 0)) != n
        if not (resized or annotate):
            return
        replicas, surge, _ = self._budgets(d)
        ann = meta(rs).setdefault("annotations", {})
        want = {DESIRED_ANNOTATION: str(replicas), MAX_ANNOTATION: str(replicas + surge)}
        relabel = any(ann.get(k) != v for k, v in want.items())
        ann.update(want)
        if resized:
            rs["spec"]["replicas"] = n
        if resized or relabel:
            self.store.touch(rs, spec_changed=resized)
        if resized:
            self.rsc.sync(rs)

    def _is_scaling_event(self, d: Mapping[str, Any], rss: list[dict[str, Any]]) -> bool:
        """``isScalingEvent``: an active ReplicaSet was sized for another ``spec.replicas``."""
        replicas = int(d["spec"].get("replicas", 1))
        for rs in rss:
            desired = (meta(rs).get("annotations") or {}).get(DESIRED_ANNOTATION)
            if int(rs["spec"].get("replicas", 0)) > 0 and desired is not None and int(desired) != replicas:
                return True
        return False

    def _scale_event(self, d: Mapping[str, Any], new_rs: dict[str, Any] | None, old: list[dict[str, Any]]) -> None:
        """Deployment controller ``scale`` (sync.go)."""
        replicas, surge, _ = self._budgets(d)
        active = [r for r in ([*old, new_rs] if new_rs is not None else old) if int(r["spec"]["replicas"]) > 0]
        if len(active) <= 1:  # FindActiveOrLatest: the only active one, else the newest
            target = active[0] if active else (new_rs or (old[-1] if old else None))
            if target is not None:
                self._scale(d, target, replicas)
            return
        if (
            new_rs is not None
            and int(new_rs["spec"]["replicas"]) == replicas
            and (meta(new_rs).get("annotations") or {}).get(DESIRED_ANNOTATION) == str(replicas)
            and int(new_rs["status"].get("availableReplicas") or 0) == replicas
        ):  # IsSaturated
            for rs in old:
                if int(rs["spec"]["replicas"]) > 0:
                    self._scale(d, rs, 0)
            return
        if (d["spec"].get("strategy") or {}).get("type") == "Recreate":
            return
        allowed = replicas + surge if replicas > 0 else 0
        to_add = allowed - sum(int(r["spec"]["replicas"]) for r in active)
        # ReplicaSetsBySizeNewer (scale up) / BySizeOlder (scale down): larger first, then by age.
        newer_first = to_add > 0
        active.sort(
            key=lambda r: (
                -int(r["spec"]["replicas"]),
                -r["_sim_created_at"] if newer_first else r["_sim_created_at"],
                meta(r)["name"],
            )
        )
        added, sizes = 0, []
        for rs in active:
            have = int(rs["spec"]["replicas"])
            prop = 0
            if to_add != 0 and to_add != added:
                fraction = self._fraction(d, rs, replicas + surge)
                prop = min(fraction, to_add - added) if to_add > 0 else max(fraction, to_add - added)
            sizes.append(have + prop)
            added += prop
        if to_add != 0:
            sizes[0] = max(0, sizes[0] + to_add - added)  # leftover to the largest
        for rs, n in zip(active, sizes):
            self._scale(d, rs, n, annotate=True)

    def _fraction(self, d: Mapping[str, Any], rs: Mapping[str, Any], max_replicas: int) -> int:
        """``getReplicaSetFraction``: the ReplicaSet's share of the new max, rounded half away from 0."""
        have = int(rs["spec"]["replicas"])
        if int(d["spec"].get("replicas", 1)) == 0:
            return -have
        before = int((meta(rs).get("annotations") or {}).get(MAX_ANNOTATION) or 0)
        if before == 0:
            before = int((d.get("status") or {}).get("replicas") or 0)
            if before == 0:
                return 0
        return math.floor(have * max_replicas / before + 0.5) - have

    def _reconcile_new(self, d, new_rs, old) -> None:
        replicas, surge, _ = self._budgets(d)
        have = int(new_rs["spec"]["replicas"])
        if have >= replicas:
            self._scale(d, new_rs, replicas)
            return
        total = have + sum(int(r["spec"]["replicas"]) for r in old)
        room = replicas + surge - total
        if room > 0:
            self._scale(d, new_rs, have + min(room, replicas - have))

    def _reconcile_old(self, d, new_rs, old) -> None:
        if not sum(int(r["spec"]["replicas"]) for r in old):
            return
        replicas, _, unavailable = self._budgets(d)
        min_available = replicas - unavailable
        all_count = sum(int(r["spec"]["replicas"]) for r in old + [new_rs])
        new_unavailable = int(new_rs["spec"]["replicas"]) - int(new_rs["status"].get("availableReplicas") or 0)
        max_down = all_count - min_available - new_unavailable
        if max_down <= 0:
            return
        for rs in old:  # cleanupUnhealthyReplicas: oldest first
            unhealthy = int(rs["spec"]["replicas"]) - int(rs["status"].get("availableReplicas") or 0)
            cut = min(max_down, unhealthy)
            if cut > 0:
                self._scale(d, rs, int(rs["spec"]["replicas"]) - cut)
                max_down -= cut
        available = sum(int(r["status"].get("availableReplicas") or 0) for r in old + [new_rs])
        room = available - min_available
        for rs in old:
            if room <= 0:
                break
            cut = min(int(rs["spec"]["replicas"]), room)
            if cut > 0:
                self._scale(d, rs, int(rs["spec"]["replicas"]) - cut)
                room -= cut

    def _recreate(self, d, new_rs, old) -> None:
        for rs in old:
            self._scale(d, rs, 0)
        if any(self.rsc.pods(rs) for rs in old):
            return  # wait until every old pod is gone
        self._scale(d, new_rs, int(d["spec"].get("replicas", 1)))

    def _update_status(self, d, new_rs, old) -> None:
        rss = old + ([new_rs] if new_rs is not None else [])
        replicas = int(d["spec"].get("replicas", 1))
        available = sum(int(r["status"].get("availableReplicas") or 0) for r in rss)
        st = {
            "observedGeneration": meta(d)["generation"],
            "replicas": sum(int(r["status"].get("replicas") or 0) for r in rss),
            "updatedReplicas": int(new_rs["status"].get("replicas") or 0) if new_rs is not None else 0,
            "readyReplicas": sum(int(r["status"].get("readyReplicas") or 0) for r in rss),
            "availableReplicas": available,
            "unavailableReplicas": max(0, replicas - available),
        }
        if d["status"] != st:
            d["status"] = st
            self.store.touch(d)
