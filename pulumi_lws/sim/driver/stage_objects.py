"""The objects each ``pulumi up`` of a rollout OLD -> NEW creates, updates, replaces and deletes.

``pulumi-lws plan --objects`` (and the pull-request comment of ``examples/ci``). The rollout is
stepped as the plan predicts it: the cluster converged on OLD (the warm-up of ``simulate --from
OLD --to NEW``, :func:`~pulumi_lws.sim.driver.change.change_scenario`), then one ``pulumi up`` of
NEW after another, the groups each stage waits for becoming ready together before the next one
(the kubelet of the warm-up: every scheduled pod Running and ready at once; one simulated second
between ups, so terminating pods go). Each up's counts are those of applying its registered
objects over the previous up's registration (``sim/cluster/apply``: the provider's create, update,
replace and delete), so up 1 is the diff ``plan --diff`` shows.

Invariants: only ups that change an object are listed (an up that only waits registers the same
objects); the list ends with the first up whose stage is complete and changes nothing, or with a
blocker other than waiting for pods (``blocked``), after :data:`IDLE_UPS` ups in a row waiting
for pods that never become ready, or after :data:`MAX_UPS` (``blocked`` says so). Pure apart from the
in-memory simulator.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pulumi_lws.core.contract.stage import waits_for_cluster

#: a bound on the ups of one rollout (the largest seed rolls out in a few dozen)
MAX_UPS = 500
#: ups in a row that change nothing while waiting for pods that never become ready: blocked
IDLE_UPS = 10


@dataclass(frozen=True)
class UpObjects:
    """One ``pulumi up`` (1 = the next one) and how many objects it changed."""

    up: int
    created: int
    updated: int
    replaced: int
    deleted: int

    def to_json(self) -> dict[str, int]:
        return {
            "up": self.up,
            "created": self.created,
            "updated": self.updated,
            "replaced": self.replaced,
            "deleted": self.deleted,
        }

    def text(self) -> str:
        """``"3 created, 3 updated, 0 deleted"`` (``, N replaced`` when any was)."""
        words = f"{self.created} created, {self.updated} updated, {self.deleted} deleted"
        return words + (f", {self.replaced} replaced" if self.replaced else "")


@dataclass
class RolloutObjects:
    ups: list[UpObjects] = field(default_factory=list)
    complete: bool = False
    blocked: str | None = None


def rollout_objects(
    old: Mapping[str, Any], new: Mapping[str, Any], choices: Mapping[str, Any] | None = None
) -> RolloutObjects:
    """The object changes of every ``pulumi up`` rolling ``new`` out over ``old`` (module doc).
    ``choices``: ``update_order`` (the others are the defaults). Raises
    :class:`~pulumi_lws.sim.driver.timeline.WarmUpBlocked` when OLD never converges."""
    from pulumi_lws.sim.driver.change import change_scenario
    from pulumi_lws.sim.driver.timeline import TimelineRunner

    options = {"update_order": choices["update_order"]} if choices and choices.get("update_order") else {}
    scenario = change_scenario(old, new, **options).scenario
    runner = TimelineRunner(scenario, "pure")
    out = RolloutObjects()
    runner.freeze_between_reconciles()
    try:
        for obj in scenario.objects:
            runner.cluster.create(obj)
        runner.warm_up()
        # the Runner's own steps (same package): NEW applied as the scenario applies it at t=0,
        # then one reconcile = one pulumi up
        runner._due_updates(0.0)
        runner.cluster.kubelet.config.instant = True
        idle = 0
        for _ in range(MAX_UPS):
            runner.cluster.step(runner.cluster.clock.now + 1.0)
            step = runner._reconcile()
            a = step.applied
            counts = (len(a.created), len(a.updated), len(a.replaced), len(a.deleted))
            idle = 0 if any(counts) else idle + 1
            if any(counts):
                out.ups.append(UpObjects(len(out.ups) + 1, *counts))
            stage = step.stage
            if stage is not None and stage.complete and not any(counts):
                out.complete = True
                return out
            blocker = stage.blocker if stage is not None else None
            if blocker is not None and (not waits_for_cluster(blocker.code) or idle >= IDLE_UPS):
                out.blocked = f"{blocker.code}: {blocker.message}"
                return out
        out.blocked = f"not complete after {MAX_UPS} pulumi ups"
        return out
    finally:
        runner.close()
