"""The one reconcile cycle every shell runs: observe -> reconcile -> apply -> act.

A component's ``pulumi up`` (``components/base.py``; controller mode's in
``components/controller.py``), a simulator engine's step (``sim/driver/engines.py``), the
steady-state expansion (``sim/driver/expansion.py``), ``pulumi-lws status`` and the test
harnesses (``tests/support/``) all call :func:`cycle`; they differ only in the ports they pass:

* ``observer`` (:class:`~pulumi_lws.core.contract.ports.Observer`): where the snapshot comes from (a live
  cluster, the simulated one, a test fake);
* ``apply(observed)``: how the reconcile's manifests are declared (the component registers
  Pulumi children, the simulator applies them like Pulumi with a crash fraction); None: nothing
  is declared (``status``, ``render --stage steady``'s final read);
* ``actuator`` (:class:`~pulumi_lws.core.contract.ports.Actuator`) or ``act(namespace, stage)``: how the
  stage's imperative actions run (``act`` when the caller decides per stage, e.g. a preview that
  only lists them); neither: no action runs.

Invariants:
* the cluster is read exactly once, with the API's own :class:`~pulumi_lws.core.contract.ports.Scope`, and
  the reconcile sees only that snapshot — the :class:`Cycle` carries it, so a caller that reports
  on the plan (``status``, the component's ``status`` output, controller mode's predicted table)
  reads the observation the plan came from instead of observing again. A simulator trace row is
  the one reader that observes again, on purpose: it shows the cluster after the apply and the
  actions (``sim/driver/runner.py``, ``Runner._view``);
* nothing is declared when observe or reconcile raises, and no action runs when apply raises.
  ``apply`` runs before the actions here, but that is not the order the cluster sees under a real
  Pulumi engine: the component's ``apply`` registers children, and ``register_resource`` only
  schedules the RPC (the SDK sends it once the program yields to its event loop, which the
  component's ``__init__`` does not do between registering and acting), so the actions run
  during the program, **before** the engine applies any child this reconcile registered. The
  simulator's engines and the harnesses apply first. A plan must therefore be safe in both
  orders: an action must not rely on this reconcile's objects being applied, and an object must
  not rely on this reconcile's actions having run (adoption holds a rollout whose first move
  would need them: ``core.features.adoption``);
* with ``actuator`` the actions run only when the stage has some (an empty stage makes no call).

The cycle holds no state and branches on no kind: it is generic over the Workload contract.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

from pulumi_lws.core.contract.ports import Actuator, Observer, Scope
from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.core.contract.stage import Stage
from pulumi_lws.core.contract.workload import Reconciled, Workload
from pulumi_lws.core.features import fit
from pulumi_lws.core.features.control import capacity_checked

A = TypeVar("A")


@dataclass(frozen=True)
class Cycle(Generic[A]):
    """One cycle's observation, reconcile and what applying and acting returned.

    ``applied``: the apply port's result (None when nothing was applied); ``executed``: one result
    line per action run, in order (empty when no action ran)."""

    scope: Scope
    snapshot: Snapshot
    reconciled: Reconciled
    namespace: str
    applied: A | None = None
    executed: tuple[str, ...] = ()

    @property
    def stage(self) -> Stage:
        return self.reconciled.stage


#: declares a cycle's manifests (it sees the observation and the reconcile); returns what it applied
Apply = Callable[[Cycle[Any]], A]
#: runs (or lists) a stage's actions in ``namespace``; returns one line per action
Act = Callable[[str, Stage], Sequence[str]]


def cycle(
    workload: Workload,
    spec: Any,
    options: Any,
    observer: Observer,
    actuator: Actuator | None = None,
    *,
    apply: Apply[A] | None = None,
    act: Act | None = None,
    nodes: bool | None = None,
    check_capacity: bool | None = None,
) -> Cycle[A]:
    """Observe ``spec``'s scope (``nodes`` as :meth:`Workload.scope`), reconcile it with
    ``options``, apply the result, then run its actions (module docstring).

    ``check_capacity``: the opt-in capacity check (:mod:`pulumi_lws.core.features.fit`; None: the
    spec's ``pulumi-lws.io/check-capacity`` annotation, where the component argument is written).
    When on, the scope also reads the cluster's Nodes and bound pods and a stage whose new pods do
    not fit is held with the ``insufficient-capacity`` blocker; when off, nothing of it runs."""
    checked = capacity_checked(workload.kind, spec, check_capacity)
    scope = workload.scope(spec, nodes=nodes)
    if checked:
        scope = replace(scope, capacity=True)
    snapshot = observer.observe(scope)
    reconciled = workload.reconcile(spec, snapshot, options)
    if checked:
        reconciled = fit.check(
            reconciled,
            snapshot,
            workload.budgets(spec),
            held_view=lambda stage: workload.held_stage(spec, snapshot, stage),
        )
    namespace, _ = workload.identity(spec)
    observed: Cycle[A] = Cycle(scope, snapshot, reconciled, namespace)
    applied = apply(observed) if apply is not None else None
    stage = reconciled.stage
    if act is not None:
        executed: Sequence[str] = act(namespace, stage)
    elif actuator is not None and stage.actions:
        executed = actuator.execute(namespace, list(stage.actions)) or []
    else:
        executed = ()
    return replace(observed, applied=applied, executed=tuple(executed))
