"""``SimCluster``: the embedded cluster behind one facade (Observer + Actuator + apply + time).

Invariants:
- ``observe`` returns copies (planners cannot mutate the cluster; a copy is shared by later
  observations until the object is written: ``Store.observed``) selected exactly like a
  live observer: the scope's label selector over the scope's kinds in one namespace, plus every
  Node when asked (:class:`pulumi_lws.core.contract.ports.Scope`); ``Snapshot.now`` is the simulated epoch time;
- ``execute`` applies ``Action`` s with the API's semantics (uid preconditions, merge of
  labels/annotations where ``None`` deletes a key) and reports one line per action;
- after every write path (``apply``, ``execute``, ``step``) the controllers run to a fixpoint
  at the current instant (``settle``), so observations never see half-reconciled controllers.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pulumi_lws.core.contract.ports import Scope
from pulumi_lws.core.contract.reuse import Reuse
from pulumi_lws.core.contract.snapshot import NodeCapacity, Snapshot
from pulumi_lws.core.contract.stage import Action
from pulumi_lws.sim.cluster.apply import Applier, ApplyResult
from pulumi_lws.sim.cluster.clock import Clock
from pulumi_lws.sim.cluster.deployment import DeploymentController, ReplicaSetController
from pulumi_lws.sim.cluster.gc import GarbageCollector
from pulumi_lws.sim.cluster.kubelet import Kubelet, KubeletConfig, set_condition
from pulumi_lws.sim.cluster.observation import Observations
from pulumi_lws.sim.cluster.scheduler import Scheduler
from pulumi_lws.sim.cluster.statefulset import StatefulSetController
from pulumi_lws.sim.cluster.store import Conflict, NotFound, SimError, Store, meta, strip_internal

MAX_SETTLE_PASSES = 200


def merge_meta(metadata: dict[str, Any], action: Action) -> None:
    """A ``label``/``annotate`` action merged into ``metadata`` as the API server's patch does: a
    ``None`` value removes the key, others are stored as strings, and an emptied map is dropped.
    The map written is a fresh dict (never one shared with a manifest or another object)."""
    field = "labels" if action.verb == "label" else "annotations"
    target = metadata[field] = dict(metadata.get(field) or {})
    for k, v in dict(action.params.get(field) or {}).items():
        if v is None:
            target.pop(k, None)
        else:
            target[k] = str(v)
    if not target:
        metadata.pop(field)


class SimCluster:
    """A deterministic in-process Kubernetes cluster."""

    def __init__(
        self,
        *,
        seed: int = 0,
        nodes: Iterable[Mapping[str, Any]] = (),
        kubelet: KubeletConfig | None = None,
        statefulset_history: str = "objects",
    ) -> None:
        self.clock = Clock(seed)
        self.store = Store(self.clock)
        self.kubelet = Kubelet(self.store, self.clock, kubelet)
        self.scheduler = Scheduler(self.store, self.clock)
        self.statefulsets = StatefulSetController(
            self.store, self.clock, self.kubelet, history_objects=statefulset_history == "objects"
        )
        self.replicasets = ReplicaSetController(self.store, self.clock, self.kubelet)
        self.deployments = DeploymentController(self.store, self.clock, self.replicasets)
        self.gc = GarbageCollector(self.store)
        self.applier = Applier(self.store)
        self.observations = Observations(self.store)
        #: every snapshot's promise: its objects are ``Store.observed`` copies, re-made whenever the
        #: stored object is written and read-only for every reader (readers' memos live in it)
        self.reuse = Reuse()
        #: ``(apiVersion, kind)`` this simulated API server does not serve (:meth:`serves_api`)
        self.unserved_apis: set[tuple[str, str]] = set()
        for node in nodes:
            self.add_node(node)

    # ---- Observer ------------------------------------------------------------------------
    def observe(self, scope: Scope) -> Snapshot:
        # kept between observations, re-read only for objects written since (sim/cluster/observation.py)
        reads = tuple((kind, tuple(scope.selector_for(kind).items())) for kind in scope.kinds)
        objects = self.observations.objects(scope.namespace, reads, scope.nodes)
        capacity = None
        if scope.capacity:  # the opt-in capacity check: every Node and every bound pod of the cluster
            capacity = NodeCapacity.of(
                (self.store.observed(n) for n in self.store.list("Node")),
                (self.store.observed(p) for p in self.store.list("Pod")),
            )
        return Snapshot(objects, now=self.clock.epoch, capacity=capacity, reuse=self.reuse)

    # ---- Actuator ------------------------------------------------------------------------
    def execute(self, namespace: str, actions: Sequence[Action]) -> list[str]:
        out = [self._execute_one(namespace, a) for a in actions]
        self.settle()
        return out

    def _execute_one(self, namespace: str, action: Action) -> str:
        head = f"{action.verb} {action.kind}/{action.name}"
        try:
            if action.verb == "delete":
                self.store.delete(
                    action.kind,
                    namespace,
                    action.name,
                    uid=action.uid,
                    propagation=str(action.params.get("propagation", "Background")),
                )
                return f"{head}: deleted"
            obj = self.store.get(action.kind, namespace, action.name)
            if obj is None:
                raise NotFound(f"{action.kind} {namespace}/{action.name} not found")
            if action.uid and meta(obj)["uid"] != action.uid:
                raise Conflict(f"uid precondition failed (have {meta(obj)['uid']}, want {action.uid})")
            if action.verb == "patch-status":
                return f"{head}: {self._patch_status(obj, action)}"
            handler = {
                "label": self._merge_meta,
                "annotate": self._merge_meta,
                "ungate": self._ungate,
                "set-condition": self._set_condition,
                "finalize": self._finalize,
                "disown": self._disown,
            }.get(action.verb)
            if handler is None:
                return f"{head}: error: unknown verb {action.verb!r}"
            return f"{head}: {handler(obj, action)}"
        except SimError as exc:
            return f"{head}: {exc.reason}: {exc}"

    def _merge_meta(self, obj: dict[str, Any], action: Action) -> str:
        merge_meta(meta(obj), action)
        self.store.touch(obj)
        return "ok"

    def _ungate(self, obj: dict[str, Any], action: Action) -> str:
        gate = action.params.get("gate")
        gates = (obj.get("spec") or {}).get("schedulingGates") or []
        kept = [g for g in gates if gate is not None and g.get("name") != gate]
        if len(kept) == len(gates):
            return "ok (gate absent)"
        obj["spec"]["schedulingGates"] = kept
        if not kept:
            del obj["spec"]["schedulingGates"]
        self.store.touch(obj, spec_changed=True)
        return "ok"

    def _finalize(self, obj: dict[str, Any], action: Action) -> str:
        """``{"add": [names]}`` / ``{"remove": [names]}`` on ``metadata.finalizers``. Like the API
        server, no new finalizer can be added to an object being deleted (Forbidden); removing
        the last finalizer of a deleting object lets it go (pods: once terminated)."""
        have = list(meta(obj).get("finalizers") or [])
        add = [f for f in action.params.get("add") or [] if f not in have]
        if add and meta(obj).get("deletionTimestamp"):
            return "Forbidden: no new finalizers can be added if the object is being deleted"
        if add:
            meta(obj)["finalizers"] = have + add
            self.store.touch(obj)
        removed = [f for f in action.params.get("remove") or [] if f in have]
        for f in removed:
            self.store.remove_finalizer(obj, f)
        return "ok" if add or removed else "ok (unchanged)"

    def _disown(self, obj: dict[str, Any], action: Action) -> str:
        """``{"owners": [uid, ...]}``: drop those ownerReferences (adoption, docs/modes.md)."""
        drop = set(action.params.get("owners") or [])
        refs = meta(obj).get("ownerReferences") or []
        kept = [r for r in refs if r.get("uid") not in drop]
        if len(kept) == len(refs):
            return "ok (unchanged)"
        self.store._unindex_owners(obj)
        if kept:
            meta(obj)["ownerReferences"] = kept
        else:
            meta(obj).pop("ownerReferences")
        self.store._index_owners(obj)
        self.store.touch(obj)
        return "ok"

    def serves_api(self, api_version: str, kind: str) -> bool:
        """API discovery: every built-in kind at every version, but those listed in
        :attr:`unserved_apis` (``(apiVersion, kind)``: a test's older or gated cluster)."""
        return (api_version, kind) not in self.unserved_apis

    def serves_crd(self, name: str) -> bool:
        """Whether a CustomResourceDefinition ``name`` (``<plural>.<group>``) was created (controller mode)."""
        return self.store.get("CustomResourceDefinition", "", name) is not None

    # ---- Events (pulumi_lws.core.features.events.EventSink) -----------------------------------------
    def list_events(self, namespace: str, selector: Mapping[str, str]) -> list[dict[str, Any]]:
        return [strip_internal(e) for e in self.store.list("Event", namespace, {"matchLabels": dict(selector)})]

    def record_events(self, namespace: str, events: Sequence[Any]) -> list[str]:
        """Create each Event, or bump the one of that name (``count`` + 1): deduplicated by name."""
        from pulumi_lws.core.features.events import bumped

        out, now = [], self.clock.timestamp()
        for event in events:
            existing = self.store.get("Event", namespace, event.name)
            if existing is None:
                self.store.create(event.manifest(namespace, now))
                out.append(f"event {event.reason} {event.regarding['kind']}/{event.regarding['name']}: recorded")
            elif event.bump:
                existing.update(bumped(existing, event, now))
                self.store.touch(existing)
                out.append(
                    f"event {event.reason} {event.regarding['kind']}/{event.regarding['name']}: "
                    f"count {existing['count']}"
                )
        return out

    def _set_condition(self, obj: dict[str, Any], action: Action) -> str:
        p = action.params
        set_condition(
            obj, str(p["type"]), str(p.get("status", "True")), self.clock.timestamp(), p.get("reason"), p.get("message")
        )
        self.store.touch(obj)
        return "ok"

    def _patch_status(self, obj: dict[str, Any], action: Action) -> str:
        """``{"status": {...}}`` merged into ``status`` (top-level keys replaced), as a merge patch
        on the status subresource; spec and metadata untouched (no generation bump)."""
        obj.setdefault("status", {}).update(dict(action.params.get("status") or {}))
        self.store.touch(obj)
        return "ok"

    # ---- Pulumi-like apply ---------------------------------------------------------------
    def apply(
        self,
        manifests: Iterable[Mapping[str, Any]],
        stack_id: str = "sim",
        *,
        keep: float = 1.0,
        dependencies: Mapping[tuple, Iterable[tuple]] | None = None,
        crash: Iterable[tuple] = (),
    ) -> ApplyResult:
        """One ``pulumi up`` of ``stack_id`` (``sim/cluster/apply.py``): ``dependencies`` as in
        ``Reconciled.dependencies``; ``keep``/``crash`` inject a crash whose applied set stays
        closed under them."""
        result = self.applier.apply(
            manifests, stack_id, keep=keep, rng=self.clock.rng, dependencies=dependencies, crash=tuple(crash)
        )
        self.settle()
        return result

    # ---- time and controllers ------------------------------------------------------------
    def settle(self) -> int:
        """Run every controller until nothing changes at the current instant; return passes."""
        for n in range(1, MAX_SETTLE_PASSES + 1):
            before = self.store.version
            self.applier.flush_pending()
            self.gc.sync()
            self.deployments.sync_all()
            self.replicasets.sync_all()
            self.statefulsets.sync_all()
            self.scheduler.sync()
            self.kubelet.sync_all()
            if self.store.version == before:
                return n
        raise RuntimeError(f"controllers did not settle within {MAX_SETTLE_PASSES} passes at t={self.clock.now}")

    def step(self, to: float) -> None:
        """Advance the clock to ``to`` (firing scheduled events) and settle."""
        self.clock.advance_to(to)
        self.settle()

    # ---- nodes and faults ----------------------------------------------------------------
    def add_node(self, node: Mapping[str, Any]) -> dict[str, Any]:
        """Add a Node: ``{"name", "labels", "capacity"}`` or a full Node manifest."""
        if node.get("kind") == "Node":
            return self.store.create(node)
        cap = {k: str(v) for k, v in dict(node.get("capacity") or {}).items()}
        return self.store.create(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": node["name"], "labels": dict(node.get("labels") or {})},
                "status": {
                    "capacity": cap,
                    "allocatable": dict(cap),
                    "conditions": [{"type": "Ready", "status": "True"}],
                },
            }
        )

    def lose_node(self, name: str) -> None:
        """The node goes NotReady: its pods turn not ready and are force-deleted (evicted)."""
        node = self.store.get("Node", "", name)
        if node is None:
            raise NotFound(f"Node {name} not found")
        node["status"]["conditions"] = [{"type": "Ready", "status": "False", "reason": "NodeLost"}]
        node.setdefault("spec", {})["unschedulable"] = True
        self.store.touch(node)
        for pod in self.store.list("Pod"):
            if (pod.get("spec") or {}).get("nodeName") == name:
                pod["_sim_killed"] = True
                self.kubelet.fail_pod(pod, "NodeLost")
                self.store.delete("Pod", meta(pod)["namespace"], meta(pod)["name"], grace=0)
        self.settle()

    # ---- timed events (scenario ``events:``) -----------------------------------------------
    def _pods_matching(self, namespace: str, glob: str) -> list[dict[str, Any]]:
        return [p for p in self.store.list("Pod", namespace) if fnmatch.fnmatchcase(meta(p)["name"], glob)]

    def annotate_pods(self, namespace: str, glob: str, annotations: Mapping[str, Any]) -> list[str]:
        """Merge ``annotations`` (``None`` deletes a key) into every pod whose name matches ``glob``
        (as ``kubectl annotate --overwrite``); the names of the pods written."""
        names = []
        for pod in self._pods_matching(namespace, glob):
            self._merge_meta(pod, Action("annotate", "Pod", meta(pod)["name"], params={"annotations": annotations}))
            names.append(meta(pod)["name"])
        self.settle()
        return names

    def delete_pods(self, namespace: str, glob: str) -> list[str]:
        """Delete (gracefully, as ``kubectl delete pod``) every pod whose name matches ``glob`` and
        that is not already being deleted; their controllers recreate them."""
        names = []
        for pod in self._pods_matching(namespace, glob):
            if meta(pod).get("deletionTimestamp"):
                continue
            self.store.delete("Pod", namespace, meta(pod)["name"], uid=meta(pod)["uid"])
            names.append(meta(pod)["name"])
        self.settle()
        return names

    def add_nodes(self, count: int, gpus_per_node: float | None = None) -> list[str]:
        """``count`` new Ready nodes ``node-<i>`` (numbered after the highest existing ``node-<i>``),
        cpu 64, memory 512Gi and ``gpus_per_node`` nvidia.com/gpu each (the ``--nodes`` pool's shape)."""
        taken = [
            int(m.group(1)) for n in self.store.list("Node") if (m := re.fullmatch(r"node-(\d+)", meta(n)["name"]))
        ]
        first = max(taken, default=-1) + 1
        names = []
        for i in range(first, first + count):
            name = f"node-{i}"
            capacity: dict[str, Any] = {"cpu": 64, "memory": "512Gi"}
            if gpus_per_node:
                capacity["nvidia.com/gpu"] = int(gpus_per_node) if float(gpus_per_node).is_integer() else gpus_per_node
            self.add_node({"name": name, "labels": {"kubernetes.io/hostname": name}, "capacity": capacity})
            names.append(name)
        self.settle()
        return names

    def remove_node(self, name: str) -> None:
        """The Node object is deleted (scale-in): its pods are force-deleted, as the pod garbage
        collector does with pods bound to a node that no longer exists."""
        self.lose_node(name)
        self.store.delete("Node", "", name)
        self.settle()

    def cordon(self, name: str) -> None:
        """``kubectl cordon``: the node takes no new pods; the pods on it keep running."""
        node = self.store.get("Node", "", name)
        if node is None:
            raise NotFound(f"Node {name} not found")
        node.setdefault("spec", {})["unschedulable"] = True
        self.store.touch(node)
        self.settle()

    def restart_container(self, namespace: str, pod_name: str) -> None:
        pod = self._pod(namespace, pod_name)
        self.kubelet.restart_container(pod)
        self.settle()

    def crash_pod(self, namespace: str, pod_name: str) -> None:
        """The pod fails (phase Failed); its controller replaces it."""
        self.kubelet.fail_pod(self._pod(namespace, pod_name))
        self.settle()

    def _pod(self, namespace: str, name: str) -> dict[str, Any]:
        pod = self.store.get("Pod", namespace, name)
        if pod is None:
            raise NotFound(f"Pod {namespace}/{name} not found")
        return pod

    # ---- convenience for tests -----------------------------------------------------------
    def get(self, kind: str, name: str, namespace: str = "default") -> dict[str, Any] | None:
        obj = self.store.get(kind, namespace, name)
        return None if obj is None else strip_internal(obj)

    def list(
        self, kind: str, namespace: str | None = "default", selector: Mapping[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        return [strip_internal(o) for o in self.store.list(kind, namespace, selector)]

    def create(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        new = self.store.create(obj)
        self.settle()
        return strip_internal(new)
