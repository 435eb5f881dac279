"""What a planner decides for one reconcile: the :class:`Stage`.

Shared by every policy (LWS Ordinal/Hash today; ModelServing and DisaggregatedSet next): the
desired controller shape, which revision each group's members are rendered on, imperative
:class:`Action` s (previewable, executed only on update), a :class:`Blocker` when the rollout
cannot advance, and a prediction of the remaining stages.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# One character per group, as in the conformance vectors and the upstream docs.
UPDATED_READY = "U"
OLD_READY = "o"
UPDATED_NOT_READY = "u"
OLD_NOT_READY = "x"
ABSENT = "-"

_fill = object.__setattr__  # bypasses the frozen dataclass's __setattr__, once per GroupView


@dataclass(frozen=True, init=False)
class GroupView:
    """A group as observed: identity, revision, readiness. ``id`` is the ordinal or hash key.

    Immutable like every dataclass here; its ``__init__`` is written out only because one is built
    per group per reconcile (10,000s): filling ``__dict__`` in one step costs half of the generated
    frozen ``__init__`` (one ``object.__setattr__`` per field). Same fields, defaults, equality,
    hash, repr and ``dataclasses.replace``.
    """

    id: str
    revision: str | None
    ready: bool
    updated: bool
    exists: bool = True
    surge: bool = False
    index: int | None = None
    phase: str = ""  # free-form detail for tables: "pending", "terminating", "gated", "unschedulable"
    # Hash mode (additive; None/False for Ordinal): the full group key (``id`` is its first 8
    # chars), the observed leader pod and its uid, and whether the group's worker objects are
    # declared this reconcile (admitted leader, startup policy satisfied).
    key: str | None = None
    leader: str | None = None
    leader_uid: str | None = None
    workers: bool = False

    def __init__(
        self,
        id: str,
        revision: str | None,
        ready: bool,
        updated: bool,
        exists: bool = True,
        surge: bool = False,
        index: int | None = None,
        phase: str = "",
        key: str | None = None,
        leader: str | None = None,
        leader_uid: str | None = None,
        workers: bool = False,
    ) -> None:
        _fill(
            self,
            "__dict__",
            {
                "id": id,
                "revision": revision,
                "ready": ready,
                "updated": updated,
                "exists": exists,
                "surge": surge,
                "index": index,
                "phase": phase,
                "key": key,
                "leader": leader,
                "leader_uid": leader_uid,
                "workers": workers,
            },
        )

    @property
    def char(self) -> str:
        if not self.exists:
            return ABSENT
        if self.updated:
            return UPDATED_READY if self.ready else UPDATED_NOT_READY
        return OLD_READY if self.ready else OLD_NOT_READY


@dataclass(frozen=True)
class Action:
    """An imperative change a reconcile needs beyond declaring objects (e.g. ungate a pod).

    Listed in preview; executed only on update, by the one actuator shared by the component and
    the simulator. ``uid`` makes deletes/patches precise: a recreated object is never touched.

    ``params`` by verb (the one contract every actuator implements):

    - ``label``: ``{"labels": {key: value or None}}`` (None removes the key)
    - ``annotate``: ``{"annotations": {key: value or None}}``
    - ``ungate``: ``{"gate": name}`` (removes only that scheduling gate)
    - ``set-condition``: ``{"type", "status", "reason"?, "message"?}`` (pod status condition)
    - ``finalize``: ``{"add": [name, ...]}`` and/or ``{"remove": [name, ...]}`` on
      ``metadata.finalizers`` (adding to an object being deleted is refused, as by the API server)
    - ``delete``: ``{"propagation": "Foreground" | "Background"}`` (default Background)
    - ``patch-status``: ``{"status": {field: value, ...}}`` merged into the object's ``/status``
      subresource (top-level keys replaced, the others kept; e.g. a DisaggregatedSetRoleScaler's
      ``replicas``/``selector``, which its scale subresource serves to autoscalers)

    A ``label`` action with reason :data:`WEBHOOK_LABELS_REASON` only adds labels upstream's pod
    webhook would have set at admission (:mod:`pulumi_lws.lws.rollout.ordinal.pod_labels`): bookkeeping that
    changes no group's state, so traces count it instead of listing it
    (:func:`is_webhook_labels`).
    """

    verb: str  # "label" | "annotate" | "ungate" | "set-condition" | "finalize" | "delete" | "patch-status"
    kind: str
    name: str
    params: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=True)
    uid: str | None = None
    reason: str = ""

    def describe(self) -> str:
        detail = ", ".join(f"{k}={v}" for k, v in sorted(self.params.items()))
        return (
            f"{self.verb} {self.kind}/{self.name}"
            + (f" ({detail})" if detail else "")
            + (f": {self.reason}" if self.reason else "")
        )


#: ``Action.reason`` of the webhook-equivalent ``label`` actions (:mod:`pulumi_lws.lws.rollout.ordinal.pod_labels`).
WEBHOOK_LABELS_REASON = "webhook-equivalent labels"


def is_webhook_labels(action: Action) -> bool:
    """A ``label`` action that only adds the labels upstream's webhook sets at admission."""
    return action.verb == "label" and action.reason == WEBHOOK_LABELS_REASON


@dataclass(frozen=True)
class Blocker:
    """Why a rollout cannot advance now. ``code`` is stable (for alerts), ``message`` for humans."""

    code: str
    message: str
    groups: tuple[str, ...] = ()
    remedies: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.message


#: Blocker codes the cluster clears by itself, with no one acting: groups becoming ready or going
#: away, a PostTermination replacement, a groups-in-flight cap. The one notion of "waiting for
#: pods" of the loops that run ``pulumi up`` again and again — ``pulumi-lws rollout`` (never
#: counted toward ``--patience``), ``pulumi-lws up --until-complete`` and ``plan --objects`` (they
#: keep going): every other blocker is a reason for them to stop.
WAITING_FOR_CLUSTER_CODES = frozenset(
    {
        "waiting-for-groups",
        "waiting-for-roles",
        "waiting-for-deletion",
        "group-replacement-deferred",
        "groups-in-flight-cap",
        # core.features.adoption: held one pulumi up while an adopted fleet's leader-Pod owners are
        # removed; the next pulumi up clears it (no one else acts)
        "adoption-pod-owners",
    }
)

#: Blocker codes of a healthy rollout pacing itself: :data:`WAITING_FOR_CLUSTER_CODES`, plus a user
#: partition holding the surge and a paused rollout, which wait for a person (the partition reset,
#: the pause lifted): waiting, not a failure. Every other code names a failure (unschedulable,
#: resource deadlock, no budget, progress deadline exceeded...). Timelines draw only failures red.
WAITING_CODES = WAITING_FOR_CLUSTER_CODES | frozenset({"surge-held-by-partition", "paused"})


def is_waiting(code: str | None) -> bool:
    """A blocker code of ordinary waiting (:data:`WAITING_CODES`)."""
    return code in WAITING_CODES


def waits_for_cluster(code: str | None) -> bool:
    """A blocker code the cluster clears by itself (:data:`WAITING_FOR_CLUSTER_CODES`)."""
    return code in WAITING_FOR_CLUSTER_CODES


@dataclass(frozen=True)
class Lane:
    """One role of a multi-role workload in a trace row: its members on old revisions and on the
    target revision, and how many of each are ready. ``unit``: what a member is — ``"groups"``
    (DisaggregatedSet: a role's groups; a row's Live/Available are then the lanes' sums) or
    ``"replicas"`` (ModelServing RoleRollingUpdate: role replicas inside ServingGroups, which the
    row's Live/Available count instead)."""

    name: str
    old: int
    new: int
    old_ready: int = 0
    new_ready: int = 0
    unit: str = "groups"

    @property
    def text(self) -> str:
        """``old|new``, plus the ready counts while some are not ready: ``5|2 (5|1 ready)``."""
        base = f"{self.old}|{self.new}"
        if (self.old_ready, self.new_ready) == (self.old, self.new):
            return base
        return f"{base} ({self.old_ready}|{self.new_ready} ready)"


def lane_title(slice_index: int, role: str) -> str:
    """The one rule naming a multi-role lane: ``<role>`` for slice 0, ``<slice>/<role>`` for any
    other slice. It never depends on the slice count, so a lane keeps its title when ``slices``
    changes mid-run (stage tables, narration, plots and the trace view all use it)."""
    return role if slice_index == 0 else f"{slice_index}/{role}"


@dataclass(frozen=True)
class PredictedStage:
    """A future stage, assuming groups become ready in rollout order."""

    replicas: int
    partition: int | None
    groups: str  # one char per group (legend above)
    #: the group ids of ``groups``, in the same order, where they are not simply 0..n-1 (e.g.
    #: ModelServing's sparse ordinals after a surge); empty = positions
    ids: tuple[str, ...] = ()
    #: the rollout is complete in this stage (None = the planner does not say)
    complete: bool | None = None
    #: multi-role workloads: each role's old|new groups after this stage (stage tables show these)
    lanes: tuple[Lane, ...] = ()

    def group_ids(self) -> tuple[str, ...]:
        return self.ids or tuple(str(i) for i in range(len(self.groups)))


@dataclass(frozen=True)
class RolloutControl:
    """What :func:`pulumi_lws.core.features.control.govern` decided for one stage (times: epoch seconds,
    read from observed cluster timestamps; ``now`` is the snapshot's observation time).

    ``condition``: the ``Progressing`` condition to publish when the progress deadline passed
    (``status: "False"``, reason ``ProgressDeadlineExceeded``), else None."""

    paused: bool = False
    deadline_seconds: float | None = None
    now: float | None = None
    last_progress: float | None = None
    started: float | None = None
    exceeded: bool = False
    condition: Mapping[str, str] | None = None
    ready: int = 0
    updated: int = 0
    total: int = 0


@dataclass(frozen=True)
class Stage:
    """The single safe step one reconcile applies.

    Invariants (checked by tests): for Ordinal, ``partition`` never rises within one rollout;
    a group's members are rendered on ``group_revisions[id]``, which differs from the target
    revision only for groups the partition has not admitted.
    """

    policy: str  # "lws/ordinal", "lws/hash", ...
    target_revision: str
    replicas: int  # leader controller replicas (StatefulSet or Deployment)
    partition: int | None
    group_revisions: Mapping[str, str]
    groups: tuple[GroupView, ...] = ()
    actions: tuple[Action, ...] = ()
    blocker: Blocker | None = None
    complete: bool = False
    case: str | None = None  # planner branch (Ordinal: "1", "2", "3", "3b", "4", "5"; "rf" = RolloutFirst)
    remaining: tuple[PredictedStage, ...] = ()
    notes: tuple[str, ...] = ()
    #: Old revisions whose ControllerRevision stays declared although no group is rendered on it
    #: this stage: pods still run it, or the leader StatefulSet may recreate pods from it (Ordinal).
    kept_revisions: tuple[str, ...] = ()
    #: multi-role workloads: each role's old|new groups after this stage (stage tables show these)
    lanes: tuple[Lane, ...] = ()
    #: the rollout-control verdict (paused, progress deadline): :mod:`pulumi_lws.core.features.control`
    control: RolloutControl | None = None

    @property
    def group_chars(self) -> str:
        return "".join(g.char for g in self.groups)

    def summary(self) -> str:
        part = "" if self.partition is None else f" partition={self.partition}"
        state = "complete" if self.complete else (f"blocked: {self.blocker}" if self.blocker else "in progress")
        return f"{self.policy} revision={self.target_revision} replicas={self.replicas}{part} groups={self.group_chars or '-'} [{state}]"
