"""Hash-mode planner (``spec.groupIdentity: Hash``): one reconcile of upstream's pod controller.

Upstream runs leaders under a Deployment and, per leader pod, a webhook (group key, gate) and a
pod controller (group-replacement gate, worker StatefulSet, ``group-ready`` condition). Here the
Deployment template carries everything static (gate, readiness gate, deletion cost; see
:mod:`pulumi_lws.lws.render.hash`) and :func:`plan_hash` does the per-pod part at reconcile time,
as previewable :class:`Action` s plus the set of groups whose worker objects are declared.

Invariants
- Pure: a function of (spec, snapshot, catalog); re-running on the same snapshot gives the same
  stage and the same actions in the same order (idempotent: an action is emitted only when the
  observed pod differs from what it should be).
- Per leader, actions come in a fixed order: ``label`` (identity), ``annotate`` (leader address,
  deletion cost), ``ungate``, ``set-condition``; so a leader is never ungated before it carries
  its identity and address (its ``LWS_LEADER_ADDRESS`` reads the annotation at container start).
- Worker objects are declared only for admitted (ungated, not deleting, not exhausted, not
  terminal) leaders, on the leader pod's own revision; never for a gated, deleting or terminal
  leader.
- A terminal leader (phase Failed/Succeeded) is shown as a ``terminating`` group with no actions:
  its ReplicaSet has replaced it, it holds no admission slot, and failure handling
  (:mod:`pulumi_lws.lws.rollout.failure.hash`) deletes it and its workers in the same reconcile.
- The stage's blocker comes from :func:`pulumi_lws.lws.rollout.hash.blockers.hash_blocker`
  (#717 deadlock, unschedulable, group-replacement-deferred, waiting-for-groups).
- ``GroupView.id`` is the first 8 characters of the group key (the hostname suffix upstream uses);
  ``group_revisions`` maps that id to the group's revision for every group with pods.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_lws.core.contract.snapshot import (
    Snapshot,
    annotations_of,
    is_deleting,
    labels_of,
    pod_condition,
    pod_containers_ready,
    pod_running_and_ready,
    pod_unschedulable,
    statefulset_ready,
)
from pulumi_lws.core.contract.stage import Action, GroupView, PredictedStage, Stage
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.group_shape import requests_tpus
from pulumi_lws.lws.observe import revision_of
from pulumi_lws.lws.revision import RevisionCatalog
from pulumi_lws.lws.rollout.hash.admission import (
    GATED_DELETION_COST,
    Admission,
    admission,
    creation_order,
    group_index,
    group_key,
    is_admitted,
    is_exhausted,
    is_gated,
    is_terminal,
    short_id,
    tearing_down_groups,
)
from pulumi_lws.lws.rollout.hash.blockers import hash_blocker
from pulumi_lws.lws.rollout.hash.predict import MAX_MODEL_STEPS, remaining_stages
from pulumi_lws.lws.status.hash import deployment_caught_up

POLICY = "lws/hash"
READY_REASON = "WorkerStatefulSetReady"
NOT_READY_REASON = "WorkerStatefulSetNotReady"


# ---- names and addresses (Hash mode) ----------------------------------------------------------


def group_host(lws_name: str, key: str) -> str:
    """``<lws>-<key[:8]>``: upstream's leader hostname; here the worker StatefulSet and the
    per-group leader Service are named after it."""
    return f"{lws_name}-{short_id(key)}"


def leader_address(lws_name: str, namespace: str, key: str) -> str:
    """``<lws>-<key8>.<ns>``: resolves through the per-group headless Service selecting the
    leader pod (a Deployment cannot give each pod its own hostname; see docs/hash-mode.md)."""
    return f"{group_host(lws_name, key)}.{namespace}"


#: pulumi-lws annotation on a Hash leader: its group host ``<lws>-<key8>``, read by the leader's
#: TPU variables through the Downward API (set only when the group's leader gets TPU variables).
GROUP_HOST_ANNOTATION = "pulumi-lws.io/group-host"


def is_unique_per_replica(at: LeaderWorkerSet) -> bool:
    return at.spec.network_config.subdomain_policy == "UniquePerReplica"


def group_leader_address(at: LeaderWorkerSet, key: str, leader_pod: str) -> str:
    """The ``LWS_LEADER_ADDRESS`` of a group on revision ``at`` (leader annotation and workers).

    Shared: :func:`leader_address`. UniquePerReplica: the Service ``<lws>-<key8>`` selects the
    whole group (the workers' subdomain, as upstream), so the leader is addressed through the
    shared Service instead: ``<leader pod>.<lws>.<ns>`` (its hostname is its pod name).
    """
    if is_unique_per_replica(at):
        return f"{leader_pod}.{at.name}.{at.namespace}"
    return leader_address(at.name, at.namespace, key)


def leader_gets_tpu_env(at: LeaderWorkerSet) -> bool:
    """The leader template gets TPU variables (requests TPUs, no subGroupPolicy): then the
    planner annotates :data:`GROUP_HOST_ANNOTATION`, which those variables read."""
    lwt = at.spec.leader_worker_template
    return lwt.sub_group_policy is None and requests_tpus(lwt.leader_pod_template().get("spec") or {})


# ---- observation --------------------------------------------------------------------------------


def lws_pods(snapshot: Snapshot, lws: LeaderWorkerSet) -> list[Mapping[str, Any]]:
    return snapshot.list("Pod", **{L.NAME: lws.name})


def _owned_by_replicaset(pod: Mapping[str, Any]) -> bool:
    """Leaders come from the Deployment's ReplicaSets; pods without owner references (tests, or a
    simulator that doesn't set them) are accepted, StatefulSet-owned pods are not."""
    owners = (pod.get("metadata") or {}).get("ownerReferences") or []
    ctrl = [o for o in owners if o.get("controller")] or owners
    return not ctrl or ctrl[0].get("kind") == "ReplicaSet"


def leader_pods(pods: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Leader pods (``worker-index: "0"``, ReplicaSet-owned) in creation order."""
    leaders = [p for p in pods if labels_of(p).get(L.WORKER_INDEX) == "0" and _owned_by_replicaset(p)]
    return sorted(leaders, key=creation_order)


class _Sizes:
    """Group size per revision (a size change is a new revision); cached per reconcile.
    :meth:`at` is the LWS at a revision (the live spec when the revision is not stored)."""

    def __init__(self, lws: LeaderWorkerSet, catalog: RevisionCatalog):
        self.lws, self.catalog = lws, catalog
        self.cache: dict[str, LeaderWorkerSet] = {}

    def at(self, rev: str | None) -> LeaderWorkerSet:
        if rev is None or self.catalog.get(rev) is None:
            return self.lws
        if rev not in self.cache:
            self.cache[rev] = self.catalog.lws_at(self.lws, rev)
        return self.cache[rev]

    def __call__(self, rev: str | None) -> int:
        return self.at(rev).size


# ---- per-leader actions (each emitted only when the observed pod differs) ----------------------


def _uid(pod: Mapping[str, Any]) -> str | None:
    return (pod.get("metadata") or {}).get("uid")


def _name(pod: Mapping[str, Any]) -> str:
    return (pod.get("metadata") or {}).get("name") or ""


def identity_action(pod: Mapping[str, Any], key: str) -> Action | None:
    """``label`` group-key and group-index (= key, as upstream's webhook) when missing."""
    lbl = labels_of(pod)
    missing = {k: key for k in (L.GROUP_KEY, L.GROUP_INDEX) if lbl.get(k) != key}
    if not missing:
        return None
    return Action("label", "Pod", _name(pod), {"labels": missing}, uid=_uid(pod), reason="assign group identity")


def annotation_action(
    pod: Mapping[str, Any], address: str, stays_gated: bool, host: str | None = None
) -> Action | None:
    """``annotate`` leader-address (read by the leader's env) and the deletion cost: ``-100``
    while gated so the ReplicaSet deletes gated leaders first, removed (None) once admitted;
    with ``host``, also :data:`GROUP_HOST_ANNOTATION` (read by the leader's TPU variables)."""
    ann = annotations_of(pod)
    want: dict[str, str | None] = {
        L.LEADER_ADDRESS: address,
        L.POD_DELETION_COST: GATED_DELETION_COST if stays_gated else None,
    }
    if host is not None:
        want[GROUP_HOST_ANNOTATION] = host
    diff = {k: v for k, v in want.items() if (ann.get(k) != v if v is not None else k in ann)}
    if not diff:
        return None
    return Action(
        "annotate",
        "Pod",
        _name(pod),
        {"annotations": diff},
        uid=_uid(pod),
        reason="gated leader" if stays_gated else "admitted leader",
    )


def ungate_action(pod: Mapping[str, Any], decision: Admission) -> Action:
    return Action(
        "ungate", "Pod", _name(pod), {"gate": L.GROUP_REPLACEMENT_GATE}, uid=_uid(pod), reason=decision.message
    )


def group_ready_action(pod: Mapping[str, Any], sts_name: str, sts: Mapping[str, Any] | None) -> Action | None:
    """``set-condition`` group-ready when its observed status should change (absent counts)."""
    ready = statefulset_ready(sts)
    status = "True" if ready else "False"
    current = pod_condition(pod, L.GROUP_READY_CONDITION)
    if current is not None and current.get("status") == status:
        return None
    reason = READY_REASON if ready else NOT_READY_REASON
    message = f"worker StatefulSet {sts_name} is {'ready' if ready else ('not ready' if sts else 'not created yet')}"
    return Action(
        "set-condition",
        "Pod",
        _name(pod),
        {"type": L.GROUP_READY_CONDITION, "status": status, "reason": reason, "message": message},
        uid=_uid(pod),
        reason="sync group-ready",
    )


def workers_allowed(lws: LeaderWorkerSet, pod: Mapping[str, Any], sts_exists: bool) -> bool:
    """Upstream worker-StatefulSet preconditions beyond admission. LeaderReady waits for the
    leader's ContainersReady (its Ready waits on the workers: gate deadlock otherwise);
    exclusive topology waits for the leader's node. Once the StatefulSet exists it stays."""
    if sts_exists:
        return True
    if lws.spec.startup_policy == "LeaderReady" and not pod_containers_ready(pod):
        return False
    if lws.metadata.annotations.get(L.EXCLUSIVE_TOPOLOGY) and not (pod.get("spec") or {}).get("nodeName"):
        return False
    return True


# ---- the planner ----------------------------------------------------------------------------------


def plan_hash(lws: LeaderWorkerSet, snapshot: Snapshot, catalog: RevisionCatalog, options: Any = None) -> Stage:
    """One Hash-mode reconcile: identity, gate admission, worker objects, group-ready."""
    ns, target = lws.namespace, catalog.target.key
    pods = lws_pods(snapshot, lws)
    leaders = leader_pods(pods)
    sizes = _Sizes(lws, catalog)
    tearing = tearing_down_groups(ns, pods, lws.spec.group_replacement_policy)
    actions: list[Action] = []
    views: list[GroupView] = []
    deferred: list[str] = []
    notes: list[str] = []
    for pod in leaders:
        view, acts, decision = _plan_leader(lws, snapshot, catalog, sizes, pod, leaders, len(tearing))
        views.append(view)
        actions += acts
        if decision is not None and not decision.admit and decision.reason == "GroupReplacementDeferred":
            deferred.append(view.id)
        if view.workers is False and view.phase == "missing-revision":
            notes.append(f"revision {view.revision} of group {view.id} is not stored in a ControllerRevision")
        if is_terminal(pod) and not is_exhausted(pod) and not is_deleting(pod):
            notes.append(terminal_leader_note(pod, view.id))
    views += _leaderless_groups(ns, pods, {v.key for v in views})
    complete = is_complete(lws, snapshot, target, pods, tearing)
    blocker = hash_blocker(
        lws,
        views,
        pods,
        deferred,
        len(tearing),
        complete=complete,
        at_rest=at_rest(actions, snapshot.get("Deployment", lws.name), target),
    )
    remaining, whole = ((), True) if complete else predicted_stages(lws, views)
    if not whole:
        notes.append(
            f"prediction stopped after {len(remaining)} stages ({MAX_MODEL_STEPS} model steps, one event "
            f"each); the rollout continues past the last one shown"
        )
    return Stage(
        policy=POLICY,
        target_revision=target,
        replicas=lws.replicas,
        partition=None,
        group_revisions={v.id: v.revision for v in views if v.revision},
        groups=tuple(views),
        actions=tuple(actions),
        blocker=blocker,
        complete=complete,
        remaining=remaining,
        notes=tuple(notes),
    )


def _plan_leader(
    lws: LeaderWorkerSet,
    snapshot: Snapshot,
    catalog: RevisionCatalog,
    sizes: _Sizes,
    pod: Mapping[str, Any],
    leaders: Sequence[Mapping[str, Any]],
    tearing: int,
) -> tuple[GroupView, list[Action], Admission | None]:
    """Actions and view for one leader pod; ``Admission`` when it was gated (else None)."""
    ns, target = lws.namespace, catalog.target.key
    key, rev = group_key(ns, pod), revision_of(pod)
    sts_name = group_host(lws.name, key)
    sts = snapshot.get("StatefulSet", sts_name)
    base: dict[str, Any] = dict(
        id=short_id(key), revision=rev, updated=rev == target, key=key, leader=_name(pod), leader_uid=_uid(pod)
    )
    if is_exhausted(pod):  # failure handling: checked first, a retained exhausted leader is deleting
        return GroupView(ready=False, phase="exhausted", **base), [], None
    if is_deleting(pod) or is_terminal(pod):  # a terminal leader is torn down by failure handling
        return GroupView(ready=False, phase="terminating", **base), [], None
    decision = (
        admission(pod, leaders, target=target, replicas=lws.replicas, tearing_down=tearing) if is_gated(pod) else None
    )
    admitted = is_admitted(pod) or bool(decision and decision.admit)
    at = sizes.at(rev)
    address = group_leader_address(at, key, _name(pod))
    host = group_host(lws.name, key) if leader_gets_tpu_env(at) else None
    acts = [a for a in (identity_action(pod, key), annotation_action(pod, address, not admitted, host)) if a]
    if decision is not None and decision.admit:
        acts.append(ungate_action(pod, decision))
    multi = sizes(rev) > 1
    known = rev is not None and catalog.get(rev) is not None
    workers = admitted and multi and known and workers_allowed(lws, pod, sts is not None)
    if admitted and multi:
        cond = group_ready_action(pod, sts_name, sts)
        acts += [cond] if cond else []
    ready = pod_running_and_ready(pod) and (not multi or statefulset_ready(sts))
    phase = _phase(pod, admitted, ready, multi and not known)
    return GroupView(ready=ready, phase=phase, workers=workers, **base), acts, decision


def _phase(pod: Mapping[str, Any], admitted: bool, ready: bool, missing_revision: bool) -> str:
    if missing_revision:
        return "missing-revision"
    if not admitted:
        return "gated"
    if pod_unschedulable(pod):
        return "unschedulable"
    return "" if ready else "pending"


def _leaderless_groups(namespace: str, pods: Sequence[Mapping[str, Any]], seen: set[str | None]) -> list[GroupView]:
    """Groups whose leader is gone but whose worker pods linger (tearing down)."""
    out: dict[str, GroupView] = {}
    for p in pods:
        gi = group_index(namespace, p)
        if gi is None or gi in seen or gi in out:
            continue
        out[gi] = GroupView(
            id=short_id(gi), revision=revision_of(p), ready=False, updated=False, phase="terminating", key=gi
        )
    return [out[k] for k in sorted(out)]


def terminal_leader_note(pod: Mapping[str, Any], gid: str) -> str:
    """Stage note for a terminal (Failed/Succeeded) leader that is not deleting yet."""
    phase = (pod.get("status") or {}).get("phase")
    return (
        f"leader pod {_name(pod)} of group G-{gid} is {phase}: the group is torn down and its "
        "ReplicaSet replacement is admitted by the group-replacement rules"
    )


def at_rest(actions: Sequence[Action], deployment: Mapping[str, Any] | None, target: str) -> bool:
    """The reconcile changes nothing: no planner action, and the leader Deployment is observed
    on the target revision with its latest generation seen (else its controller still acts)."""
    return (
        not actions
        and deployment is not None
        and revision_of(deployment) == target
        and deployment_caught_up(deployment)
    )


def predicted_stages(lws: LeaderWorkerSet, views: Sequence[GroupView]) -> tuple[tuple[PredictedStage, ...], bool]:
    """``Stage.remaining``: the pure Deployment + gate model (:mod:`pulumi_lws.lws.rollout.hash.predict`)
    run from the observed groups, assuming groups become ready in creation order."""
    cfg = lws.spec.rollout_strategy.rolling_update_configuration
    return remaining_stages(views, lws.replicas, cfg.max_surge, cfg.max_unavailable, lws.spec.group_replacement_policy)


def is_complete(
    lws: LeaderWorkerSet, snapshot: Snapshot, target: str, pods: Sequence[Mapping[str, Any]], tearing: set[str]
) -> bool:
    """The Deployment is observed on the target revision with replicas = ready = updated =
    spec.replicas (and has seen its latest generation), no pod of another revision remains, and
    no group is tearing down."""
    deploy = snapshot.get("Deployment", lws.name)
    if deploy is None or revision_of(deploy) != target:
        return False
    if not deployment_caught_up(deploy):
        return False
    st = deploy.get("status") or {}
    want = lws.replicas
    if not all(int(st.get(k) or 0) == want for k in ("replicas", "readyReplicas", "updatedReplicas")):
        return False
    if any(revision_of(p) != target for p in pods):
        return False
    return not tearing and not tearing_down_groups(lws.namespace, pods, "PostTermination")
