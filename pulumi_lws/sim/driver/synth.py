"""The converged fleet "synthesised": the warm-up of ``start: converged`` without stepping the
simulator, object for object what it leaves behind.

:meth:`Runner.warm_up` rounds observe -> reconcile -> apply -> act on a :class:`SimCluster`
whose kubelet is instant, letting the StatefulSet controller, the scheduler and the kubelet
settle after every write. :func:`converge` runs the same rounds through the same Workload
contract (``scope``, ``reconcile``, ``trace_view``, ``budgets``) and the same convergence
criterion, but replaces the cluster by :class:`SynthCluster`, which writes down directly what
those controllers end up writing at t=0: every stored object with the metadata, defaults and
status the simulator's store and controllers give it (uids in the order the simulator creates
objects, the same ControllerRevisions, pod labels, conditions and container statuses, pod IPs in
the kubelet's admission order), and nothing else. Generic: it knows Kubernetes kinds (a
StatefulSet's pods and revisions), never an API's.

Used by ``render --stage steady`` and ``plan`` (their converged snapshot) and by the Runner's
warm-up itself, which loads the synthesised objects into its cluster instead of stepping
(:mod:`~pulumi_lws.sim.driver.seed`). With ``history_objects`` False (``statefulSetRevisions:
internal``) no ControllerRevision is written: the controller keeps its revisions itself.

It applies only where the simulator's settle is that simple; anything else raises
:class:`Unsupported` inside and :func:`converge` returns None, so the caller runs the simulator:
Nodes in the pool (placement, exclusive topology), the capacity check, a rendered kind the
simulator runs a controller or admission for other than StatefulSet (Deployment, ReplicaSet,
Job, DaemonSet, Pod, PersistentVolumeClaim, MutatingAdmissionPolicy, ...), a StatefulSet with
``volumeClaimTemplates`` or OrderedReady pods to create, pods with scheduling or readiness gates,
an update, replacement or deletion of an applied object between rounds, an action other than
``label``/``annotate``, and a set that does not converge within the warm-up's rounds.

What differs from the simulator, on purpose and unread by every planner: ``resourceVersion``
(the simulator counts every intermediate write), and the snapshot's objects share unchanged
sub-objects with the reconcile's manifests (planners only read; ``render`` deep-copies what it
prints). tests/sim/driver/test_synth.py compares both paths: snapshots equal but for
``resourceVersion``, ``render --stage steady`` and ``plan`` outputs byte-identical.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pulumi_lws.core.contract.ports import Scope
from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.core.contract.stage import Action, Stage
from pulumi_lws.core.contract.workload import Reconciled, Workload
from pulumi_lws.core.features.control import capacity_checked
from pulumi_lws.core.k8s import keys as K
from pulumi_lws.sim.cluster.apply import key_of
from pulumi_lws.sim.cluster.apply_diff import differs, immutable_changes
from pulumi_lws.sim.cluster.apply_order import resolve_dependencies, topological_order
from pulumi_lws.sim.cluster.clock import EPOCH, rfc3339
from pulumi_lws.sim.cluster.defaults import apply_defaults
from pulumi_lws.sim.cluster.observation import selector_of
from pulumi_lws.sim.cluster.scheduler import DEFAULT_NODE
from pulumi_lws.sim.cluster.selectors import match_expression
from pulumi_lws.sim.cluster.simcluster import merge_meta
from pulumi_lws.sim.cluster.statefulset import REVISION_HASH_LABEL
from pulumi_lws.sim.cluster.store import CLUSTER_SCOPED, owner_ref
from pulumi_lws.sim.cluster.template_hash import template_hash
from pulumi_lws.sim.driver.scenario import WARMUP_ROUNDS

#: kinds the simulator runs a controller, defaulting or admission for that is not emulated here
#: (a rendered one of these: the simulator runs)
CONTROLLED = frozenset(
    {
        "Pod",
        "Deployment",
        "ReplicaSet",
        "DaemonSet",
        "Job",
        "PersistentVolumeClaim",
        "Node",
        "MutatingAdmissionPolicy",
        "MutatingAdmissionPolicyBinding",
        "CustomResourceDefinition",
    }
)
_TS = rfc3339(EPOCH)  # every write of the warm-up happens at t=0


class Unsupported(Exception):
    """The simulator's settle would do more than :class:`SynthCluster` writes down."""


@dataclass(frozen=True)
class Converged:
    """The synthesised cluster after the warm-up and how many reconciles it took.

    ``fixed_point``: the last round's reconcile when that round wrote nothing and ran no action
    (else None). The cluster then holds exactly what that reconcile observed, and a reconcile is
    a pure function of spec + observation, so reconciling the cluster again with the same spec
    and options returns an equal result (tests/sim/driver/test_synth.py)."""

    cluster: SynthCluster
    reconciles: int
    fixed_point: Reconciled | None = None


class SynthCluster:
    """The objects an instant-kubelet :class:`SimCluster` holds after each settle at t=0 (module
    docstring), and an :class:`~pulumi_lws.core.contract.ports.Observer` over them."""

    def __init__(self, *, history_objects: bool = True) -> None:
        self._objs: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}
        #: every object in creation order (uid order): what :mod:`~pulumi_lws.sim.driver.seed` stores
        self.created: list[dict[str, Any]] = []
        #: the StatefulSet controller's ``history_objects``: revisions as ControllerRevision objects
        #: (else the controller keeps them itself and rebuilds them at its first sync)
        self.history_objects = history_objects
        self._uids = 0
        self._versions = 0
        self.cluster_ips = 10  # Store._ip_counter
        self.pod_ips = 0  # Kubelet._ip
        #: the applier's stack state: each key's manifest as last registered, in first-registration order
        self.registered: dict[tuple[str, str, str], dict[str, Any]] = {}
        #: the applier's dependencies of the stack as last applied (every upsert done: the last round's)
        self.dependencies: dict[tuple[str, str, str], tuple[tuple[str, str, str], ...]] = {}
        #: key -> (manifest, the live object, its resourceVersion then) of the last apply that found
        #: the manifest unchanged on it (the applier's ``unchanged_at``: valid while that version lasts)
        self.unchanged: dict[tuple[str, str, str], tuple[dict[str, Any], dict[str, Any], str]] = {}
        self.revisions: dict[str, str] = {}  # StatefulSet uid -> its (only) revision name
        self._pods: dict[str, dict[int, dict[str, Any]]] = {}  # StatefulSet uid -> its pods by ordinal
        self._order: dict[str, list[dict[str, Any]]] = {}  # kind -> its objects by (namespace, name)
        #: the last observation: (scope, version then, snapshot), returned again while nothing was written
        self._observed: tuple[Scope, int, Snapshot] | None = None

    # ---- the store ------------------------------------------------------------------------
    @property
    def version(self) -> int:
        """Writes so far (every create and write moves it: the last ``resourceVersion`` given)."""
        return self._versions

    def allocate_cluster_ip(self) -> str:  # defaults.apply_defaults(Service) calls it
        self.cluster_ips += 1
        return f"10.96.{self.cluster_ips // 250}.{self.cluster_ips % 250 + 1}"

    def get(self, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        return self._objs.get(kind, {}).get(("" if kind in CLUSTER_SCOPED else namespace or "default", name))

    def _touch(self, obj: dict[str, Any]) -> None:
        self._versions += 1
        obj["metadata"]["resourceVersion"] = str(self._versions)

    def _create(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """``Store.create`` without the deep copy: top level, metadata and status are new dicts,
        deeper values are shared read-only (defaulting copies what it writes)."""
        kind = obj["kind"]
        if kind in CONTROLLED:
            raise Unsupported(kind)
        new = dict(obj)
        m = new["metadata"] = dict(new.get("metadata") or {})
        if not m.get("name"):
            raise Unsupported("generateName")
        m["namespace"] = "" if kind in CLUSTER_SCOPED else (m.get("namespace") or "default")
        self._uids += 1
        m["uid"] = f"00000000-0000-0000-0000-{self._uids:012x}"
        m["generation"] = 1
        m["creationTimestamp"] = _TS
        m.pop("deletionTimestamp", None)
        new["status"] = dict(new.get("status") or {})
        apply_defaults(new, self)
        self._objs.setdefault(kind, {})[(m["namespace"], m["name"])] = new
        self.created.append(new)
        self._order.pop(kind, None)
        self._touch(new)
        return new

    def _sorted(self, kind: str) -> list[dict[str, Any]]:
        """The kind's objects by (namespace, name), kept until the next create of that kind (objects
        are never deleted here)."""
        out = self._order.get(kind)
        if out is None:
            out = self._order[kind] = [o for _, o in sorted(self._objs.get(kind, {}).items())]
        return out

    # ---- the Observer ---------------------------------------------------------------------
    def observe(self, scope: Scope) -> Snapshot:
        """As ``SimCluster.observe``: per scope kind, its objects in the namespace matching the
        kind's selector, by name; no Node is ever stored (``scope.nodes`` adds none). The same
        scope read again with no write since gets the same (read-only) snapshot: a round's trace
        view and the next round's reconcile read one cluster."""
        if scope.capacity:
            raise Unsupported("capacity")
        last = self._observed
        if last is not None and last[1] == self._versions and last[0] == scope:
            return last[2]
        objs = []
        for kind in scope.kinds:
            pairs = scope.selector_for(kind)
            wanted = {k: v for k, v in pairs.items() if isinstance(v, str)}.items()
            exists = selector_of(tuple(pairs.items()))["matchExpressions"]
            for o in self._sorted(kind):
                labels = o["metadata"].get("labels") or {}
                if (
                    o["metadata"]["namespace"] == scope.namespace
                    and wanted <= labels.items()  # every pair: labels.get(k) == v
                    and (not exists or all(match_expression(e, labels) for e in exists))
                ):
                    # later rounds write metadata (resourceVersion) in place: the snapshot keeps its own
                    objs.append({**o, "metadata": dict(o["metadata"])})
        snapshot = Snapshot.of(objs, now=EPOCH)
        self._observed = (scope, self._versions, snapshot)
        return snapshot

    # ---- apply (sim/cluster/apply.py, a run without crash) --------------------------------
    def apply(self, manifests: Sequence[Mapping[str, Any]], dependencies: Mapping[tuple, Iterable[tuple]]) -> None:
        desired = {key_of(m): m if type(m) is dict else dict(m) for m in manifests}
        if any(key not in desired for key in self.registered):
            raise Unsupported("deletion of an object the stack no longer declares")
        deps = resolve_dependencies(desired, dependencies)
        for key in topological_order(list(desired), deps):
            live = self.get(*key)
            if live is None:
                self._create(desired[key])
            else:
                want = dict(desired[key])
                apply_defaults(want, self, existing=live)
                if immutable_changes(key[0], live, want) or differs(live, want):
                    raise Unsupported(f"update of {key[0]}/{key[2]}")
                self.unchanged[key] = (desired[key], live, live["metadata"]["resourceVersion"])
            self.registered[key] = desired[key]
        self.dependencies = deps
        self._settle()

    # ---- the controllers' settle at t=0 ----------------------------------------------------
    def _settle(self) -> None:
        """Every StatefulSet (by namespace, name) gets its revision and its missing pods, then
        the pods are bound to the implicit node and admitted by the kubelet (by namespace, name:
        its pod IPs), Running and Ready; then every StatefulSet's status."""
        created: list[dict[str, Any]] = []
        for sts in self._sorted("StatefulSet"):
            created += self._sync_statefulset(sts)
        for pod in sorted(created, key=lambda p: (p["metadata"]["namespace"], p["metadata"]["name"])):
            self._run(pod)
        for sts in self._sorted("StatefulSet"):
            self._status(sts)

    def _sync_statefulset(self, sts: dict[str, Any]) -> list[dict[str, Any]]:
        spec, m = sts["spec"], sts["metadata"]
        if spec.get("volumeClaimTemplates"):
            raise Unsupported("volumeClaimTemplates")
        template = spec.get("template") or {}
        revision = self.revisions.get(m["uid"])
        if revision is None:
            digest = template_hash(template)
            revision = self.revisions[m["uid"]] = f"{m['name']}-{digest}"
            if self.history_objects:  # else the controller keeps it internally
                labels = dict((template.get("metadata") or {}).get("labels") or {})
                labels[REVISION_HASH_LABEL] = digest
                self._create(
                    {
                        "apiVersion": "apps/v1",
                        "kind": "ControllerRevision",
                        "metadata": {
                            "name": revision,
                            "namespace": m["namespace"],
                            "labels": labels,
                            "ownerReferences": [owner_ref(sts)],
                        },
                        "data": {"spec": {"template": {**template, "$patch": "replace"}}},
                        "revision": 1,
                    }
                )
        start = int((spec.get("ordinals") or {}).get("start") or 0)
        wanted = range(start, start + int(spec.get("replicas", 1)))
        pods = self._pods.setdefault(m["uid"], {})
        if any(n not in wanted for n in pods):
            raise Unsupported("scale-down")
        missing = [n for n in wanted if n not in pods]
        if any((m["namespace"], f"{m['name']}-{n}") in self._objs.get("Pod", {}) for n in missing):
            raise Unsupported("a pod of that name owned by another")
        if len(missing) > 1 and spec.get("podManagementPolicy", "OrderedReady") == "OrderedReady":
            raise Unsupported("OrderedReady")  # one pod per pass, interleaved with the others
        for n in missing:
            pods[n] = self._pod(sts, n, revision, template)
        return [pods[n] for n in missing]

    def _pod(self, sts: Mapping[str, Any], ordinal: int, revision: str, tmpl: Mapping[str, Any]) -> dict[str, Any]:
        """``StatefulSetController._create_pod`` then the store's create (defaults, no admission)."""
        name = f"{sts['metadata']['name']}-{ordinal}"
        tmeta = tmpl.get("metadata") or {}
        labels = dict(tmeta.get("labels") or {})
        labels.update({K.CONTROLLER_REVISION_HASH: revision, K.STS_POD_NAME: name, K.POD_INDEX: str(ordinal)})
        pod_meta: dict[str, Any] = {
            "name": name,
            "namespace": sts["metadata"]["namespace"],
            "labels": labels,
            "ownerReferences": [owner_ref(sts)],
        }
        if tmeta.get("annotations"):
            pod_meta["annotations"] = dict(tmeta["annotations"])
        spec = dict(tmpl.get("spec") or {})
        if spec.get("schedulingGates") or spec.get("readinessGates"):
            raise Unsupported("gates")
        spec["hostname"] = name
        if sts["spec"].get("serviceName"):
            spec["subdomain"] = sts["spec"]["serviceName"]
        spec["volumes"] = list(spec.get("volumes") or [])
        if spec.get("nodeName"):
            raise Unsupported("nodeName")  # no scheduling: no PodScheduled condition
        return self._create_pod({"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": spec})

    def _create_pod(self, pod: dict[str, Any]) -> dict[str, Any]:
        m = pod["metadata"]
        self._uids += 1
        m["uid"] = f"00000000-0000-0000-0000-{self._uids:012x}"
        m["generation"] = 1
        m["creationTimestamp"] = _TS
        pod["status"] = {}
        apply_defaults(pod, self)  # restartPolicy, phase Pending
        self._objs.setdefault("Pod", {})[(m["namespace"], m["name"])] = pod
        self.created.append(pod)
        self._order.pop("Pod", None)
        self._touch(pod)
        return pod

    def _run(self, pod: dict[str, Any]) -> None:
        """The scheduler's bind to the implicit node, then the instant kubelet's admission."""
        pod["spec"]["nodeName"] = DEFAULT_NODE
        self.pod_ips += 1
        status = pod["status"]
        status["phase"] = "Running"
        status["conditions"] = [
            {"type": t, "status": "True", "lastTransitionTime": _TS}
            for t in ("PodScheduled", "ContainersReady", "Initialized", "Ready")
        ]
        status["podIP"] = f"10.244.{self.pod_ips // 250}.{self.pod_ips % 250 + 1}"
        status["hostIP"] = "10.0.0.1"
        status["startTime"] = _TS
        status["containerStatuses"] = [
            {
                "name": c.get("name", f"c{i}"),
                "image": c.get("image", ""),
                "ready": True,
                "started": True,
                "restartCount": 0,
                "state": {"running": {}},
            }
            for i, c in enumerate(pod["spec"].get("containers") or [])
        ]
        self._touch(pod)

    def _status(self, sts: dict[str, Any]) -> None:
        m = sts["metadata"]
        revision = self.revisions[m["uid"]]
        count = len(self._pods[m["uid"]])
        status = {
            "observedGeneration": m["generation"],
            "replicas": count,
            "readyReplicas": count,
            "availableReplicas": count,
            "currentReplicas": count,
            "updatedReplicas": count,
            "currentRevision": revision,
            "updateRevision": revision,
            "collisionCount": 0,
        }
        if sts["status"] != status:
            sts["status"] = status
            self._touch(sts)

    # ---- the Actuator (SimCluster.execute: label and annotate only) -----------------------
    def execute(self, namespace: str, actions: Sequence[Action]) -> None:
        for action in actions:
            if action.verb not in ("label", "annotate"):
                raise Unsupported(f"action {action.verb}")
            obj = self.get(action.kind, namespace, action.name)
            if obj is None or (action.uid and obj["metadata"]["uid"] != action.uid):
                continue  # NotFound / Conflict: reported by the simulator, nothing written
            merge_meta(obj["metadata"], action)  # a fresh map: never a dict shared with a manifest
            self._touch(obj)


def converge(
    workload: Workload,
    spec: Any,
    options: Any,
    *,
    check_capacity: bool | None,
    history_objects: bool = True,
    on_round: Callable[[Stage, Any], None] | None = None,
) -> Converged | None:
    """The cluster the warm-up leaves (``Runner.warm_up`` on an instant kubelet, no Node, no
    fault), or None where it is not synthesised (module docstring: the caller simulates).
    ``history_objects``: the StatefulSet controller's (False: no ControllerRevision object);
    ``on_round(stage, view)``: after every round, its stage and the trace view the warm-up's row
    reads then (the seeded warm-up replays its rows: sim/driver/seed.py)."""
    if capacity_checked(workload.kind, spec, check_capacity):
        return None
    cluster = SynthCluster(history_objects=history_objects)
    namespace, _ = workload.identity(spec)
    replicas = workload.budgets(spec)[""].replicas
    try:
        for rounds in range(1, WARMUP_ROUNDS + 1):
            reconciled = workload.reconcile(spec, cluster.observe(workload.scope(spec, nodes=False)), options)
            written = cluster.version
            cluster.apply(reconciled.manifests, reconciled.dependencies)
            if reconciled.stage.actions:
                cluster.execute(namespace, reconciled.stage.actions)
            if on_round is None and not _may_converge(reconciled.stage):
                continue  # the view could not show convergence and nobody else reads it
            view = workload.trace_view(spec, cluster.observe(workload.scope(spec, nodes=False)))
            if on_round is not None:
                on_round(reconciled.stage, view)
            if _converged(reconciled.stage, view, replicas):
                still = cluster.version == written and not reconciled.stage.actions
                return Converged(cluster, rounds, reconciled if still else None)
    except Unsupported:
        return None
    return None  # never converged: the simulator's run names the blocker


def _may_converge(stage: Stage) -> bool:
    """The part of :func:`_converged` read from the stage alone: complete, without blocker."""
    return stage.complete and stage.blocker is None


def _converged(stage: Stage, view: Any, replicas: int) -> bool:
    """``Runner._converged`` of the round's row: stage complete without blocker, exactly
    ``replicas`` groups, all updated and ready without surge, ``replicas`` live."""
    if not _may_converge(stage):
        return False
    wanted = [g for g in view.cells if g.state != "-"]
    return len(wanted) == replicas and all(g.state == "U" and not g.surge for g in wanted) and view.live == replicas
