"""Kubernetes Events of one reconcile, derived purely from its :class:`Stage` and the Events it
already recorded (no controller writes Events in operator-free mode, so the reconcile does).

What gets an Event (docs/modes.md, "Events"):

* every action of the stage, on the object it concerns (``Action.kind/name/uid``), with the API's
  upstream reason for that verb where upstream has one (``UpstreamController.event_reasons``:
  LeaderWorkerSet ``ungate`` -> ``GroupReplacementAdmitted``, ``delete`` -> ``RecreateGroup``;
  ModelServing ``delete`` -> ``RoleDeleting``), else a generic reason (:data:`DEFAULT_REASONS`).
  The webhook-equivalent label bookkeeping (:func:`~pulumi_lws.core.contract.stage.is_webhook_labels`)
  changes no group's state and gets none;
* every stage note of the form ``Reason: message`` with an upstream-style CamelCase reason (the
  failure handlers' ``RecreateGroup``, ``GroupRestartBackoff``, ``GroupUnschedulable``, ...), on
  the workload;
* state changes of the workload, on the workload: ``RollingUpdateStarted`` (first stage of a new
  target revision with groups on another one), ``RollingUpdateCompleted`` (the target revision
  is promoted: the stage is complete after a started rollout), ``BlockerEntered`` /
  ``BlockerCleared`` (the blocker code changed; the entered reason is upstream's where it has
  one: ``GroupUnschedulable``, ``GroupReplacementDeferred``), and ``GroupsProgressing``
  ("deleting surge replica ...", upstream's reason) when surge groups are reclaimed.

Deduplication (invariant: re-running the same reconcile creates no new Event object):

* names are deterministic: ``<object>.<16 hex of sha256(key)>``, the key naming what happened
  (reason, object, uid, params; for state events the target revision and blocker code);
* action and note events are *bumped* when recorded again (``count`` + 1, as the API server's
  event aggregation does): one object per distinct happening, however often it is planned;
* state events are recorded only on a change against ``previous`` (the Events of this
  workload as the cluster shows them): planning the same stage twice records nothing new.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pulumi_lws.core.contract.stage import Action, Stage, is_webhook_labels

MANAGED_BY = "app.kubernetes.io/managed-by"
COMPONENT = "pulumi-lws"
KIND_LABEL = "pulumi-lws.io/workload-kind"
NAME_LABEL = "pulumi-lws.io/workload-name"
KEY_LABEL = "pulumi-lws.io/event-key"
#: annotations of state events: which state (``started`` ...) and, for blockers, the code
STATE_ANNOTATION = "pulumi-lws.io/event-state"
BLOCKER_ANNOTATION = "pulumi-lws.io/blocker"
TARGET_ANNOTATION = "pulumi-lws.io/target-revision"

STARTED, COMPLETED = "RollingUpdateStarted", "RollingUpdateCompleted"
BLOCKER_ENTERED, BLOCKER_CLEARED = "BlockerEntered", "BlockerCleared"
SURGE_RECLAIMED = "GroupsProgressing"  # upstream's reason for "deleting surge replica %s-%d"

#: generic reason per action verb, where the API names no upstream one
DEFAULT_REASONS: Mapping[str, str] = {
    "label": "LabelsUpdated",
    "annotate": "AnnotationsUpdated",
    "ungate": "GateRemoved",
    "set-condition": "ConditionSet",
    "finalize": "FinalizersUpdated",
    "delete": "ObjectDeleted",
    "disown": "OwnerReferencesReplaced",
}
#: upstream's action strings (``events.k8s.io`` ``action``) per verb
ACTIONS: Mapping[str, str] = {"delete": "Delete"}
#: blocker code -> upstream's reason, where upstream reports the same situation
BLOCKER_REASONS: Mapping[str, str] = {
    "unschedulable": "GroupUnschedulable",
    "group-replacement-deferred": "GroupReplacementDeferred",
}

_NOTE = re.compile(r"^([A-Z][a-z]+(?:[A-Z][a-z0-9]*)+): (.+)$", re.DOTALL)
_GROUP = re.compile(r"\bgroup (\S+?)[:,\s]")


@dataclass(frozen=True)
class WorkloadRef:
    """The workload the Events are about (and whose Events are listed by :meth:`selector`)."""

    kind: str
    api_version: str
    namespace: str
    name: str
    uid: str | None = None

    def labels(self) -> dict[str, str]:
        return {MANAGED_BY: COMPONENT, KIND_LABEL: self.kind, NAME_LABEL: _label_value(self.name)}

    selector = labels


@dataclass(frozen=True)
class EventRecord:
    """One Event to create, or to bump when an Event of that ``name`` exists."""

    name: str
    reason: str
    message: str
    regarding: Mapping[str, Any]  # {kind, name, namespace, uid?, apiVersion?}
    type: str = "Normal"
    action: str = "Update"
    #: state events are never bumped (recorded only on a change); others are
    bump: bool = True
    annotations: Mapping[str, str] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)

    def manifest(self, namespace: str, timestamp: str) -> dict[str, Any]:
        """A ``core/v1`` Event (what ``kubectl get events`` lists), first recorded at ``timestamp``."""
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                "name": self.name,
                "namespace": namespace,
                "labels": dict(self.labels),
                **({"annotations": dict(self.annotations)} if self.annotations else {}),
            },
            "involvedObject": dict(self.regarding),
            "reason": self.reason,
            "message": self.message,
            "type": self.type,
            "action": self.action,
            "count": 1,
            "firstTimestamp": timestamp,
            "lastTimestamp": timestamp,
            "source": {"component": COMPONENT},
            "reportingComponent": COMPONENT,
            "reportingInstance": COMPONENT,
        }


class EventSink(Protocol):
    """What an actuator implements to record Events (sim/cluster/simcluster.py, cluster/live.py)."""

    def list_events(self, namespace: str, selector: Mapping[str, str]) -> list[dict[str, Any]]: ...

    def record_events(self, namespace: str, events: Sequence[EventRecord]) -> list[str]: ...


def _label_value(value: str) -> str:
    """A label value (<= 63 chars): long names keep a prefix and a digest, so they stay unique."""
    return value if len(value) <= 63 else f"{value[:46]}-{_digest(value)}"


def _digest(key: Any) -> str:
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:16]


def event_name(object_name: str, key: Any) -> str:
    """``<object>.<digest>``: deterministic, a DNS subdomain (<= 253 chars)."""
    return f"{object_name[:200].rstrip('.-')}.{_digest(key)}"


def _record(
    ref: WorkloadRef,
    regarding: Mapping[str, Any],
    reason: str,
    message: str,
    key: Any,
    *,
    type_: str = "Normal",
    action: str = "Update",
    bump: bool = True,
    annotations: Mapping[str, str] | None = None,
) -> EventRecord:
    digest = _digest([ref.kind, ref.name, key])
    return EventRecord(
        name=event_name(str(regarding["name"]), [ref.kind, ref.name, key]),
        reason=reason,
        message=message,
        regarding=dict(regarding),
        type=type_,
        action=action,
        bump=bump,
        annotations=dict(annotations or {}),
        labels={**ref.labels(), KEY_LABEL: digest},
    )


def _workload_object(ref: WorkloadRef) -> dict[str, Any]:
    obj = {"kind": ref.kind, "apiVersion": ref.api_version, "namespace": ref.namespace, "name": ref.name}
    return {**obj, "uid": ref.uid} if ref.uid else obj


def action_event(ref: WorkloadRef, action: Action, reasons: Mapping[str, str] | None = None) -> EventRecord:
    """The Event of one action, on the object it concerns."""
    reason = (reasons or {}).get(action.verb) or DEFAULT_REASONS.get(action.verb, "ActionTaken")
    regarding = {
        "kind": action.kind,
        "namespace": ref.namespace,
        "name": action.name,
        **({"uid": action.uid} if action.uid else {}),
    }
    key = [
        "action",
        action.verb,
        action.kind,
        action.name,
        action.uid,
        json.dumps(dict(action.params), sort_keys=True, default=str),
    ]
    return _record(
        ref,
        regarding,
        reason,
        f"{ref.kind} {ref.name}: {action.describe()}",
        key,
        type_="Normal",
        action=ACTIONS.get(action.verb, "Update"),
    )


def note_events(ref: WorkloadRef, stage: Stage) -> list[EventRecord]:
    """Stage notes of the form ``Reason: message`` (upstream-style reasons), on the workload."""
    out = []
    for note in stage.notes:
        match = _NOTE.match(note)
        if not match:
            continue
        reason, message = match.groups()
        group = _GROUP.search(message + " ")
        key = ["note", reason, stage.target_revision, group.group(1) if group else message]
        warning = reason in ("GroupUnschedulable", "GroupRestartBackoff", "ReplicaRestartBudgetExceeded")
        out.append(_record(ref, _workload_object(ref), reason, message, key, type_="Warning" if warning else "Normal"))
    return out


def _latest(previous: Sequence[Mapping[str, Any]], **annotations: str) -> Mapping[str, Any] | None:
    """The most recently recorded previous Event carrying every given annotation value."""

    def matches(ev: Mapping[str, Any]) -> bool:
        ann = (ev.get("metadata") or {}).get("annotations") or {}
        return all(ann.get(k) == v for k, v in annotations.items())

    found = [ev for ev in previous if matches(ev)]
    return max(found, key=_recorded_at, default=None)


def _recorded_at(ev: Mapping[str, Any]) -> tuple[str, int]:
    """When an Event was last recorded: its lastTimestamp (seconds), then its resourceVersion
    (the API server's write order, which breaks ties within one second)."""
    version = str((ev.get("metadata") or {}).get("resourceVersion") or "0")
    return str(ev.get("lastTimestamp") or ""), int(version) if version.isdigit() else 0


def open_blockers(previous: Sequence[Mapping[str, Any]]) -> set[str]:
    """Blocker codes whose latest recorded state is "entered"."""
    codes = {((ev.get("metadata") or {}).get("annotations") or {}).get(BLOCKER_ANNOTATION) for ev in previous}
    out = set()
    for code in filter(None, codes):
        latest = _latest(previous, **{BLOCKER_ANNOTATION: code})
        if latest and ((latest.get("metadata") or {}).get("annotations") or {}).get(STATE_ANNOTATION) == "entered":
            out.add(code)
    return out


def state_events(ref: WorkloadRef, stage: Stage, previous: Sequence[Mapping[str, Any]]) -> list[EventRecord]:
    """Rollout started/completed and blocker entered/cleared, each only on a change against ``previous``."""
    obj, target, out = _workload_object(ref), stage.target_revision, []

    def recorded(state: str) -> bool:
        return _latest(previous, **{STATE_ANNOTATION: state, TARGET_ANNOTATION: target}) is not None

    rolling = any(g.exists and not g.updated for g in stage.groups) or any(lane.old for lane in stage.lanes)
    if not stage.complete and rolling and not recorded("started"):
        out.append(
            _record(
                ref,
                obj,
                STARTED,
                f"rolling update to revision {target} started",
                ["started", target],
                bump=False,
                annotations={STATE_ANNOTATION: "started", TARGET_ANNOTATION: target},
            )
        )
    if stage.complete and recorded("started") and not recorded("completed"):
        out.append(
            _record(
                ref,
                obj,
                COMPLETED,
                f"revision {target} promoted: every group is updated and ready",
                ["completed", target],
                bump=False,
                annotations={STATE_ANNOTATION: "completed", TARGET_ANNOTATION: target},
            )
        )
    current = stage.blocker.code if stage.blocker else None
    was_open = open_blockers(previous)
    for code in sorted(was_open - {current}):
        out.append(
            _record(
                ref,
                obj,
                BLOCKER_CLEARED,
                f"blocker {code} cleared",
                ["cleared", code],
                bump=True,
                annotations={STATE_ANNOTATION: "cleared", BLOCKER_ANNOTATION: code},
            )
        )
    if stage.blocker is not None and current not in was_open:
        out.append(
            _record(
                ref,
                obj,
                BLOCKER_REASONS.get(str(current), BLOCKER_ENTERED),
                f"{current}: {stage.blocker.message}",
                ["entered", current],
                type_="Warning",
                bump=True,
                annotations={STATE_ANNOTATION: "entered", BLOCKER_ANNOTATION: str(current)},
            )
        )
    for g in stage.groups:  # Ordinal surge groups above the stage's replicas: the StatefulSet scales them away
        if g.surge and g.exists and g.index is not None and g.index >= stage.replicas:
            out.append(
                _record(
                    ref,
                    obj,
                    SURGE_RECLAIMED,
                    f"deleting surge replica {ref.name}-{g.index}",
                    ["surge", target, g.id],
                    bump=False,
                    action="Delete",
                )
            )
    return out


def derive_events(
    ref: WorkloadRef, stage: Stage, previous: Sequence[Mapping[str, Any]] = (), reasons: Mapping[str, str] | None = None
) -> tuple[EventRecord, ...]:
    """Every Event of one reconcile of ``stage`` (module docstring), given the ``previous`` Events
    of the workload. Pure; a surge event already recorded is not recorded again."""
    known = {(ev.get("metadata") or {}).get("name") for ev in previous}
    events = [action_event(ref, a, reasons) for a in stage.actions if not is_webhook_labels(a)]
    events += note_events(ref, stage) + state_events(ref, stage, previous)
    unique: dict[str, EventRecord] = {}
    for ev in events:
        if ev.bump or ev.name not in known:
            unique.setdefault(ev.name, ev)
    return tuple(unique.values())


def report_events(sink: Any, ref: WorkloadRef, stage: Stage, reasons: Mapping[str, str] | None = None) -> list[str]:
    """List the workload's Events, derive this reconcile's and record them through ``sink`` (an
    :class:`EventSink`); an actuator that records no Events (a test fake) -> nothing, ``[]``."""
    if not (hasattr(sink, "list_events") and hasattr(sink, "record_events")):
        return []
    previous = sink.list_events(ref.namespace, ref.selector())
    events = derive_events(ref, stage, previous, reasons)
    return list(sink.record_events(ref.namespace, events)) if events else []


def bumped(existing: Mapping[str, Any], event: EventRecord, timestamp: str) -> dict[str, Any]:
    """The merge patch that records ``event`` again on its ``existing`` Event (count + 1)."""
    return {"count": int(existing.get("count") or 1) + 1, "lastTimestamp": timestamp, "message": event.message}
