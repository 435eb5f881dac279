"""Webhook-equivalent pod labels for Ordinal LWSs, applied at reconcile as ``label`` actions.

Upstream's pod webhook (``pod_webhook.go::Default``) labels every pod at admission with values a
StatefulSet template shared by all pods cannot carry. pulumi-lws has no webhook, so
:func:`label_actions` adds them at the next reconcile after the pod exists (reference §7.1):

* leader pods (``worker-index: "0"``, owned by the leader StatefulSet ``<lws>``): ``group-index``
  = the ordinal (``apps.kubernetes.io/pod-index``, else the name) and ``group-key`` =
  ``sha1("<namespace>/<leader pod name>")``; with a subGroupPolicy (pod annotation
  ``subgroup-size``) that is not ``LeaderExcluded``: ``subgroup-index: "0"`` and ``subgroup-key``
  = ``sha1("<leader pod name>/0")``;
* worker pods (owned by the worker StatefulSet ``<lws>-<i>``): ``worker-index`` = the pod ordinal;
  with ``subgroup-size``: ``subgroup-index`` = upstream ``getSubGroupIndex(size, subGroupSize,
  worker)`` and ``subgroup-key`` = ``sha1("<leader pod name>/<subgroup index>")``.

Like the webhook, sizes are read from the pod's own annotations (``size``, ``subgroup-size``,
``subgroup-policy-type``, ``leader-name``: rendered from the pod's revision), never from the
current spec, so a pod on an old revision gets its own revision's values.

Invariants
- Pure: a function of (spec, snapshot, stage); same inputs, same actions in the same order
  (sorted by pod name), at most one ``label`` action per pod.
- Only *missing* keys are added; a key present with any value is never touched. So the snapshot
  taken after the actions ran yields no action (idempotent), and labels the template already
  sets (``worker-index: "0"``, static subgroup labels) are never repeated.
- Never labels: a pod of another LWS (the snapshot is filtered by the ``name`` label), a deleting
  pod, a pod whose ``template-revision-hash`` is not a revision of this stage (target or a
  ``group_revisions`` value), a pod whose ordinal cannot be read, a pod owned by something else
  than its StatefulSet, or a pod another action of the stage deletes. Keys another ``label``
  action of the stage already sets on the same pod are left to that action.
- Every action is uid-guarded (a recreated pod is never patched with a stale decision) and has
  reason :data:`REASON`. Labels never change the stage's completeness or blocker.
- Hash LWSs get nothing here: :mod:`pulumi_lws.lws.rollout.hash.planner` labels its leaders itself.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pulumi_lws.core.contract.snapshot import Snapshot, annotations_of, is_deleting, labels_of
from pulumi_lws.core.contract.stage import WEBHOOK_LABELS_REASON, Action, Stage
from pulumi_lws.lws import labels as L
from pulumi_lws.lws import names
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.group_shape import subgroup_index
from pulumi_lws.lws.observe import revision_of

Pod = Mapping[str, Any]

#: ``Action.reason`` of every action emitted here (``stage.is_webhook_labels`` recognises them).
REASON = WEBHOOK_LABELS_REASON
LEADER_EXCLUDED = "LeaderExcluded"
_ORDINAL = re.compile(r"(.*)-([0-9]+)$")  # upstream GetParentNameAndOrdinal


# ---- reading one pod --------------------------------------------------------------------------


def _meta(pod: Pod) -> Mapping[str, Any]:
    return pod.get("metadata") or {}


def parent_and_ordinal(name: str) -> tuple[str, int] | None:
    """Upstream ``GetParentNameAndOrdinal``: ``("<parent>", n)`` for ``"<parent>-<n>"``, else None."""
    m = _ORDINAL.fullmatch(name)
    return (m.group(1), int(m.group(2))) if m else None


def pod_ordinal(pod: Pod) -> int | None:
    """The StatefulSet ordinal: ``apps.kubernetes.io/pod-index``, else the name's suffix. None
    when neither is readable or they disagree (not a pod this module understands)."""
    parsed = parent_and_ordinal(str(_meta(pod).get("name") or ""))
    from_name = parsed[1] if parsed else None
    raw = labels_of(pod).get(L.POD_INDEX)
    from_label = int(raw) if raw is not None and str(raw).isdigit() else None
    if from_label is not None and from_name is not None and from_label != from_name:
        return None
    return from_label if from_label is not None else from_name


def controller_owner(pod: Pod) -> tuple[str, str] | None:
    """``(kind, name)`` of the pod's controller owner (any owner when none is marked), or None
    for a pod without owner references (pure test snapshots: accepted by the callers)."""
    owners = _meta(pod).get("ownerReferences") or []
    ctrl = [o for o in owners if o.get("controller")] or owners
    return (str(ctrl[0].get("kind")), str(ctrl[0].get("name"))) if ctrl else None


def owned_by_statefulset(pod: Pod, sts_name: str) -> bool:
    """The pod's controller is StatefulSet ``sts_name`` (or the pod has no owner references)."""
    owner = controller_owner(pod)
    return owner is None or owner == ("StatefulSet", sts_name)


def _int_annotation(pod: Pod, key: str) -> int | None:
    raw = annotations_of(pod).get(key)
    return int(raw) if raw is not None and str(raw).isdigit() and int(raw) > 0 else None


# ---- the labels upstream's webhook would have set --------------------------------------------


def leader_labels(lws: LeaderWorkerSet, pod: Pod) -> dict[str, str] | None:
    """Every webhook label of an Ordinal leader pod ``<lws>-<i>`` (None: not a leader of ``lws``)."""
    name = str(_meta(pod).get("name") or "")
    ordinal = pod_ordinal(pod)
    if (
        ordinal is None
        or name != names.leader_pod(lws.name, ordinal)
        or not owned_by_statefulset(pod, names.leader_sts(lws.name))
    ):
        return None
    out = {L.GROUP_INDEX: str(ordinal), L.GROUP_KEY: names.group_key(lws.namespace, lws.name, ordinal)}
    ann = annotations_of(pod)
    if _int_annotation(pod, L.SUBGROUP_SIZE) is not None and ann.get(L.SUBGROUP_POLICY_TYPE) != LEADER_EXCLUDED:
        out[L.SUBGROUP_INDEX] = "0"  # the leader always lives in subgroup 0
        out[L.SUBGROUP_KEY] = names.subgroup_key(name, 0)
    return out


def worker_labels(lws: LeaderWorkerSet, pod: Pod) -> dict[str, str] | None:
    """Every webhook label of an Ordinal worker pod ``<lws>-<i>-<j>`` (None: not a worker of ``lws``).

    ``subgroup-*`` only with a valid ``subgroup-size`` and ``size`` annotation (the webhook
    refuses a pod without ``size``); the leader name is the ``leader-name`` annotation, else the
    worker StatefulSet's name (= the leader pod's name)."""
    parsed = parent_and_ordinal(str(_meta(pod).get("name") or ""))
    worker = pod_ordinal(pod)
    if parsed is None or worker is None or worker < 1:
        return None
    sts, _ = parsed
    group = parent_and_ordinal(sts)
    if group is None or group[0] != lws.name or not owned_by_statefulset(pod, sts):
        return None
    out = {L.WORKER_INDEX: str(worker)}
    sg_size, size = _int_annotation(pod, L.SUBGROUP_SIZE), _int_annotation(pod, L.SIZE)
    if sg_size is not None and size is not None:
        leader = str(annotations_of(pod).get(L.LEADER_NAME) or sts)
        idx = subgroup_index(size, sg_size, worker)
        out[L.SUBGROUP_INDEX] = str(idx)
        out[L.SUBGROUP_KEY] = names.subgroup_key(leader, idx)
    return out


def wanted_labels(lws: LeaderWorkerSet, pod: Pod) -> dict[str, str] | None:
    """The webhook labels of ``pod`` (leader or worker), or None when it is neither."""
    if labels_of(pod).get(L.WORKER_INDEX) == "0":
        return leader_labels(lws, pod)
    return worker_labels(lws, pod)


def missing_labels(pod: Pod, wanted: Mapping[str, str], taken: frozenset[str] = frozenset()) -> dict[str, str]:
    """The keys of ``wanted`` the pod does not carry (and no other action sets: ``taken``)."""
    have = labels_of(pod)
    return {k: v for k, v in wanted.items() if k not in have and k not in taken}


def carries_every_label(pod: Pod) -> bool:
    """The pod carries every key :func:`wanted_labels` could give it, so :func:`missing_labels`
    is empty for it (whatever ``wanted_labels`` returns) and it needs no action. Reads the
    annotations :func:`leader_labels` / :func:`worker_labels` choose the key set with, none of
    their validity checks (those only ever drop labels); never raises (anything unexpected:
    False, and the full rules decide)."""
    meta = pod.get("metadata") or {}
    have = meta.get("labels") or {}
    ann = meta.get("annotations") or {}
    if type(ann) is not dict:
        return False
    raw = ann.get(L.SUBGROUP_SIZE)
    sg_size = False if raw is None else _size(raw)
    if have.get(L.WORKER_INDEX) == "0":
        if L.GROUP_INDEX not in have or L.GROUP_KEY not in have or sg_size is None:
            return False
        subgroup = sg_size and ann.get(L.SUBGROUP_POLICY_TYPE) != LEADER_EXCLUDED
    else:
        size = _size(ann.get(L.SIZE))
        if L.WORKER_INDEX not in have or sg_size is None or size is None:
            return False
        subgroup = sg_size and size
    return not subgroup or (L.SUBGROUP_INDEX in have and L.SUBGROUP_KEY in have)


def _size(raw: Any) -> bool | None:
    """Whether ``_int_annotation`` reads ``raw`` as a size (a positive decimal); None for a digit
    string ``int`` cannot parse (``_int_annotation`` raises on it: the full rules decide)."""
    text = None if raw is None else str(raw)
    if text is None or not text.isdigit():
        return False
    return int(text) > 0 if text.isdecimal() else None


# ---- the actions ------------------------------------------------------------------------------


def _known_revisions(stage: Stage) -> frozenset[str]:
    return frozenset({stage.target_revision, *stage.group_revisions.values()})


def _deleted_pods(stage: Stage) -> frozenset[str]:
    return frozenset(a.name for a in stage.actions if a.kind == "Pod" and a.verb == "delete")


def _labelled_keys(stage: Stage) -> dict[str, frozenset[str]]:
    out: dict[str, frozenset[str]] = {}
    for a in stage.actions:
        if a.kind == "Pod" and a.verb == "label":
            out[a.name] = out.get(a.name, frozenset()) | frozenset((a.params.get("labels") or {}).keys())
    return out


def pod_label_action(lws: LeaderWorkerSet, pod: Pod, taken: frozenset[str] = frozenset()) -> Action | None:
    """One uid-guarded ``label`` action with the pod's missing webhook labels, or None."""
    wanted = wanted_labels(lws, pod)
    missing = missing_labels(pod, wanted, taken) if wanted else {}
    if not missing:
        return None
    meta = _meta(pod)
    return Action(
        "label",
        "Pod",
        str(meta.get("name")),
        {"labels": dict(sorted(missing.items()))},
        uid=meta.get("uid"),
        reason=REASON,
    )


def label_actions(lws: LeaderWorkerSet, snapshot: Snapshot, stage: Stage) -> tuple[Action, ...]:
    """``label`` actions adding the webhook labels missing on this LWS's live pods (see module
    docstring); sorted by pod name, at most one per pod; () for Hash LWSs."""
    if lws.spec.group_identity == "Hash":
        return ()
    known, deleted, labelled = _known_revisions(stage), _deleted_pods(stage), _labelled_keys(stage)
    out: list[Action] = []
    for pod in snapshot.list("Pod", **{L.NAME: lws.name}):  # sorted by name
        if carries_every_label(pod):  # a running fleet: every pod, nothing to add whatever else holds
            continue
        name = str(_meta(pod).get("name") or "")
        if is_deleting(pod) or name in deleted or revision_of(pod) not in known:
            continue
        action = pod_label_action(lws, pod, labelled.get(name, frozenset()))
        if action is not None:
            out.append(action)
    return tuple(out)
