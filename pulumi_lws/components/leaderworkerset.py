"""``lws:index:LeaderWorkerSet``: one Pulumi component = one LeaderWorkerSet, one stage per ``up``.

Flow of ``__init__`` (each ``pulumi up`` is one reconcile):

1. build and validate the spec from ``args`` — a :class:`SpecError` is raised *before* any child
   is registered, so nothing is ever half-applied;
2. observe the cluster through the installed backend (live cluster by default, the simulator
   or a test fake under :func:`pulumi_lws.backend.use_backend`);
3. :func:`pulumi_lws.lws.reconcile.reconcile` picks exactly one safe stage and renders its objects;
4. every manifest becomes a pulumi_kubernetes resource with ``parent=self``, a deterministic
   logical name ``<component>-<kind>-<metadata.name>`` and ``depends_on`` the children
   ``Reconciled.dependencies`` lists for it (e.g. worker StatefulSets on the leader StatefulSet);
5. ``stage.actions`` run through the backend's actuator on update only; in preview they and the
   stage table are logged.

Providers passed on the component (``opts=ResourceOptions(providers=[k8s_provider])``) reach
every child through ``parent=self``.
"""

import contextlib
from typing import Any, Callable, Iterator, Optional, TypedDict

import pulumi

from pulumi_lws.lws import reconcile as _reconcile_module
from pulumi_lws.backend import current_backend
from pulumi_lws.components import _outputs
from pulumi_lws.components._resources import register_children
from pulumi_lws.components._spec import build_spec
from pulumi_lws.lws.rollout.placement import needs_nodes
from pulumi_lws.lws.reconcile import Reconciled
from pulumi_lws.core.stage import Stage

TYPE = "lws:index:LeaderWorkerSet"


class RolloutArgs(TypedDict, total=False):
    """``spec.rolloutStrategy.rollingUpdateConfiguration``."""

    max_unavailable: pulumi.Input[str]
    """Groups that may be unavailable during an update: an integer ("2") or a percent ("25%"). Default 1."""
    max_surge: pulumi.Input[str]
    """Extra groups created above replicas during an update: an integer or a percent. Default 0."""
    partition: pulumi.Input[int]
    """Groups with ordinal >= partition get the new template (Ordinal mode). Default 0."""


class LeaderWorkerSetArgs(TypedDict, total=False):
    """Arguments of a LeaderWorkerSet: an upstream ``manifest``, individual fields, or both (fields win)."""

    manifest: pulumi.Input[Any]
    """An upstream ``leaderworkerset.x-k8s.io/v1`` LeaderWorkerSet manifest (object or YAML text)."""
    name: pulumi.Input[str]
    """``metadata.name`` of the LeaderWorkerSet (default: the manifest's, else the resource name)."""
    namespace: pulumi.Input[str]
    """Namespace of every object (default: the manifest's, else ``default``)."""
    replicas: pulumi.Input[int]
    """Number of leader+worker groups."""
    size: pulumi.Input[int]
    """Pods per group, leader included."""
    leader_template: pulumi.Input[Any]
    """Pod template of the leader (default: the worker template)."""
    worker_template: pulumi.Input[Any]
    """Pod template of the workers."""
    rollout: pulumi.Input[RolloutArgs]
    """Rolling update budgets (maxUnavailable, maxSurge, partition)."""
    partition: pulumi.Input[int]
    """Shortcut for ``rollout.partition``."""
    startup_policy: pulumi.Input[str]
    """``LeaderCreated`` (default) or ``LeaderReady``."""
    subdomain_policy: pulumi.Input[str]
    """``Shared`` (default) or ``UniquePerReplica``."""
    group_identity: pulumi.Input[str]
    """``Ordinal`` (default, leader StatefulSet) or ``Hash`` (leader Deployment)."""
    group_replacement_policy: pulumi.Input[str]
    """``PostTermination`` (default) or ``Immediate``."""
    restart_policy: pulumi.Input[str]
    """``RecreateGroupOnPodRestart`` (default), ``RecreateGroupAfterStart`` or ``None``."""
    update_order: pulumi.Input[str]
    """``ScaleFirst`` (upstream, default) or ``RolloutFirst`` for a template change combined with a scale-up."""
    gang_provider: pulumi.Input[str]
    """Gang scheduling objects for ``spec.scheduling``: ``kubernetes`` (default) or ``volcano``."""


#: Called with (component name, stage) after each reconcile; the mock-engine driver collects stages here.
_stage_listeners: list[Callable[[str, Stage], None]] = []


@contextlib.contextmanager
def on_stage(listener: Callable[[str, Stage], None]) -> Iterator[None]:
    """Receive every stage computed by LeaderWorkerSet components while the block runs."""
    _stage_listeners.append(listener)
    try:
        yield
    finally:
        _stage_listeners.remove(listener)


def reconcile(*args: Any, **kwargs: Any) -> Reconciled:
    """Indirection so tests can monkeypatch ``pulumi_lws.lws.reconcile.reconcile``."""
    return _reconcile_module.reconcile(*args, **kwargs)


class LeaderWorkerSet(pulumi.ComponentResource):
    """A LeaderWorkerSet (leader + workers per group, group-level rolling updates) without an operator.

    Each ``pulumi up`` observes the cluster and applies exactly one safe rollout stage; run
    ``pulumi up`` again (or ``pulumi-lws rollout``) until ``stage.complete`` is true.
    """

    leader_name: pulumi.Output[str]
    """Name of the leader StatefulSet (Ordinal) or Deployment (Hash)."""
    service_name: pulumi.Output[str]
    """Name of the headless Service (the shared one; per-group Services add ``-<i>``)."""
    selector: pulumi.Output[str]
    """Label selector of the leader pods, for a HorizontalPodAutoscaler (upstream hpaPodSelector)."""
    revision: pulumi.Output[str]
    """Target template revision key."""
    stage: pulumi.Output[dict[str, Any]]
    """This stage: policy, replicas, partition, case, complete, groups (one char per group: U o u x -)."""
    blocker: pulumi.Output[Optional[str]]
    """Why the rollout cannot advance ("code: message"), or null."""
    remaining_stages: pulumi.Output[list[dict[str, Any]]]
    """Predicted stages after this one (replicas, partition, groups)."""
    actions: pulumi.Output[list[str]]
    """Imperative actions of this stage (executed on update only)."""
    status: pulumi.Output[dict[str, Any]]
    """replicas, readyReplicas, updatedReplicas, hpaPodSelector and LWS conditions."""

    def __init__(self, name: str, args: LeaderWorkerSetArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        built = build_spec(name, args)  # raises SpecError before anything is registered
        super().__init__(TYPE, name, {}, opts)
        lws = built.lws
        self._backend = current_backend(**kubernetes_provider_settings(), gang_provider=built.options.gang_provider)
        snapshot = self._backend.observer.observe(lws.namespace, lws.name, nodes=needs_nodes(built.lws))
        result = reconcile(lws, snapshot, built.options)
        stage = result.stage
        self.child_resources = self._register_children(name, result.manifests, result.dependencies)
        action_lines = self._run_actions(lws.namespace, stage)
        self._publish(name, stage)
        status = _outputs.lws_status(lws, snapshot, stage)
        outputs = {
            "leader_name": lws.name,
            "service_name": lws.name,
            "selector": _outputs.hpa_selector(lws),
            "revision": stage.target_revision,
            "stage": _outputs.stage_summary(stage),
            "blocker": _outputs.blocker_text(stage),
            "remaining_stages": _outputs.remaining_stages(stage),
            "actions": action_lines,
            "status": status,
        }
        for key, value in outputs.items():
            setattr(self, key, pulumi.Output.from_input(value))
        self.register_outputs(outputs)

    def _register_children(self, name: str, manifests, dependencies) -> list[pulumi.CustomResource]:
        """Register every manifest with ``parent=self`` and ``depends_on`` its declared dependencies.

        ``dependencies`` is ``Reconciled.dependencies`` (the one place apply order is decided:
        worker StatefulSets after the leader StatefulSet, workloads after their gang objects,
        Service and ControllerRevision). Pulumi orders by dependencies, not by registration order,
        and never starts a dependent before its dependencies succeeded — so a crash half-way
        through ``pulumi up`` never lands a dependent without what it depends on. Manifests are
        registered in their given order, which lists every dependency before its dependents.
        """
        return register_children(name, manifests, dependencies, self)

    def _run_actions(self, namespace: str, stage: Stage) -> list[str]:
        """Execute on update; in preview only log the stage table and what would run."""
        planned = [a.describe() for a in stage.actions]
        if pulumi.runtime.is_dry_run():
            pulumi.log.info(f"{stage.summary()}\n{_outputs.stage_table(stage)}", resource=self)
            for line in planned:
                pulumi.log.info(f"would {line}", resource=self)
            return planned
        pulumi.log.info(stage.summary(), resource=self)
        if not stage.actions:
            return []
        results = self._backend.actuator.execute(namespace, list(stage.actions))
        for line in results:
            pulumi.log.info(line, resource=self)
        return list(results) if results else planned

    def _publish(self, name: str, stage: Stage) -> None:
        for listener in list(_stage_listeners):
            listener(name, stage)


def kubernetes_provider_settings() -> dict[str, Optional[str]]:
    """The cluster the default pulumi-kubernetes provider targets: the stack's ``kubernetes:context``
    and ``kubernetes:kubeconfig`` config (unset: the current kube context), so the component
    observes the same cluster it registers objects in."""
    config = pulumi.Config("kubernetes")
    return {"context": config.get("context"), "kubeconfig": config.get("kubeconfig")}
