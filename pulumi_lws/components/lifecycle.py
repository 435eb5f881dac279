"""What a workload component passes to its children besides ``parent=self`` (Pulumi options a
platform team applies from outside), and the delete hook that makes ``pulumi destroy`` complete.

* ``depends_on``: the resources the component's inputs came from (a Namespace is created before
  anything in it, and deleted after);
* ``retain_on_delete``: Pulumi does not inherit it from a parent (``protect``, ``providers`` and
  ``transforms`` are inherited by the SDK or the engine), so the component copies it to every child;
* ``hooks``: a named ``before_delete`` :class:`pulumi.ResourceHook` on every StatefulSet and
  Deployment that releases the pods the project retained with its own finalizer
  (``Workload.release_retained``: LeaderWorkerSet's restart-budget finalizer on a group whose
  restart budget is exhausted). Without it the finalizer keeps those pod objects forever,
  terminating, after their StatefulSet (deleted in the background: ``core.k8s.manifests.
  WORKLOAD_ANNOTATIONS``) is gone; a later release still finds them by the workload's labels.
  Delete hooks run only under
  ``pulumi destroy --run-program`` (Pulumi refuses a plain ``destroy`` of a stack whose resources
  carry delete hooks, pulumi#19933), which is what the docs tell users to run. The hook runs once
  per deleted StatefulSet/Deployment, but observes the workload once per engine run
  (:class:`RetainedRelease`): scaling down or destroying N groups costs one observe, not N.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import pulumi

from pulumi_lws.core.contract.ports import Scope
from pulumi_lws.core.contract.workload import Workload

#: Kinds whose deletion must first release retained pods (their pods carry the finalizer).
RELEASE_BEFORE_DELETE = ("StatefulSet", "Deployment")
#: the reason every release action carries
RELEASE_REASON = "pulumi destroy: release the retained pod"


def release_retained_pods(backend: Any, namespace: str, scope: Scope, workload: Workload) -> list[str]:
    """Release every pod of ``scope`` the API retained (``workload.release_retained``: uid-guarded
    finalizer removals); the lines the actuator reports. Idempotent: a second call finds nothing."""
    snapshot = backend.observer.observe(scope)
    actions = workload.release_retained(snapshot, RELEASE_REASON)
    return list(backend.actuator.execute(namespace, list(actions)) or []) if actions else []


class RetainedRelease:
    """The delete hook's work for one component in one engine run (the hook, and so this object,
    is made by the run's reconcile; the engine calls it before deleting each StatefulSet and
    Deployment child, N times when N groups go).

    The first call observes the workload's scope and releases every pod the API retained
    (:func:`release_retained_pods`); the calls after it send nothing and return no line. That is
    exact because the release is of the whole scope, not of the deleted object's pods, and only
    the project's own actuator adds the finalizer (a reconcile's ``retain``): after a release
    nothing of the scope carries it until that actuator writes again — :meth:`wrote`, which the
    component calls after running its actions, makes the next call observe again. A release that
    fails (the actuator's error propagates to the engine) is tried whole on the next call. Calls
    the engine makes concurrently are serialised.
    """

    def __init__(self, backend: Any, namespace: str, scope: Scope, workload: Workload) -> None:
        self.backend, self.namespace, self.scope, self.workload = backend, namespace, scope, workload
        self._lock = threading.Lock()
        self._released = False
        #: how many times the scope was observed (one per engine run unless the actuator wrote)
        self.observes = 0

    def wrote(self) -> None:
        """The component's actuator wrote to the cluster (it may have retained pods): observe again."""
        with self._lock:
            self._released = False

    def __call__(self) -> list[str]:
        with self._lock:
            if self._released:
                return []
            self.observes += 1
            lines = release_retained_pods(self.backend, self.namespace, self.scope, self.workload)
            self._released = True
            return lines


def release_hook(component: str, release: Callable[[], list[str]]) -> pulumi.ResourceHook:
    """The named ``before_delete`` hook (delete hooks must be named: the engine finds them again
    at destroy time by name)."""

    def run(args: pulumi.ResourceHookArgs) -> None:
        for line in release():
            pulumi.log.info(f"{args.name}: {line}")

    return pulumi.ResourceHook(f"{component}-release-retained-pods", run)


def child_options(
    opts: pulumi.ResourceOptions | None, dependencies: Sequence[pulumi.Resource], hook: pulumi.ResourceHook | None
) -> Callable[[str], pulumi.ResourceOptions]:
    """``kind -> options`` merged into each child's own (``parent`` and its ``depends_on``)."""
    retain = opts.retain_on_delete if opts is not None else None

    def for_kind(kind: str) -> pulumi.ResourceOptions:
        hooks = (
            pulumi.ResourceHookBinding(before_delete=[hook])
            if hook is not None and kind in RELEASE_BEFORE_DELETE
            else None
        )
        return pulumi.ResourceOptions(depends_on=list(dependencies) or None, retain_on_delete=retain, hooks=hooks)

    return for_kind


def with_dependencies(
    opts: pulumi.ResourceOptions | None, dependencies: Sequence[pulumi.Resource]
) -> pulumi.ResourceOptions | None:
    """The component's own options plus ``depends_on`` the resources its inputs came from."""
    if not dependencies:
        return opts
    return pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=list(dependencies)))
