"""The opt-in capacity check: a stage whose new pods do not fit the free allocatable is held (pure).

Opt in with the component argument ``check_capacity: true`` (written as the annotation
``pulumi-lws.io/check-capacity: "true"``), ``--check-capacity`` on ``pulumi-lws status`` /
``simulate``, or the scenario key ``reconcile.checkCapacity``. Only then does the observation also
read every Node and every bound pod of the cluster (:class:`~pulumi_lws.core.contract.snapshot.NodeCapacity`)
and :func:`check` run on the planned stage, for every API alike (the driver calls it:
:func:`pulumi_lws.core.contract.driver.cycle`). Without the opt-in nothing here runs.

**New pods** of a stage: for every StatefulSet/Deployment/ReplicaSet it declares, its
``spec.replicas`` minus the replicas of the object the snapshot holds under that name (all of
them when none), each with the declared pod template; every declared bare Pod the snapshot lacks.
Pods a controller recreates at the same replica count (an in-place replacement) are not new: the
pod they replace frees what they take. A stage with new pods is checked together with the
workload's pods that exist but hold no node yet (:func:`waiting_pods`: unbound, gated ones
included), which need the same room.

**Free** on a node: ``status.allocatable`` minus the effective requests
(:func:`pulumi_lws.core.features.capacity.pod_demand`) of every non-terminal pod bound to it (any
namespace, terminating ones included: they hold their resources until gone); ``pods`` counts one
per pod when the node declares it.

**Nodes matching** a pod (what is matched, as the scheduler's filters):

* the node is Ready (``Ready=True`` condition, when it reports one) and not cordoned
  (``spec.unschedulable``);
* ``nodeSelector``: every pair equals the node's label;
* required node affinity (``requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms``):
  some term whose ``matchExpressions`` (In, NotIn, Exists, DoesNotExist, Gt, Lt on labels) and
  ``matchFields`` (``metadata.name`` In/NotIn) all hold;
* taints: every ``NoSchedule`` / ``NoExecute`` taint of the node is tolerated by one of the pod's
  ``tolerations`` (operator Equal/Exists, key, value, effect; an empty key with Exists tolerates all).

Not matched: pod (anti-)affinity, topology spread, preferred terms, volume topology, DRA claims —
so the check can pass a stage the scheduler then leaves Pending (the planners' own
``unschedulable`` blockers still report that), but never holds one for a reason it does not show.

**Fit**: the new pods, largest first, are placed one by one on the matching node with the most
room left (first fit on the free amounts, each placement taken off); a pod with no room anywhere
fails the stage. The blocker ``insufficient-capacity`` then says, for the pods that did not fit
(grouped by their scheduling constraints), ``the surge group needs 16 nvidia.com/gpu; 8 are free on
nodes matching its selector`` (``the new pods`` when the stage creates no surge group), then the
remedy: with a surge, the API's own field set to replace groups in place instead
(``spec.rolloutStrategy.rollingUpdateConfiguration.maxUnavailable ≥ 1 and maxSurge 0``), and always
adding matching nodes.

**Hold**: a failing stage is held like a paused one (:func:`pulumi_lws.core.features.hold.hold`):
every object the cluster holds is registered as observed, nothing new is created (no surge, no new
group), failure-handling actions run, the rollout moves no group. The next reconcile re-checks
against what the cluster then holds, so adding nodes (or freeing them) lets it proceed.

Invariants: :func:`check` of a stage creating no pod, or of one whose new pods fit, or on a
cluster that shows no Node at all (the simulator's one unbounded node when a scenario names no
pool), returns the result unchanged; it reads only the snapshot (no clock, no cluster).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from pulumi_lws.core.contract.snapshot import NodeCapacity, Snapshot, is_deleting
from pulumi_lws.core.contract.stage import Blocker, Stage
from pulumi_lws.core.contract.workload import Budgets, Reconciled
from pulumi_lws.core.features.capacity import REPLICATED, Demand, is_accelerator, pod_demand
from pulumi_lws.core.features.hold import HeldView, hold
from pulumi_lws.core.features.nodematch import matches
from pulumi_lws.core.k8s.quantity import format_quantity

#: ``Blocker.code`` of a stage held because its new pods do not fit
INSUFFICIENT_CAPACITY = "insufficient-capacity"
#: ``Stage.notes`` entry of a held stage
HELD_NOTE = "held: insufficient capacity"


@dataclass(frozen=True)
class NewPods:
    """``count`` pods a stage would create from one declared object, with its pod spec."""

    ref: tuple[str, str]
    spec: Mapping[str, Any]
    count: int


# ---- what a stage creates ----------------------------------------------------------------------


def _replicas(obj: Mapping[str, Any]) -> int:
    value = (obj.get("spec") or {}).get("replicas", 1)
    try:
        return max(0, int(value))
    except (TypeError, ValueError):
        return 0


def new_pods(manifests: Iterable[Mapping[str, Any]], snapshot: Snapshot) -> list[NewPods]:
    """The pods the declared ``manifests`` add to what ``snapshot`` holds (module docstring)."""
    out = []
    for m in manifests:
        kind = str(m.get("kind"))
        name = str((m.get("metadata") or {}).get("name"))
        observed = snapshot.get(kind, name)
        if observed is not None and is_deleting(observed):
            observed = None
        if kind == "Pod":
            if observed is None:
                out.append(NewPods((kind, name), m.get("spec") or {}, 1))
            continue
        if kind not in REPLICATED:
            continue
        count = _replicas(m) - (_replicas(observed) if observed is not None else 0)
        if count > 0:
            spec = ((m.get("spec") or {}).get("template") or {}).get("spec") or {}
            out.append(NewPods((kind, name), spec, count))
    return out


def waiting_pods(snapshot: Snapshot) -> list[NewPods]:
    """The workload's pods that exist but hold no node yet (unbound, gated included; not terminal,
    not deleting): they compete with the stage's new pods for the same room (a LeaderWorkerSet
    Hash group's gated leader while its workers are declared)."""
    return [
        NewPods(("Pod", str(p["metadata"]["name"])), p.get("spec") or {}, 1)
        for p in snapshot.list("Pod")
        if not (p.get("spec") or {}).get("nodeName")
        and not is_deleting(p)
        and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
    ]


# ---- free capacity and fit ---------------------------------------------------------------------

Free = dict[str, Decimal]


def free_by_node(capacity: NodeCapacity) -> dict[str, Free]:
    """Per node name, allocatable minus the requests of the pods bound to it (``pods``: a count)."""
    from pulumi_lws.core.k8s.quantity import parse_quantity

    free: dict[str, Free] = {}
    for node in capacity.nodes:
        name = str((node.get("metadata") or {}).get("name"))
        status = node.get("status") or {}
        allocatable = status.get("allocatable") or status.get("capacity") or {}
        free[name] = {r: parse_quantity(q)[0] for r, q in allocatable.items()}
    for pod in capacity.pods:
        left = free.get(str((pod.get("spec") or {}).get("nodeName")))
        if left is None:
            continue
        for r, (amount, _) in _with_pod_count(pod_demand(pod.get("spec") or {})).items():
            if r in left:
                left[r] -= amount
    return free


def _with_pod_count(demand: Demand) -> Demand:
    return {**demand, "pods": (Decimal(1), False)}


def _room(free: Free, demand: Demand) -> bool:
    """Room for ``demand`` on a node with ``free`` left (a node without a ``pods`` figure has no
    pod-count limit here; without another resource it has none of it)."""
    return all(
        amount <= 0 or free.get(r, Decimal(0)) >= amount
        for r, (amount, _) in demand.items()
        if r != "pods" or r in free
    )


def _constraints(spec: Mapping[str, Any]) -> str:
    """A key for the scheduling constraints :func:`matches` reads (pods with equal keys match equally)."""
    import json

    affinity = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    return json.dumps(
        [spec.get("nodeSelector") or {}, affinity or {}, spec.get("tolerations") or []], sort_keys=True, default=str
    )


@dataclass(frozen=True)
class Shortfall:
    """Pods of one constraint class that did not fit: what they need, what matching nodes have free."""

    resource: str
    needed: tuple[Decimal, bool]
    free: tuple[Decimal, bool]
    pods: int
    unplaced: int
    fragmented: bool  # the totals fit, no single node has room for a pod
    matching_nodes: int


def shortfall(pods: Sequence[NewPods], capacity: NodeCapacity) -> Shortfall | None:
    """The first constraint class (accelerators first) whose new pods do not all fit, or None."""
    free = free_by_node(capacity)
    nodes = {str((n.get("metadata") or {}).get("name")): n for n in capacity.nodes}
    singles = [(p.spec, pod_demand(p.spec)) for p in pods for _ in range(p.count)]
    resources = sorted({r for _, d in singles for r in d}, key=_order)
    # largest first (accelerators, then cpu and memory): the hardest pods are placed while room is left
    singles.sort(key=lambda item: tuple(-item[1].get(r, (Decimal(0), False))[0] for r in resources))
    classes: dict[str, list[tuple[Mapping[str, Any], Demand]]] = {}
    for spec, demand in singles:
        classes.setdefault(_constraints(spec), []).append((spec, demand))
    initial = {n: dict(f) for n, f in free.items()}
    result: Shortfall | None = None
    for members in classes.values():
        spec = members[0][0]
        matching = [n for n, node in nodes.items() if matches(spec, node)]
        unplaced: list[Demand] = []
        for _, demand in members:
            counted = _with_pod_count(demand)
            fits = [n for n in matching if _room(free[n], counted)]
            if not fits:
                unplaced.append(demand)
                continue
            best = max(fits, key=lambda n: (sum(free[n].get(r, Decimal(0)) for r in demand if is_accelerator(r)), n))
            for r, (amount, _) in counted.items():
                if r in free[best]:
                    free[best][r] -= amount
        if unplaced and result is None:
            result = _describe(members, unplaced, [initial[n] for n in matching], len(matching))
    return result


def _order(resource: str) -> tuple[int, str]:
    return (0 if is_accelerator(resource) else 1 if resource in ("cpu", "memory") else 2, resource)


def _describe(
    members: Sequence[tuple[Mapping[str, Any], Demand]], unplaced: Sequence[Demand], free: Sequence[Free], nodes: int
) -> Shortfall:
    needed: dict[str, tuple[Decimal, bool]] = {}
    counted = any("pods" in f for f in free)  # the pod count is a limit only where a node declares it
    for _, demand in members:
        for r, (amount, binary) in (_with_pod_count(demand) if counted else demand).items():
            have = needed.get(r, (Decimal(0), False))
            needed[r] = (have[0] + amount, have[1] or binary)
    total_free = {r: sum((max(f.get(r, Decimal(0)), Decimal(0)) for f in free), Decimal(0)) for r in needed}
    short = [r for r in sorted(needed, key=_order) if needed[r][0] > total_free[r] and needed[r][0] > 0]
    fragmented = not short
    if fragmented:  # the sums fit: name the first resource the largest unplaced pod asks most of
        short = [r for r in sorted(unplaced[0], key=_order) if unplaced[0][r][0] > 0] or ["pods"]
    resource = short[0]
    binary = needed.get(resource, (Decimal(0), False))[1]
    return Shortfall(
        resource,
        needed.get(resource, (Decimal(0), binary)),
        (total_free.get(resource, Decimal(0)), binary),
        len(members),
        len(unplaced),
        fragmented,
        nodes,
    )


# ---- the stage ---------------------------------------------------------------------------------


def surging(stage: Stage, budgets: Mapping[str, Budgets]) -> dict[str, int]:
    """The roles (``""``: the workload) whose groups after this stage exceed their replicas, with
    how many surge groups each has then (the stage creates surge groups there)."""
    whole = budgets.get("")
    if stage.lanes:
        # DisaggregatedSet: a role's groups over every slice (lane ``<slice>/<role>``); ModelServing
        # RoleRollingUpdate: a role's replicas over every ServingGroup
        per_role: dict[str, int] = {}
        for lane in stage.lanes:
            role = lane.name.rsplit("/", 1)[-1]
            per_role[role] = per_role.get(role, 0) + lane.old + lane.new
        groups = whole.replicas if whole is not None and stage.lanes[0].unit == "replicas" else 1
        roles = {  # in the spec's role order (the budgets')
            r: per_role[r] - b.replicas * groups
            for r, b in budgets.items()
            if r and r in per_role and per_role[r] > b.replicas * groups
        }
        if roles:
            return roles
    if whole is None:
        return {}
    live = max(sum(1 for g in stage.groups if g.exists) if stage.groups else 0, stage.replicas)
    surge = max(live - whole.replicas, sum(1 for g in stage.groups if g.surge and g.exists))
    return {"": surge} if surge > 0 else {}


def _amount(value: tuple[Decimal, bool]) -> str:
    return format_quantity(*value)


def message(short: Shortfall, surge_groups: int) -> str:
    """``the surge group needs 16 nvidia.com/gpu; 8 are free on nodes matching its selector``
    (``the 2 surge groups need ...their selector``; ``the new pods need ...`` without a surge)."""
    one = surge_groups == 1
    who = "the surge group" if one else f"the {surge_groups} surge groups" if surge_groups else "the new pods"
    verb, whose = ("needs", "its") if one else ("need", "their")
    out = (
        f"{who} {verb} {_amount(short.needed)} {short.resource}; {_amount(short.free)} "
        f"{'is' if short.free[0] == 1 else 'are'} free on nodes matching {whose} selector"
    )
    if short.fragmented:
        out += f" (but no single matching node has room for one more pod; {short.unplaced} of {short.pods} do not fit)"
    return out


def remedies(short: Shortfall, surge_roles: Iterable[str], budgets: Mapping[str, Budgets]) -> tuple[str, ...]:
    """The API's own fields that replace groups in place (surging roles only), then more nodes."""
    out = []
    for role in surge_roles:
        b = budgets[role]
        path = b.path or "rolloutStrategy.rollingUpdateConfiguration"
        out.append(
            f"set {path}.maxUnavailable ≥ {max(1, b.max_unavailable)} and maxSurge 0"
            f"{f' (role {role})' if role else ''} to replace groups in place (now maxSurge {b.max_surge}, "
            f"maxUnavailable {b.max_unavailable}): the new groups then take what the old ones free"
        )
    out.append(
        f"{'or ' if out else ''}add nodes with free {short.resource} that match the pods' nodeSelector, required "
        "node affinity and tolerations (or free some): the next pulumi up re-checks and proceeds"
    )
    return tuple(out)


def check(
    result: Reconciled, snapshot: Snapshot, budgets: Mapping[str, Budgets], held_view: HeldView | None = None
) -> Reconciled:
    """``result`` held with the ``insufficient-capacity`` blocker when its new pods do not fit the
    free allocatable of the snapshot's nodes; else ``result`` unchanged (module docstring). A
    snapshot without :attr:`Snapshot.capacity` (no opt-in) changes nothing. ``held_view``: the
    API's ``Workload.held_stage`` (the held stage's groups and lanes as observed, as a pause's)."""
    capacity = snapshot.capacity
    if capacity is None or not capacity.nodes:  # no Node to judge by (the simulator's unbounded default)
        return result
    pods = new_pods(result.manifests, snapshot)
    if not pods:
        return result
    short = shortfall(waiting_pods(snapshot) + pods, capacity)
    if short is None:
        return result
    roles = surging(result.stage, budgets)
    blocker = Blocker(
        INSUFFICIENT_CAPACITY,
        message(short, sum(roles.values())),
        result.stage.blocker.groups if result.stage.blocker else (),
        remedies(short, roles, budgets),
    )
    held = hold(result, snapshot, blocker=blocker, note=HELD_NOTE, held_view=held_view)
    if result.stage.complete:  # a complete stage that still creates pods (a scale-up) is not complete held
        held = dataclasses.replace(held, stage=dataclasses.replace(held.stage, blocker=blocker, complete=False))
    return held
