"""Rollout control shared by every workload API: pause/resume and the progress deadline (pure).

Each API's :class:`~pulumi_lws.core.contract.workload.Workload` ``reconcile`` plans its stage as usual and
hands the result to :func:`govern` with the :class:`Control` choices of its options; nothing here
knows an API's kinds or labels.

**Pause** (argument ``paused`` > annotation ``pulumi-lws.io/paused: "true"``): the reconcile
registers the objects it observed, as observed (:func:`hold`):

* a planned object that exists keeps its observed ``spec`` (and every other top-level field but
  ``status``) and metadata, so no group moves: partitions, replicas and templates stay; a
  Deployment (LeaderWorkerSet Hash identity) is also registered ``spec.paused: true``, as its own
  controller would otherwise go on rolling its ReplicaSets towards the template;
* a planned object that does not exist yet is not created (no surge, no new revision, no new
  group), unless an observed pod owns it (a Hash group's worker StatefulSet and Service, owned
  by its leader: creating them completes a group that exists, e.g. one recreated by recovery);
* an object of ours (label ``pulumi-lws.io/managed: "true"``, not a Pod, not made by a built-in
  controller) that the plan dropped stays (no surge reclaimed, no old revision pruned);
* actions are kept except ``ungate`` of a pod on the target revision (admitting a group is a
  rollout move; a replacement on an old revision is recovery) unless the API marks it recovery
  (``params[RECOVERY_PARAM]``: LeaderWorkerSet Hash admits the replacement of a group recreated
  while paused, :mod:`pulumi_lws.lws.rollout.failure.hash_paused`): failure handling —
  group recreation per restartPolicy, restart budgets, retention, termination policy — goes on.
  The values a kept ``annotate``/``label`` action writes on a held object are registered with it,
  so the next ``pulumi up`` does not revert them.

**Progress deadline** (argument ``progress_deadline_seconds`` > annotation
``pulumi-lws.io/progress-deadline-seconds`` > 600; 0 disables): while a rollout is not complete and
not paused, the last progress is the newest observed timestamp among the workload's objects
(creation, deletion, a pod's Ready=True transition). When ``now - last progress`` exceeds the
deadline and this stage creates nothing, the stage carries a ``Progressing=False`` condition with
reason :data:`PROGRESS_DEADLINE_EXCEEDED` naming what holds it. The clock is the snapshot's
``now`` (the observation time the shell passes in; :attr:`Control.now` overrides it) — no wall
clock is read here and no state is kept, so the verdict survives a crash or a re-run.

Invariants: ``govern`` of a complete stage changes nothing but ``Stage.control``; a held result
never contains an object the snapshot does not show; only the deadline report, never the plan,
depends on the clock.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pulumi_lws.core.contract.errors import FieldError, SpecError
from pulumi_lws.core.contract.snapshot import Snapshot, pod_condition
from pulumi_lws.core.contract.stage import RolloutControl, Stage
from pulumi_lws.core.contract.workload import Reconciled

# PAUSED and PAUSED_ANNOTATION are rollout control's words (re-exported: importers name them from
# here); hold.py defines them because the held stage's blocker says them
from pulumi_lws.core.features.hold import PAUSED as PAUSED
from pulumi_lws.core.features.hold import PAUSED_ANNOTATION as PAUSED_ANNOTATION
from pulumi_lws.core.features.hold import HeldView, hold, object_ref
from pulumi_lws.core.k8s.timestamps import parse_timestamp as timestamp  # the one RFC 3339 parser

PROGRESS_DEADLINE_ANNOTATION = "pulumi-lws.io/progress-deadline-seconds"
#: the opt-in capacity check (argument ``check_capacity``; :mod:`pulumi_lws.core.features.fit`)
CHECK_CAPACITY_ANNOTATION = "pulumi-lws.io/check-capacity"
#: environment variable a ``pulumi up`` process reads as every component's capacity choice
#: (``true``/``false``; ``pulumi-lws rollout --check-capacity`` sets it for its ``pulumi up`` runs)
CHECK_CAPACITY_ENV = "PULUMI_LWS_CHECK_CAPACITY"
DEFAULT_PROGRESS_DEADLINE_SECONDS = 600.0
#: reason of the ``Progressing=False`` condition once the deadline passed (as Deployments)
PROGRESS_DEADLINE_EXCEEDED = "ProgressDeadlineExceeded"


@dataclass(frozen=True)
class Control:
    """The shells' rollout-control choices (None = unset: the manifest's annotation, else the
    default). ``now``: the clock of the deadline (None = the snapshot's observation time)."""

    paused: bool | None = None
    progress_deadline_seconds: float | None = None
    now: float | None = None
    #: the opt-in capacity check (:mod:`pulumi_lws.core.features.fit`; read by the driver, not by govern)
    check_capacity: bool | None = None


def control_choices(choices: Mapping[str, Any]) -> Control:
    """The :class:`Control` of a shell's ``Workload.options(**choices)`` (``paused``,
    ``progress_deadline_seconds``, ``now``; absent or None = unset)."""
    return Control(
        paused=choices.get("paused"),
        progress_deadline_seconds=choices.get("progress_deadline_seconds"),
        now=choices.get("now"),
    )


@dataclass(frozen=True)
class Settings:
    """Resolved choices: ``deadline`` None = disabled."""

    paused: bool
    deadline: float | None


def _boolean_annotation(key: str, raw: Any, errors: list[FieldError]) -> bool | None:
    if raw is None:
        return None
    text = str(raw).strip().lower()
    if text not in ("true", "false"):
        errors.append(FieldError(f"metadata.annotations[{key}]", 'must be "true" or "false"', raw))
        return None
    return text == "true"


def _paused_annotation(raw: Any, errors: list[FieldError]) -> bool | None:
    return _boolean_annotation(PAUSED_ANNOTATION, raw, errors)


def capacity_choice_of(environ: Mapping[str, str]) -> bool | None:
    """The shell's capacity choice from an environment (:data:`CHECK_CAPACITY_ENV`): ``true`` /
    ``false`` (any case), else None (unset: the manifest's annotation decides)."""
    value = str(environ.get(CHECK_CAPACITY_ENV) or "").strip().lower()
    return True if value == "true" else False if value == "false" else None


def capacity_checked(kind: str, spec: Any, check_capacity: bool | None = None) -> bool:
    """Whether a reconcile of ``spec`` runs the capacity check: the shell's choice (a CLI flag, a
    scenario key) > the annotation :data:`CHECK_CAPACITY_ANNOTATION` (where the component argument
    ``check_capacity`` is written) > off. SpecError naming the annotation when it is malformed."""
    errors: list[FieldError] = []
    annotated = _boolean_annotation(
        CHECK_CAPACITY_ANNOTATION, annotations_of_spec(spec).get(CHECK_CAPACITY_ANNOTATION), errors
    )
    if errors:
        raise SpecError(kind, getattr(spec, "name", None), errors)
    return bool(annotated) if check_capacity is None else check_capacity


def _deadline_annotation(raw: Any, errors: list[FieldError]) -> float | None:
    if raw is None:
        return None
    if not str(raw).strip().isdigit():
        errors.append(
            FieldError(
                f"metadata.annotations[{PROGRESS_DEADLINE_ANNOTATION}]",
                "must be a whole number of seconds >= 0 (0 disables the deadline)",
                raw,
            )
        )
        return None
    return float(str(raw).strip())


def check_arguments(
    kind: str, paused: Any = None, progress_deadline_seconds: Any = None, check_capacity: Any = None
) -> Control:
    """The component arguments ``paused`` / ``progress_deadline_seconds`` / ``check_capacity`` as a
    :class:`Control`; SpecError naming the argument when one has the wrong type (raised before
    anything registers)."""
    errors = []
    if paused is not None and not isinstance(paused, bool):
        errors.append(FieldError("paused", "must be a boolean", paused))
    if check_capacity is not None and not isinstance(check_capacity, bool):
        errors.append(FieldError("checkCapacity", "must be a boolean", check_capacity))
    value = progress_deadline_seconds
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0):
        errors.append(FieldError("progressDeadlineSeconds", "must be a number of seconds >= 0 (0 disables)", value))
    if errors:
        raise SpecError(kind, None, errors)
    return Control(
        paused=paused,
        progress_deadline_seconds=None if value is None else float(value),
        check_capacity=check_capacity,
    )


def with_arguments(manifest: dict[str, Any], control: Control, *, deadline: bool = True) -> dict[str, Any]:
    """``manifest`` with the component arguments written as its control annotations (the argument
    wins over an annotation already there), so every shell reads one place: the manifest.
    ``deadline=False``: leave the deadline annotation alone (DisaggregatedSet keeps its own option)."""
    meta = manifest.setdefault("metadata", {})
    annotations = dict(meta.get("annotations") or {})
    if control.paused is not None:
        annotations[PAUSED_ANNOTATION] = "true" if control.paused else "false"
    if control.check_capacity is not None:
        annotations[CHECK_CAPACITY_ANNOTATION] = "true" if control.check_capacity else "false"
    if deadline and control.progress_deadline_seconds is not None:
        annotations[PROGRESS_DEADLINE_ANNOTATION] = str(int(control.progress_deadline_seconds))
    if annotations:
        meta["annotations"] = annotations
    return manifest


def resolve(kind: str, name: str | None, annotations: Mapping[str, Any], control: Control | None = None) -> Settings:
    """Argument > annotation > default; SpecError naming the annotation when it is malformed
    (checked even when an argument overrides it: the manifest must stay valid on its own)."""
    control = control or Control()
    errors: list[FieldError] = []
    paused = _paused_annotation(annotations.get(PAUSED_ANNOTATION), errors)
    deadline = _deadline_annotation(annotations.get(PROGRESS_DEADLINE_ANNOTATION), errors)
    _boolean_annotation(CHECK_CAPACITY_ANNOTATION, annotations.get(CHECK_CAPACITY_ANNOTATION), errors)
    if errors:
        raise SpecError(kind, name, errors)
    if control.paused is not None:
        paused = control.paused
    if control.progress_deadline_seconds is not None:
        deadline = control.progress_deadline_seconds
    if deadline is None:
        deadline = DEFAULT_PROGRESS_DEADLINE_SECONDS
    return Settings(paused=bool(paused), deadline=deadline or None)


def is_paused(kind: str, spec: Any, control: Control | None) -> bool:
    """Whether ``spec`` reconciles paused (argument > annotation). An API pipeline asks this to plan
    its failure handling against the held state instead of the planned stage (docs/rollout-control.md)."""
    return resolve(kind, getattr(spec, "name", None), annotations_of_spec(spec), control).paused


# ---- observed timestamps ---------------------------------------------------------------------


def last_progress(snapshot: Snapshot) -> float | None:
    """The newest progress instant of any object in ``snapshot`` (None: nothing observed):
    created, started terminating, or (a Pod) became Ready."""
    return progress_and_start(snapshot, "")[0]


def rollout_started(snapshot: Snapshot, target_revision: str) -> float | None:
    """The earliest creation of an object of the target revision: one whose name or a label value
    carries the revision key (every API names or labels its revision objects with it)."""
    return progress_and_start(snapshot, target_revision)[1]


def progress_and_start(snapshot: Snapshot, target_revision: str) -> tuple[float | None, float | None]:
    """``(last_progress(snapshot), rollout_started(snapshot, target_revision))`` in one pass over
    the snapshot (``govern`` needs both), each distinct timestamp text parsed once (objects
    created together share it). Under the observer's promise (:attr:`Snapshot.reuse`) an object
    already read keeps its two instants (:func:`_progress_memo`): the same answer, read once."""
    parsed: dict[Any, float | None] = {}

    def seconds(value: Any) -> float | None:
        if not value:
            return None
        if type(value) is not str:  # malformed: parsed as before, without the memo
            return timestamp(value)
        try:
            return parsed[value]
        except KeyError:  # the first object with this text (rare: objects created together share it)
            t = parsed[value] = timestamp(value)
            return t

    def instants(obj: Mapping[str, Any]) -> tuple[float | None, float | None]:
        """(the object's newest progress instant, its creation)."""
        meta = obj.get("metadata") or {}
        created = seconds(meta.get("creationTimestamp"))
        newest = created
        if "deletionTimestamp" in meta:
            deleted = seconds(meta.get("deletionTimestamp"))
            if deleted is not None and (newest is None or deleted > newest):
                newest = deleted
        if obj.get("kind") == "Pod":
            ready = pod_condition(obj, "Ready")
            if ready is not None and ready.get("status") == "True":
                became_ready = seconds(ready.get("lastTransitionTime"))
                if became_ready is not None and (newest is None or became_ready > newest):
                    newest = became_ready
        return newest, created

    memo = _progress_memo(snapshot)
    last: float | None = None
    started: float | None = None
    for obj in snapshot:
        if memo is None:
            newest, created = instants(obj)
        else:
            hit = memo.get(id(obj))
            if hit is not None and hit[0] is obj:
                newest, created = hit[1], hit[2]
            else:
                newest, created = instants(obj)
                memo[id(obj)] = (obj, newest, created)
        if newest is not None and (last is None or newest > last):
            last = newest
        if created is not None and target_revision and (started is None or created < started):
            meta = obj.get("metadata") or {}
            if target_revision in str(meta.get("name") or "") or target_revision in (meta.get("labels") or {}).values():
                started = created
    if memo is not None and len(memo) > 2 * len(snapshot) + 1024:
        _keep_only(memo, snapshot)
    return last, started


def _progress_memo(snapshot: Snapshot) -> dict[int, tuple[Mapping[str, Any], float | None, float | None]] | None:
    """``id(object) -> (object, newest progress instant, creation)`` of the objects
    :func:`progress_and_start` read under ``snapshot``'s observer (None: it promises nothing).
    The object is held, so no id is reused while remembered; an entry is a function of the
    object's content alone, which the promise says an identical object shares. Memory: at most
    twice the largest snapshot read plus 1,024 entries (then only the current one's are kept)."""
    reuse = snapshot.reuse
    return None if reuse is None else reuse.memo(__name__ + ".progress")


def _keep_only(memo: dict[int, Any], snapshot: Snapshot) -> None:
    kept = {id(o): memo[id(o)] for o in snapshot if id(o) in memo}
    memo.clear()
    memo.update(kept)


# ---- the verdict -----------------------------------------------------------------------------


def counts(stage: Stage, total: int) -> tuple[int, int, int]:
    """(ready, updated, total) groups: per group where the stage lists groups, else its lanes."""
    if stage.groups:
        live = [g for g in stage.groups if g.exists]
        return sum(1 for g in live if g.ready), sum(1 for g in live if g.updated), total
    return sum(lane.new_ready for lane in stage.lanes), sum(lane.new for lane in stage.lanes), total


def holding(stage: Stage) -> str:
    """What holds the rollout: the planner's blocker, else the groups that are not ready."""
    if stage.blocker is not None and stage.blocker.code != PAUSED:
        return f"{stage.blocker.code}: {stage.blocker.message}"
    waiting = [g.id for g in stage.groups if g.exists and not (g.ready and g.updated)]
    if waiting:
        return (
            f"waiting for groups {', '.join(waiting[:10])}{' ...' if len(waiting) > 10 else ''} to be updated and ready"
        )
    lanes = [
        f"{lane.name} {lane.new_ready}/{lane.new} new ready"
        for lane in stage.lanes
        if lane.new_ready < lane.new or lane.old
    ]
    return f"waiting for roles: {', '.join(lanes)}" if lanes else "waiting for the rollout to finish"


def govern(
    result: Reconciled,
    snapshot: Snapshot,
    settings: Settings,
    *,
    total: int,
    now: float | None = None,
    held_view: HeldView | None = None,
) -> Reconciled:
    """Apply pause and the progress deadline to one reconcile's ``result`` (module docstring);
    ``held_view``: as :func:`hold`'s."""
    stage = result.stage
    paused = settings.paused and not stage.complete
    planned = result.manifests  # the plan's, before any hold
    if paused:
        result = hold(result, snapshot, held_view=held_view)
        stage = result.stage
    clock = snapshot.now if now is None else now
    last, started = progress_and_start(snapshot, stage.target_revision)
    exceeded = bool(
        settings.deadline is not None
        and not paused
        and not stage.complete
        and last is not None
        and clock - last > settings.deadline
        and not _creates(planned, snapshot)  # last: a scan of every manifest, needed only past the deadline
    )
    condition = None
    if exceeded:
        condition = {
            "type": "Progressing",
            "status": "False",
            "reason": PROGRESS_DEADLINE_EXCEEDED,
            "message": f"no group became ready and no stage advanced for {int(clock - (last or clock))}s "
            f"(progress deadline {int(settings.deadline or 0)}s); holding: {holding(stage)}",
        }
    ready, updated, total = counts(stage, total)
    verdict = RolloutControl(
        paused=paused,
        deadline_seconds=settings.deadline,
        now=clock,
        last_progress=last,
        started=started,
        exceeded=exceeded,
        condition=condition,
        ready=ready,
        updated=updated,
        total=total,
    )
    return dataclasses.replace(result, stage=dataclasses.replace(stage, control=verdict))


def _creates(manifests: Iterable[Mapping[str, Any]], snapshot: Snapshot) -> bool:
    """Whether a manifest names an object ``snapshot`` does not show (keyed by (kind, name))."""
    return any(snapshot.get(*object_ref(m)) is None for m in manifests)


def with_control_conditions(status: Mapping[str, Any], stage: Stage) -> dict[str, Any]:
    """``status`` with the stage's deadline condition replacing its ``Progressing`` one (appended
    when absent); unchanged when the deadline has not passed. Input is not mutated."""
    cond = stage.control.condition if stage.control is not None else None
    if cond is None:
        return dict(status)
    conds = [dict(c) for c in status.get("conditions") or [] if c.get("type") != cond["type"]]
    return {**dict(status), "conditions": conds + [dict(cond)]}


def control_summary(stage: Stage) -> dict[str, Any]:
    """The ``rollout`` output every component publishes (plain data, camelCase as the status)."""
    c = stage.control or RolloutControl()
    return {
        "paused": c.paused,
        "progressDeadlineSeconds": c.deadline_seconds,
        "deadlineExceeded": c.exceeded,
        "progressing": dict(c.condition) if c.condition else None,
        "now": c.now,
        "lastProgressAt": c.last_progress,
        "startedAt": c.started,
        "readyGroups": c.ready,
        "updatedGroups": c.updated,
        "totalGroups": c.total,
    }


def annotations_of_spec(spec: Any) -> Mapping[str, Any]:
    """``metadata.annotations`` of a parsed spec (every API's model has ``metadata.annotations``)."""
    meta = getattr(spec, "metadata", None)
    return dict(getattr(meta, "annotations", None) or {})


def controlled(
    kind: str,
    spec: Any,
    name: str,
    result: Reconciled,
    snapshot: Snapshot,
    control: Control | None,
    *,
    total: int,
    held_view: HeldView | None = None,
) -> Reconciled:
    """What an API's ``Workload.reconcile`` returns: :func:`govern` with the spec's annotations
    (``held_view``: the API's ``Workload.held_stage`` for this spec and snapshot)."""
    control = control or Control()
    settings = resolve(kind, name, annotations_of_spec(spec), control)
    return govern(result, snapshot, settings, total=total, now=control.now, held_view=held_view)
