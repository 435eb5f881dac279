"""A pure model of a Hash-mode rollout (leader Deployment + group-replacement gate) and stage
prediction on top of it: ``Stage.remaining`` for Hash and ``pulumi-lws plan`` for Hash sets.

The model (one :class:`ModelState` per stage):

* **Groups** in creation order, each ``new`` (target revision) or old, ``gated`` / admitted,
  ``ready`` or not, ``terminating`` (deleted, pods still present) or ``gone``.
* **Deployment** (:func:`deployment_sync`, run to a fixed point): the new ReplicaSet (target) and
  one pool of old ones. ``maxSurge`` rounds up, ``maxUnavailable`` down, against
  ``spec.replicas``, no cap; both 0 → ``maxUnavailable`` 1 (``ResolveFenceposts``). The new
  ReplicaSet grows while all ReplicaSets' replicas stay ≤ R + MS; old groups are removed while
  available (= ready) groups stay ≥ R − MU, counting the new ReplicaSet's unavailable groups
  against the budget (unhealthy old groups first). A ReplicaSet that shrinks deletes gated
  leaders first, then not-ready, then ready ones, newest first (deletion cost −100, victim ranks).
* **Gate** (:func:`admit`): upstream ``reconcileGroupReplacementGate`` on the model (revision
  cap: at most R admitted new groups; with ``T`` tearing-down groups under PostTermination only
  the oldest ``G − T`` gated leaders are admitted). Old-revision leaders are never admitted.
* **Time** (:func:`advance`), one event per stage: when a gated leader is deferred by a
  tearing-down group, the event is "the terminating groups are removed" (PostTermination pacing);
  otherwise the oldest admitted, not-ready new group becomes ready ("groups become ready in
  creation order") and groups already terminating are removed in the same step; with nothing
  left to become ready, terminating groups are removed.

Invariants (tested): live groups ≤ R + MS and, from a healthy start, available ≥ R − MU at every
stage; at most R new groups are admitted; old groups are never admitted; the prediction ends
when every group is ready on the target, R of them, nothing terminating (or after
``MAX_MODEL_STEPS``). Not modelled: the Deployment's transient proportional scaling of the old
ReplicaSet on a combined template change + scale-up (those leaders are gated on an outdated
revision and removed as the new ReplicaSet grows), several distinct old revisions (one pool),
failures and restarts.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pulumi_lws.core.contract.stage import GroupView, PredictedStage
from pulumi_lws.core.k8s.scaling import scaled_value

MAX_MODEL_STEPS = 400
POST_TERMINATION = "PostTermination"


# ---- budgets --------------------------------------------------------------------------------


def deployment_budgets(max_surge: Any, max_unavailable: Any, replicas: int) -> tuple[int, int]:
    """``(surge, unavailable)`` as the Deployment controller resolves them (``ResolveFenceposts``)."""
    surge = scaled_value(max_surge, replicas, round_up=True)
    unavailable = scaled_value(max_unavailable, replicas, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


# ---- state ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelGroup:
    """One group; ``id`` is its column name (observed key prefix, or ``#1``, ``#2``... in creation order when modelled)."""

    id: str
    new: bool
    ready: bool = False
    gated: bool = True
    terminating: bool = False
    gone: bool = False
    stuck: bool = False  # never becomes ready (e.g. restart budget exhausted)

    @property
    def live(self) -> bool:
        return not self.terminating and not self.gone

    @property
    def char(self) -> str:
        if self.gone:
            return "-"
        if self.new:
            return "U" if self.ready else "u"
        return "o" if self.ready else "x"

    @property
    def detail(self) -> str:
        if self.gone:
            return ""
        if self.terminating:
            return "terminating"
        return "gated" if self.gated else ""


@dataclass(frozen=True)
class ModelState:
    """Groups plus the ReplicaSets' ``spec.replicas`` (new, old pool) and the spec's budgets."""

    groups: tuple[ModelGroup, ...]
    new_replicas: int
    old_replicas: int
    replicas: int
    surge: int
    unavailable: int
    policy: str = POST_TERMINATION
    note: str = ""

    @property
    def chars(self) -> str:
        return "".join(g.char for g in self.groups)

    def live(self, new: bool | None = None) -> list[ModelGroup]:
        return [g for g in self.groups if g.live and (new is None or g.new == new)]

    @property
    def available(self) -> int:
        return sum(1 for g in self.groups if g.live and g.ready)

    @property
    def tearing_down(self) -> int:
        return sum(1 for g in self.groups if g.terminating)


def initial_state(
    groups: Iterable[ModelGroup], replicas: int, max_surge: Any, max_unavailable: Any, policy: str = POST_TERMINATION
) -> ModelState:
    """A state whose ReplicaSets are sized like the observed live groups (new / old)."""
    groups = tuple(groups)
    surge, unavailable = deployment_budgets(max_surge, max_unavailable, replicas)
    return ModelState(
        groups,
        sum(1 for g in groups if g.live and g.new),
        sum(1 for g in groups if g.live and not g.new),
        replicas,
        surge,
        unavailable,
        policy,
    )


def groups_from_views(views: Sequence[GroupView]) -> list[ModelGroup]:
    """Model groups from a Hash stage's views (leaders in creation order; leaderless groups are
    tearing down). ``phase == "gated"`` is the leader still gated after this reconcile."""
    out = []
    for v in views:
        terminating = v.phase == "terminating" or not v.leader
        out.append(
            ModelGroup(
                id=v.id,
                new=v.updated,
                ready=v.ready and not terminating,
                gated=v.phase == "gated",
                terminating=terminating,
                stuck=v.phase in ("exhausted", "missing-revision"),
            )
        )
    return out


# ---- the Deployment and its ReplicaSets -------------------------------------------------------


def _victim_order(g: ModelGroup, position: int) -> tuple[bool, bool, int]:
    """Deleted first: gated (unscheduled, cost −100), then not ready, then ready; newest first."""
    return (not g.gated, g.ready, -position)


def scale_pool(state: ModelState, new: bool, target: int, next_id: int) -> tuple[ModelState, int]:
    """The ReplicaSet pool ``new`` gets ``target`` replicas: create gated leaders or delete victims."""
    live = [(i, g) for i, g in enumerate(state.groups) if g.live and g.new == new]
    groups = list(state.groups)
    if len(live) < target:
        for _ in range(target - len(live)):
            groups.append(ModelGroup(id=f"#{next_id}", new=new))
            next_id += 1
    for i, g in sorted(live, key=lambda p: _victim_order(p[1], p[0]))[: max(0, len(live) - target)]:
        groups[i] = replace(g, terminating=True, ready=False)
    if new:
        return replace(state, groups=tuple(groups), new_replicas=target), next_id
    return replace(state, groups=tuple(groups), old_replicas=target), next_id


def new_rs_target(state: ModelState) -> int:
    """``NewRSNewReplicas``: grow within R + MS, never above R."""
    have = state.new_replicas
    if have >= state.replicas:
        return state.replicas
    room = state.replicas + state.surge - (have + state.old_replicas)
    return have + min(room, state.replicas - have) if room > 0 else have


def old_rs_target(state: ModelState) -> int:
    """``reconcileOldReplicaSets``: unhealthy old groups first, then ready ones while the
    available groups stay ≥ R − MU (the new ReplicaSet's unavailable groups count against it)."""
    old = state.old_replicas
    if old == 0:
        return 0
    min_available = state.replicas - state.unavailable
    new_unavailable = state.new_replicas - sum(1 for g in state.live(new=True) if g.ready)
    max_down = old + state.new_replicas - min_available - new_unavailable
    if max_down <= 0:
        return old
    unhealthy = old - sum(1 for g in state.live(new=False) if g.ready)
    cut = min(max_down, unhealthy)
    room = state.available - min_available
    return old - cut - max(0, min(old - cut, room))


def deployment_sync(state: ModelState, next_id: int) -> tuple[ModelState, int]:
    """Run the Deployment controller (new ReplicaSet, then old) until nothing changes."""
    for _ in range(4 * (state.replicas + state.surge + len(state.groups)) + 4):
        before = (state.new_replicas, state.old_replicas)
        state, next_id = scale_pool(state, True, new_rs_target(state), next_id)
        state, next_id = scale_pool(state, False, old_rs_target(state), next_id)
        if (state.new_replicas, state.old_replicas) == before:
            break
    return state, next_id


# ---- the gate and time ------------------------------------------------------------------------


def admit(state: ModelState) -> tuple[ModelState, bool]:
    """Ungate per upstream's rules; returns the state and whether a new leader stays deferred by
    tearing-down groups (not by the revision cap)."""
    tearing = state.tearing_down if state.policy == POST_TERMINATION else 0
    gated = [i for i, g in enumerate(state.groups) if g.live and g.gated]
    ranked = sorted(gated, key=lambda i: (not state.groups[i].new, i))  # desired revision first
    admitted = sum(1 for g in state.live(new=True) if not g.gated)
    groups, deferred, new_rank = list(state.groups), False, 0
    for rank, i in enumerate(ranked):
        g = groups[i]
        if not g.new:
            continue
        cap_defers = admitted + new_rank >= state.replicas
        new_rank += 1
        if cap_defers:
            continue
        if tearing and rank >= len(ranked) - tearing:
            deferred = True
            continue
        groups[i] = replace(g, gated=False)
    return replace(state, groups=tuple(groups)), deferred


def _next_ready(state: ModelState) -> int | None:
    for i, g in enumerate(state.groups):
        if g.live and g.new and not g.gated and not g.ready and not g.stuck:
            return i
    return None


def remove_terminating(groups: Sequence[ModelGroup]) -> list[ModelGroup]:
    return [replace(g, terminating=False, gone=True) if g.terminating else g for g in groups]


def advance(state: ModelState, deferred: bool) -> ModelState | None:
    """One event (module docstring); None when nothing can change any more."""
    if deferred and state.tearing_down:
        return replace(state, groups=tuple(remove_terminating(state.groups)), note="terminating groups removed")
    i = _next_ready(state)
    if i is None:
        if not state.tearing_down:
            return None
        return replace(state, groups=tuple(remove_terminating(state.groups)), note="terminating groups removed")
    groups = remove_terminating(state.groups)
    groups[i] = replace(groups[i], ready=True)
    return replace(state, groups=tuple(groups), note=f"G-{groups[i].id} ready")


def is_done(state: ModelState) -> bool:
    """Every live group new, admitted and ready, R of them, no old replica, nothing terminating."""
    live = state.live()
    return (
        len(live) == state.replicas
        and state.old_replicas == 0
        and not state.tearing_down
        and all(g.new and g.ready and not g.gated for g in live)
    )


def predict(state: ModelState, next_id: int = 1, max_steps: int = MAX_MODEL_STEPS) -> list[ModelState]:
    """Stages from ``state``: Deployment sync + gate, then one event, until done or stuck.
    The first element is ``state`` after the Deployment and the gate acted on it."""
    out: list[ModelState] = []
    for _ in range(max_steps):
        state, next_id = deployment_sync(state, next_id)
        state, deferred = admit(state)
        out.append(state)
        if is_done(state):
            break
        following = advance(state, deferred)
        if following is None:
            break
        state = following
    return out


def finished(steps: Sequence[ModelState]) -> bool:
    """Whether a prediction ran to its end: done, or stuck with nothing left to change (False:
    cut at ``MAX_MODEL_STEPS``)."""
    return len(steps) < MAX_MODEL_STEPS or is_done(steps[-1])


def remaining_stages(
    views: Sequence[GroupView], replicas: int, max_surge: Any, max_unavailable: Any, policy: str = POST_TERMINATION
) -> tuple[tuple[PredictedStage, ...], bool]:
    """Predicted stages after the observed one (``Stage.remaining``) and whether the prediction
    ran to its end (not cut at ``MAX_MODEL_STEPS``). Model groups keep the observed ids; created ones are ``#1``, ``#2``, ..."""
    start = initial_state(groups_from_views(views), replicas, max_surge, max_unavailable, policy)
    steps = predict(start)
    shown = steps[1:] if steps and _signature(steps[0]) == _signature(start) else steps
    return tuple(PredictedStage(replicas, None, s.chars) for s in shown), finished(steps)


def _signature(state: ModelState) -> tuple[tuple[str, str, str], ...]:
    return tuple((g.id, g.char, g.detail) for g in state.groups)
