"""StatefulSet controller (apps/v1), faithful where LWS rollouts depend on it.

Semantics (Kubernetes ``defaultStatefulSetControl``, MaxUnavailableStatefulSet on as in 1.35):
- revisions: the pod template hashes to ``<sts>-<hash>``; pods carry it as
  ``controller-revision-hash``. ``status.updateRevision`` is the live template's revision;
  ``status.currentRevision`` stays until every pod is updated and ready (RollingUpdate only;
  OnDelete never advances it). Old templates are kept by revision (ControllerRevision objects
  labelled with the template labels, like Kubernetes, or kept internally).
- replicas ``[start, start+replicas)`` (``ordinals.start``); missing pods are created from the
  current revision below ``start+partition`` and from the update revision otherwise.
  OrderedReady creates/deletes one pod at a time and waits for Running+Ready; Parallel does not.
- scale-down deletes the highest ordinals first; failed pods are deleted and recreated.
- RollingUpdate: ``maxUnavailable`` (int or percent of spec.replicas rounded up, at least 1);
  unavailable = replica ordinals missing or not Running+Ready(+minReadySeconds) or terminating;
  it deletes up to ``maxUnavailable - unavailable`` outdated, non-terminating pods at ordinals
  ``>= start+partition``, highest first.
- volumeClaimTemplates -> PVC ``<claim>-<pod>``; persistentVolumeClaimRetentionPolicy
  whenScaled/whenDeleted=Delete makes the pod / the StatefulSet own the claim (GC removes it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pulumi_lws.core.k8s import keys as K  # Kubernetes well-known keys only: no API label
from pulumi_lws.core.k8s.scaling import scaled_value
from pulumi_lws.sim.cluster.admission import AdmissionDenied
from pulumi_lws.sim.cluster.clock import Clock
from pulumi_lws.sim.cluster.kubelet import Kubelet
from pulumi_lws.sim.cluster.quiet import QuietSets
from pulumi_lws.sim.cluster.store import (
    AlreadyExists,
    Conflict,
    NotFound,
    Store,
    clone,
    controller_uid,
    meta,
    owner_ref,
)
from pulumi_lws.sim.cluster.sts_pods import PodIndex, Table, running_ready
from pulumi_lws.sim.cluster.template_hash import template_hash

#: what the StatefulSet controller stamps on each history revision (Kubernetes' ``history.ControllerRevisionHashLabel``)
REVISION_HASH_LABEL = K.STS_HISTORY_HASH


@dataclass(frozen=True)
class Rev:
    name: str
    number: int
    template: Mapping[str, Any]


def ordinal_of(sts_name: str, pod_name: str) -> int | None:
    """``<sts>-<digits>`` -> the ordinal (the regex ``<sts>-(\\d+)`` without compiling one pattern
    per StatefulSet name: thousands of names would thrash ``re``'s pattern cache)."""
    if len(pod_name) <= len(sts_name) + 1 or not pod_name.startswith(sts_name) or pod_name[len(sts_name)] != "-":
        return None
    digits = pod_name[len(sts_name) + 1 :]
    return int(digits) if digits.isdecimal() else None


def pod_revision(pod: Mapping[str, Any]) -> str | None:
    return (meta(pod).get("labels") or {}).get(K.CONTROLLER_REVISION_HASH)


class StatefulSetController:
    def __init__(self, store: Store, clock: Clock, kubelet: Kubelet, *, history_objects: bool = True) -> None:
        self.store = store
        self.clock = clock
        self.kubelet = kubelet
        self.history_objects = history_objects
        self._internal: dict[str, list[Rev]] = {}
        self._hashes: dict[str, tuple[int, str]] = {}  # uid -> (generation, template hash)
        self._sets = QuietSets(store, clock)  # which sets a pass visits
        self._index = PodIndex(store, kubelet.ready_since)  # a big set's pods, kept from the writes
        #: ``<ns>/<pod>`` -> why admission refused its creation (the last refusal; retried at each sync)
        self.denied: dict[str, str] = {}
        #: (namespace, pod name) -> uid of the set whose create found the name taken (by a pod it
        #: does not control): the set is woken once the name is free (:meth:`sync_all`)
        self.name_taken: dict[tuple[str, str], str] = {}

    def sync_all(self) -> None:
        """Sync every StatefulSet in list order, skipping one whose inputs are exactly those of its
        previous sync that wrote nothing (same result again: nothing): :mod:`.quiet`."""
        if self.name_taken:  # a FailedCreate retried: the set whose pod name is free again syncs
            for key, uid in list(self.name_taken.items()):
                if self.store.get("Pod", *key) is None:
                    del self.name_taken[key]
                    self._sets.wake(uid)
        self._sets.visit(self.sync)

    def mark_quiet(self, sts: Mapping[str, Any]) -> None:
        """Record ``sts`` as after a sync, now, that wrote nothing (its next sync would write
        nothing, which the caller knows: a seeded converged cluster): skipped until one of its
        inputs moves from here on."""
        self._sets.mark(sts)

    def template_hash_of(self, sts: Mapping[str, Any]) -> str:
        """:func:`template_hash` of the live template, memoised per (uid, generation): the template is
        part of the spec and every spec write bumps the generation (``Store.replace``)."""
        m = sts["metadata"]
        generation = m.get("generation")
        hit = self._hashes.get(m["uid"])
        if hit is not None and hit[0] == generation:
            return hit[1]
        value = template_hash(sts["spec"].get("template") or {})
        self._hashes[m["uid"]] = (generation, value)
        return value

    # ---- health ----------------------------------------------------------------------------
    def running_ready(self, pod: Mapping[str, Any]) -> bool:
        return running_ready(pod)

    def available(self, pod: Mapping[str, Any], min_ready: float) -> bool:
        since = self.kubelet.ready_since(pod)
        return self.running_ready(pod) and since is not None and self.clock.now - since >= min_ready

    def healthy(self, pod: Mapping[str, Any] | None, min_ready: float) -> bool:
        return pod is not None and not meta(pod).get("deletionTimestamp") and self.available(pod, min_ready)

    # ---- one StatefulSet -------------------------------------------------------------------
    def sync(self, sts: dict[str, Any]) -> None:
        spec = sts["spec"]
        update_rev = self._ensure_revision(sts)
        current_rev = self._revision(sts, sts["status"].get("currentRevision")) or update_rev
        monotonic = spec.get("podManagementPolicy", "OrderedReady") == "OrderedReady"
        # a table where what the walks read depends neither on order nor on the time
        indexed = not monotonic and not float(spec.get("minReadySeconds") or 0)
        pods, table = self._list(sts, indexed)
        listed_at = self.store.version  # re-list the pods only after a write (same answer otherwise)
        start = int((spec.get("ordinals") or {}).get("start") or 0)
        replicas = int(spec.get("replicas", 1))
        wanted = range(start, start + replicas)
        proceed = self._process_replicas(sts, pods, wanted, current_rev, update_rev, monotonic, table)
        if table is None or not table.all_in(wanted):
            proceed = proceed and self._process_condemned(sts, pods, wanted, monotonic)
        strategy = spec.get("updateStrategy") or {}
        if proceed and strategy.get("type", "RollingUpdate") == "RollingUpdate":
            if self.store.version != listed_at:
                (pods, table), listed_at = self._list(sts, indexed), self.store.version
            self._rolling_update(sts, pods, wanted, update_rev, table)
        if self.store.version != listed_at:
            pods, table = self._list(sts, indexed)
        self._update_status(sts, pods, current_rev, update_rev, table)

    def _list(self, sts: Mapping[str, Any], indexed: bool) -> tuple[dict[int, dict[str, Any]], Table | None]:
        """Its pods by ordinal and, ``indexed`` and a big set, their :class:`~.sts_pods.Table`
        refreshed (whose ``pods`` they are): :mod:`.sts_pods`."""
        table = self._index.table(sts) if indexed else None
        return (self._pods(sts), None) if table is None else (table.pods, table)

    def _pods(self, sts: Mapping[str, Any]) -> dict[int, dict[str, Any]]:
        """The pods it controls by ordinal (``controller_uid`` and ``ordinal_of`` inlined: the
        leader StatefulSet lists every group's leader pod)."""
        out = {}
        m = sts["metadata"]
        uid, prefix = m["uid"], m["name"] + "-"
        # unsorted: every consumer of this dict reads it by ordinal or order-free
        for dep in self.store.dependents_unordered(uid):
            if dep["kind"] != "Pod":
                continue
            dm = dep["metadata"]
            controller = None
            for ref in dm.get("ownerReferences") or ():
                if ref.get("controller"):
                    controller = ref.get("uid")
                    break
            name = dm["name"]
            if controller == uid and len(name) > len(prefix) and name.startswith(prefix):
                digits = name[len(prefix) :]
                if digits.isdecimal():
                    out[int(digits)] = dep
        return out

    def _process_replicas(
        self, sts, pods, wanted, current_rev: Rev, update_rev: Rev, monotonic: bool, table: Table | None = None
    ) -> bool:
        """``table`` (a Parallel set's): only the ordinals it writes at are visited."""
        min_ready = float(sts["spec"].get("minReadySeconds") or 0)
        start = wanted.start
        for ordinal in wanted if table is None else table.to_create(wanted):
            pod = pods.get(ordinal)
            if (
                pod is not None
                and pod["status"].get("phase") in ("Failed", "Succeeded")
                and not meta(pod).get("deletionTimestamp")
            ):
                pod["_sim_killed"] = True
                self._delete(pod)
                pod = self.store.get("Pod", meta(sts)["namespace"], meta(pod)["name"])
            if pod is None:
                self._create_pod(sts, ordinal, self._revision_for(sts, ordinal, start, current_rev, update_rev))
                if monotonic:
                    return False
                continue
            if monotonic and (meta(pod).get("deletionTimestamp") or not self.available(pod, min_ready)):
                return False
        return True

    def _revision_for(self, sts, ordinal: int, start: int, current_rev: Rev, update_rev: Rev) -> Rev:
        strategy = sts["spec"].get("updateStrategy") or {}
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return update_rev
        partition = int((strategy.get("rollingUpdate") or {}).get("partition") or 0)
        return current_rev if ordinal < start + partition else update_rev

    def _process_condemned(self, sts, pods, wanted, monotonic: bool) -> bool:
        min_ready = float(sts["spec"].get("minReadySeconds") or 0)
        condemned = sorted((o for o in pods if o not in wanted), reverse=True)
        for ordinal in condemned:
            pod = pods[ordinal]
            if meta(pod).get("deletionTimestamp"):
                if monotonic:
                    return False
                continue
            if monotonic and any(not self.healthy(p, min_ready) for o, p in pods.items() if o != ordinal):
                return False
            self._release_claims_on_scale_down(sts, pod)
            self._delete(pod)
            if monotonic:
                return False
        return True

    def _rolling_update(self, sts, pods, wanted, update_rev: Rev, table: Table | None = None) -> None:
        spec = sts["spec"]
        ru = (spec.get("updateStrategy") or {}).get("rollingUpdate") or {}
        replicas = int(spec.get("replicas", 1))
        max_unavailable = max(1, scaled_value(ru.get("maxUnavailable", 1), replicas, round_up=True))
        min_ready = float(spec.get("minReadySeconds") or 0)
        unavailable = self._unhealthy(pods, wanted, min_ready) if table is None else table.unhealthy(wanted)
        budget = max_unavailable - unavailable
        low = wanted.start + int(ru.get("partition") or 0)
        for ordinal in reversed(wanted):
            if budget <= 0 or ordinal < low:
                break
            if table is not None:
                if table.outdated(ordinal, update_rev.name):
                    self._delete(pods[ordinal])
                    budget -= 1
                continue
            pod = pods.get(ordinal)
            if pod is not None and pod_revision(pod) != update_rev.name and not meta(pod).get("deletionTimestamp"):
                self._delete(pod)
                budget -= 1

    def _unhealthy(self, pods: Mapping[int, Mapping[str, Any]], wanted: range, min_ready: float) -> int:
        """How many ``wanted`` ordinals are not :meth:`healthy` (inlined: one loop per sync)."""
        now, ready_since = self.clock.now, self.kubelet.ready_since
        unhealthy = 0
        for ordinal in wanted:
            pod = pods.get(ordinal)
            if pod is None or pod["metadata"].get("deletionTimestamp") or not running_ready(pod):
                unhealthy += 1
                continue
            since = ready_since(pod)
            if since is None or now - since < min_ready:
                unhealthy += 1
        return unhealthy

    def _update_status(self, sts, pods, current_rev: Rev, update_rev: Rev, table: Table | None = None) -> None:
        min_ready = float(sts["spec"].get("minReadySeconds") or 0)
        now, ready_since = self.clock.now, self.kubelet.ready_since
        current_name, update_name = current_rev.name, update_rev.name
        replicas = ready = available = current = updated = 0
        if table is not None:  # the walk below, counted as the pods were written
            replicas, ready, available = len(table.pods), len(table.ready), len(table.available)
            current, updated = table.live_revisions[current_name], table.live_revisions[update_name]
            pods = {}
        for pod in pods.values():  # running_ready, available and pod_revision inlined
            replicas += 1
            if running_ready(pod):
                ready += 1
                since = ready_since(pod)
                if since is not None and now - since >= min_ready:
                    available += 1
            pm = pod["metadata"]
            if not pm.get("deletionTimestamp"):
                revision = (pm.get("labels") or {}).get(K.CONTROLLER_REVISION_HASH)
                current += revision == current_name
                updated += revision == update_name
        st = {
            "observedGeneration": meta(sts)["generation"],
            "replicas": replicas,
            "readyReplicas": ready,
            "availableReplicas": available,
            "currentReplicas": current,
            "updatedReplicas": updated,
            "currentRevision": current_name,
            "updateRevision": update_name,
            "collisionCount": 0,
        }
        rolling = (sts["spec"].get("updateStrategy") or {}).get("type", "RollingUpdate") == "RollingUpdate"
        if rolling and st["updatedReplicas"] == st["replicas"] and st["readyReplicas"] == st["replicas"]:
            st["currentReplicas"] = st["updatedReplicas"]
            st["currentRevision"] = update_rev.name
        if sts["status"] != st:
            sts["status"] = st
            self.store.touch(sts)
            if st["currentRevision"] == st["updateRevision"]:
                self._truncate_history(
                    sts, {pod_revision(p) for p in pods.values()} if table is None else set(table.revisions)
                )

    # ---- pods and claims -----------------------------------------------------------------
    def _create_pod(self, sts, ordinal: int, rev: Rev) -> None:
        name = f"{meta(sts)['name']}-{ordinal}"
        tmpl = rev.template  # read only: the dicts built here are new, and the store copies the pod
        tmeta = tmpl.get("metadata") or {}
        labels = dict(tmeta.get("labels") or {})
        labels.update({K.CONTROLLER_REVISION_HASH: rev.name, K.STS_POD_NAME: name, K.POD_INDEX: str(ordinal)})
        pod_meta = {
            "name": name,
            "namespace": meta(sts)["namespace"],
            "labels": labels,
            "ownerReferences": [owner_ref(sts)],
        }
        if tmeta.get("annotations"):
            pod_meta["annotations"] = dict(tmeta["annotations"])
        spec = dict(tmpl.get("spec") or {})
        spec["hostname"] = name
        if sts["spec"].get("serviceName"):
            spec["subdomain"] = sts["spec"]["serviceName"]
        spec["volumes"] = self._claim_volumes(sts, name, list(spec.get("volumes") or []))
        try:
            self.store.create({"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": spec})
        except AdmissionDenied as exc:  # Kubernetes: a FailedCreate event, retried at the next sync
            self.denied[f"{meta(sts)['namespace']}/{name}"] = str(exc)
        except AlreadyExists:
            # the name is still held by a pod this StatefulSet does not control — one of a deleted
            # predecessor's (a same-name StatefulSet deleted in the background: the garbage
            # collector removes its pods afterwards), terminating — which it never adopts (it has
            # a controller reference): FailedCreate, retried (the controller's requeue) once that
            # pod is gone
            self.name_taken[(meta(sts)["namespace"], name)] = meta(sts)["uid"]

    def _claim_volumes(self, sts, pod_name: str, volumes: list[dict[str, Any]]) -> list[dict[str, Any]]:
        ns = meta(sts)["namespace"]
        retention = sts["spec"].get("persistentVolumeClaimRetentionPolicy") or {}
        for vct in sts["spec"].get("volumeClaimTemplates") or []:
            claim = (vct.get("metadata") or {}).get("name", "data")
            pvc_name = f"{claim}-{pod_name}"
            if self.store.get("PersistentVolumeClaim", ns, pvc_name) is None:
                pvc_meta = {
                    "name": pvc_name,
                    "namespace": ns,
                    "labels": dict((sts["spec"].get("selector") or {}).get("matchLabels") or {}),
                }
                if retention.get("whenDeleted") == "Delete":
                    pvc_meta["ownerReferences"] = [owner_ref(sts, controller=False)]
                self.store.create(
                    {
                        "apiVersion": "v1",
                        "kind": "PersistentVolumeClaim",
                        "metadata": pvc_meta,
                        "spec": clone(vct.get("spec") or {}),
                        "status": {"phase": "Bound"},
                    }
                )
            volumes = [v for v in volumes if v.get("name") != claim]
            volumes.append({"name": claim, "persistentVolumeClaim": {"claimName": pvc_name}})
        return volumes

    def _release_claims_on_scale_down(self, sts, pod) -> None:
        retention = sts["spec"].get("persistentVolumeClaimRetentionPolicy") or {}
        if retention.get("whenScaled") != "Delete":
            return
        for vct in sts["spec"].get("volumeClaimTemplates") or []:
            pvc = self.store.get(
                "PersistentVolumeClaim",
                meta(sts)["namespace"],
                f"{(vct.get('metadata') or {}).get('name', 'data')}-{meta(pod)['name']}",
            )
            if pvc is not None:
                self.store._unindex_owners(pvc)
                meta(pvc)["ownerReferences"] = [owner_ref(pod, controller=False)]
                self.store._index_owners(pvc)
                self.store.touch(pvc)

    def _delete(self, pod) -> None:
        try:
            self.store.delete("Pod", meta(pod)["namespace"], meta(pod)["name"], uid=meta(pod)["uid"])
        except (NotFound, Conflict):
            pass

    # ---- revision history ----------------------------------------------------------------
    def _revisions(self, sts) -> list[Rev]:
        uid = meta(sts)["uid"]
        if not self.history_objects:
            return self._internal.setdefault(uid, [])
        out = []
        for cr in self.store.dependents(uid):
            if cr["kind"] == "ControllerRevision" and controller_uid(cr) == uid:
                tmpl = {
                    k: v
                    for k, v in ((cr.get("data") or {}).get("spec") or {}).get("template", {}).items()
                    if k != "$patch"
                }
                out.append(Rev(meta(cr)["name"], int(cr.get("revision") or 0), tmpl))
        return sorted(out, key=lambda r: r.number)

    def _revision(self, sts, name: str | None) -> Rev | None:
        return next((r for r in self._revisions(sts) if r.name == name), None) if name else None

    def _ensure_revision(self, sts) -> Rev:
        """The revision of the live template; an equal older revision is re-numbered to the top."""
        template = sts["spec"].get("template") or {}
        digest = self.template_hash_of(sts)
        name = f"{meta(sts)['name']}-{digest}"
        revs = self._revisions(sts)
        top = max((r.number for r in revs), default=0)
        existing = next((r for r in revs if r.name == name), None)
        if existing is not None and existing.number == top:
            return existing
        if not self.history_objects:
            # the stored set's own template, shared: never written in place (a spec write
            # replaces the spec: Store.replace), and a revision's template is only read
            rev = Rev(name, top + 1, template)
            self._internal[meta(sts)["uid"]] = [r for r in revs if r.name != name] + [rev]
            return rev
        if existing is not None:
            cr = self.store.get("ControllerRevision", meta(sts)["namespace"], name)
            assert cr is not None, f"revision {name} was listed by _revisions, so it is stored"
            cr["revision"] = top + 1
            self.store.touch(cr)
            return Rev(name, top + 1, clone(template))
        labels = dict((template.get("metadata") or {}).get("labels") or {})
        labels[REVISION_HASH_LABEL] = digest
        # the store keeps a deep copy of what it creates: the template is copied once, there; the
        # revision returned is the one _revisions reads from the stored object from now on
        stored = self.store.create(
            {
                "apiVersion": "apps/v1",
                "kind": "ControllerRevision",
                "metadata": {
                    "name": name,
                    "namespace": meta(sts)["namespace"],
                    "labels": labels,
                    "ownerReferences": [owner_ref(sts)],
                },
                "data": {"spec": {"template": {**template, "$patch": "replace"}}},
                "revision": top + 1,
            }
        )
        kept = stored["data"]["spec"]["template"]
        return Rev(name, top + 1, {k: v for k, v in kept.items() if k != "$patch"})

    def _truncate_history(self, sts, pod_revisions: set[str | None]) -> None:
        """``pod_revisions``: of its pods as listed after its last write (a status write leaves them as they are)."""
        limit = int(sts["spec"].get("revisionHistoryLimit", 10))
        live = {sts["status"].get("currentRevision"), sts["status"].get("updateRevision")}
        live |= pod_revisions
        old = [r for r in self._revisions(sts) if r.name not in live]
        for rev in old[: max(0, len(old) - limit)]:
            if self.history_objects:
                self.store.delete("ControllerRevision", meta(sts)["namespace"], rev.name)
            else:
                self._internal[meta(sts)["uid"]].remove(rev)
