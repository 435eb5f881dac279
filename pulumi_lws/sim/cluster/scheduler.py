"""Scheduler: binds Pending, ungated pods to nodes that fit.

Checks, in Kubernetes' order of filters: node Ready and schedulable, nodeSelector and required
nodeAffinity, resources (requests; limits stand in for absent requests, as the API server
defaults requests from limits), required podAffinity / podAntiAffinity by topologyKey (including
existing pods' anti-affinity against the incoming pod). Scoring: least allocated, ties by name.

Invariants: a gated pod is never bound (PodScheduled=False, reason SchedulingGated); a pod that
fits nowhere stays Pending with PodScheduled=False, reason Unschedulable and a
"0/N nodes are available: ..." message; terminating pods keep holding their node's resources
until they reach a terminal phase (Succeeded/Failed: e.g. a terminated pod kept by finalizers),
from then on they count neither for resources nor for pod (anti-)affinity.
With no Node objects at all, every pod fits on an implicit infinite node ``sim-node``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from pulumi_lws.sim.cluster.clock import Clock
from pulumi_lws.sim.cluster.kubelet import set_condition
from pulumi_lws.sim.cluster.store import Store, match_expression, meta, selector_matches

DEFAULT_NODE = "sim-node"
_QUANTITY = re.compile(r"^([0-9.]+)([a-zA-Z]*)$")
_SUFFIX = {
    "": 1,
    "m": 1e-3,
    "k": 1e3,
    "K": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
}


def quantity(value: Any) -> float:
    """Parse a Kubernetes quantity ("500m", "2", "16Gi") into a float of base units."""
    if isinstance(value, (int, float)):
        return float(value)
    m = _QUANTITY.match(str(value).strip())
    if not m or m.group(2) not in _SUFFIX:
        raise ValueError(f"invalid quantity {value!r}")
    return float(m.group(1)) * _SUFFIX[m.group(2)]


def pod_requests(pod: Mapping[str, Any]) -> Counter:
    """Sum of container requests (limits when a request is absent) vs the largest init container."""

    def one(c: Mapping[str, Any]) -> Counter:
        res = c.get("resources") or {}
        merged = dict(res.get("limits") or {})
        merged.update(res.get("requests") or {})
        return Counter({k: quantity(v) for k, v in merged.items()})

    spec = pod.get("spec") or {}
    total: Counter = Counter()
    for c in spec.get("containers") or []:
        total.update(one(c))
    for c in spec.get("initContainers") or []:
        for k, v in one(c).items():
            total[k] = max(total[k], v)
    return total


def _node_ready(node: Mapping[str, Any]) -> bool:
    if (node.get("spec") or {}).get("unschedulable"):
        return False
    for c in (node.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return True


class Scheduler:
    def __init__(self, store: Store, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    def sync(self) -> None:
        """Schedule the Pods that want it (``Store.unbound_pods``: exactly those ``_wants_scheduling``
        accepts), by priority, then creation time, then name (then namespace: the order in which
        a scan of the pod list, sorted by namespace and name, would meet ties)."""
        pending = [self.store.stored(uid) for uid in self.store.unbound_pods]
        if not pending:
            return
        nodes = self.store.list("Node")
        pending.sort(
            key=lambda p: (
                -int((p.get("spec") or {}).get("priority") or 0),
                p["_sim_created_at"],
                meta(p)["name"],
                meta(p)["namespace"],
            )
        )
        for pod in pending:
            self._schedule(pod, nodes)

    def _wants_scheduling(self, pod: Mapping[str, Any]) -> bool:
        spec = pod.get("spec") or {}
        return (
            not spec.get("nodeName")
            and not meta(pod).get("deletionTimestamp")
            and pod["status"].get("phase") == "Pending"
        )

    def _schedule(self, pod: dict[str, Any], nodes: list[dict[str, Any]]) -> None:
        ts = self.clock.timestamp()
        if (pod.get("spec") or {}).get("schedulingGates"):
            if set_condition(
                pod,
                "PodScheduled",
                "False",
                ts,
                "SchedulingGated",
                "Scheduling is blocked due to non-empty scheduling gates",
            ):
                self.store.touch(pod)
            return
        if not nodes:
            self._bind(pod, DEFAULT_NODE)
            return
        reasons: Counter = Counter()
        fits: list[tuple[float, str]] = []
        for node in nodes:
            why = self._filter(pod, node)
            if why:
                reasons[why] += 1
            else:
                fits.append((self._score(node), meta(node)["name"]))
        if fits:
            self._bind(pod, min(fits)[1])
            return
        detail = ", ".join(f"{n} {r}" for r, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])))
        msg = f"0/{len(nodes)} nodes are available: {detail}."
        if set_condition(pod, "PodScheduled", "False", ts, "Unschedulable", msg):
            self.store.touch(pod)

    def _bind(self, pod: dict[str, Any], node: str) -> None:
        pod["spec"]["nodeName"] = node
        set_condition(pod, "PodScheduled", "True", self.clock.timestamp())
        self.store.touch(pod)

    # ---- filters -------------------------------------------------------------------------
    def _filter(self, pod: Mapping[str, Any], node: Mapping[str, Any]) -> str | None:
        """None when ``pod`` fits ``node``, else the reason as the scheduler words it."""
        labels = meta(node).get("labels") or {}
        if not _node_ready(node):
            return "node(s) were unschedulable"
        spec = pod.get("spec") or {}
        if any(labels.get(k) != str(v) for k, v in (spec.get("nodeSelector") or {}).items()) or not self._node_affinity(
            spec, labels
        ):
            return "node(s) didn't match Pod's node affinity/selector"
        short = self._insufficient(pod, node)
        if short:
            return f"Insufficient {short}"
        return self._pod_affinity(pod, node)

    @staticmethod
    def _node_affinity(spec: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
        req = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        if not req:
            return True
        return any(
            all(match_expression(e, labels) for e in term.get("matchExpressions") or [])
            for term in req.get("nodeSelectorTerms") or []
        )

    def _pods_on(self, node_name: str) -> list[dict[str, Any]]:
        return [
            p
            for p in self.store.list("Pod")
            if (p.get("spec") or {}).get("nodeName") == node_name
            and p["status"].get("phase") not in ("Succeeded", "Failed")
        ]

    def _capacity(self, node: Mapping[str, Any]) -> Counter:
        st = node.get("status") or {}
        return Counter({k: quantity(v) for k, v in (st.get("allocatable") or st.get("capacity") or {}).items()})

    def _insufficient(self, pod: Mapping[str, Any], node: Mapping[str, Any]) -> str | None:
        cap = self._capacity(node)
        used: Counter = Counter()
        for other in self._pods_on(meta(node)["name"]):
            used.update(pod_requests(other))
        if "pods" in cap and len(self._pods_on(meta(node)["name"])) + 1 > cap["pods"]:
            return "pods"
        for res, amount in sorted(pod_requests(pod).items()):
            if amount > 0 and used[res] + amount > cap.get(res, 0) + 1e-9:
                return res
        return None

    def _score(self, node: Mapping[str, Any]) -> float:
        """Least-allocated: mean requested fraction over the node's resources (lower is better)."""
        cap = self._capacity(node)
        used: Counter = Counter()
        for other in self._pods_on(meta(node)["name"]):
            used.update(pod_requests(other))
        fracs = [used[r] / c for r, c in cap.items() if c > 0 and r != "pods"]
        return sum(fracs) / len(fracs) if fracs else 0.0

    def _pod_affinity(self, pod: Mapping[str, Any], node: Mapping[str, Any]) -> str | None:
        aff = (pod.get("spec") or {}).get("affinity") or {}
        ns = meta(pod)["namespace"]
        for term in _required(aff.get("podAffinity")):
            if not self._term_satisfied(term, node, ns, pod, want_match=True):
                return "node(s) didn't match pod affinity rules"
        for term in _required(aff.get("podAntiAffinity")):
            if not self._term_satisfied(term, node, ns, pod, want_match=False):
                return "node(s) didn't match pod anti-affinity rules"
        if self._existing_anti_affinity_violated(pod, node):
            return "node(s) didn't satisfy existing pods anti-affinity rules"
        return None

    def _domain_pods(self, node: Mapping[str, Any], key: str) -> Iterable[dict[str, Any]] | None:
        value = (meta(node).get("labels") or {}).get(key)
        if value is None:
            return None
        names = {meta(n)["name"] for n in self.store.list("Node") if (meta(n).get("labels") or {}).get(key) == value}
        return [
            p
            for p in self.store.list("Pod")
            if (p.get("spec") or {}).get("nodeName") in names
            and p["status"].get("phase") not in ("Succeeded", "Failed")
        ]

    def _term_satisfied(
        self, term: Mapping[str, Any], node: Mapping[str, Any], ns: str, pod: Mapping[str, Any], want_match: bool
    ) -> bool:
        domain = self._domain_pods(node, term.get("topologyKey", ""))
        if domain is None:
            return not want_match  # node lacks the topology label: affinity fails, anti-affinity holds
        namespaces = set(term.get("namespaces") or [ns])
        sel = term.get("labelSelector")
        hit = any(
            meta(p)["namespace"] in namespaces and selector_matches(sel, meta(p).get("labels") or {}) for p in domain
        )
        if want_match and not hit:
            # Kubernetes: the first pod of a self-affine set may go anywhere with the topology key.
            return not self._any_match_anywhere(sel, namespaces) and selector_matches(
                sel, meta(pod).get("labels") or {}
            )
        return hit if want_match else not hit

    def _any_match_anywhere(self, sel: Any, namespaces: set[str]) -> bool:
        return any(
            (p.get("spec") or {}).get("nodeName")
            and not _terminal(p)
            and meta(p)["namespace"] in namespaces
            and selector_matches(sel, meta(p).get("labels") or {})
            for p in self.store.list("Pod")
        )

    def _existing_anti_affinity_violated(self, pod: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
        labels = meta(pod).get("labels") or {}
        for other in self.store.list("Pod"):
            other_node = (other.get("spec") or {}).get("nodeName")
            if not other_node or _terminal(other):
                continue
            for term in _required(((other.get("spec") or {}).get("affinity") or {}).get("podAntiAffinity")):
                key = term.get("topologyKey", "")
                mine = (meta(node).get("labels") or {}).get(key)
                theirs_node = self.store.get("Node", "", other_node)
                theirs = (meta(theirs_node).get("labels") or {}).get(key) if theirs_node else None
                if (
                    mine is not None
                    and mine == theirs
                    and selector_matches(term.get("labelSelector"), labels)
                    and meta(pod)["namespace"] in set(term.get("namespaces") or [meta(other)["namespace"]])
                ):
                    return True
        return False


def _terminal(pod: Mapping[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _required(section: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    return list((section or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or [])
