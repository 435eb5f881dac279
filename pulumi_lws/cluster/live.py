"""The live cluster: observer + actuator over the Kubernetes API with lightkube.

One reconcile reads at most one LIST per kind of its :class:`~pulumi_lws.core.contract.ports.Scope`
whatever the number of groups (the kinds and the selector are the API's own scope; the resource
of each kind comes from the kinds the registered APIs observe, ``Workload.observes``, with their
API versions), plus Nodes when asked. An optional kind (``KindRef.optional``: PodGroup, Workload,
a CRD) whose API the cluster does not serve is skipped, as API discovery tells (:mod:`.discovery`:
``GET /apis`` once, then the group-version's resource list; no LIST is sent); a kind every cluster
serves (StatefulSet, Deployment, Pod, Service, ControllerRevision, Node, Event) is never "not
installed": a 404 on its LIST (or a body that is no Kubernetes list) fails the observe as a
cluster fault, naming the server and the request.

``PodGroup`` names two APIs: ``scheduling.k8s.io/v1beta1`` (the kubernetes gang provider) and
Volcano's ``scheduling.volcano.sh/v1beta1``; ``gang_provider`` picks which one a bare
``PodGroup`` of a Scope means (an API with a fixed provider builds its backend with it:
``Workload.gang``); the qualified names ``PodGroup.scheduling.volcano.sh`` and
``PodGroup.scheduling.k8s.io`` always mean one API. Actions are precise patches: ``label``/``annotate`` are merge patches
on metadata, ``ungate`` removes exactly one scheduling gate with a JSON patch guarded by a
``test`` op, ``set-condition`` patches the pod's status subresource, ``finalize`` adds/removes
entries of ``metadata.finalizers`` with a JSON patch guarded by ``test`` ops (uid, and each
removed entry's position), ``delete`` sends ``propagationPolicy`` and ``preconditions.uid`` so
a recreated object is never deleted.

``Action.params`` by verb follow :class:`pulumi_lws.core.contract.stage.Action`. ``Action.uid`` guards
every verb.

The resource class of each kind is :mod:`.resources`'s; the request each verb
sends is :class:`~.verbs.VerbHandlers`'s (a base of :class:`LiveCluster`).
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import httpx2 as httpx
from lightkube import Client, operators
from lightkube.config.kubeconfig import KubeConfig
from lightkube.resources.core_v1 import Node, Pod
from lightkube.types import PatchType

from pulumi_lws.cluster import kubeconfig as kubeconfig_source
from pulumi_lws.cluster import settle
from pulumi_lws.cluster.discovery import Discovery
from pulumi_lws.cluster.resilience import (
    RetryPolicy,
    describe_failure,
    is_kubernetes_not_found,
    is_stale_precondition,
    is_transient,
    outcome_unknown,
    request_words,
    status_code,
)
from pulumi_lws.cluster.resources import CORE_REFS, kind_refs, resource_of, to_plain
from pulumi_lws.cluster.resources import lightkube_labels as _lightkube_labels
from pulumi_lws.cluster.verbs import VerbHandlers
from pulumi_lws.cluster.verbs import rfc3339 as _rfc3339
from pulumi_lws.core.contract.facts import KindRef
from pulumi_lws.core.contract.ports import ActionError, ClusterError, ObserveError, Scope, selector_text
from pulumi_lws.core.contract.snapshot import NodeCapacity, Snapshot
from pulumi_lws.core.contract.stage import Action

FIELD_MANAGER = "pulumi-lws"
log = logging.getLogger("pulumi_lws.cluster")


def load_kubeconfig(kubeconfig: str | None) -> KubeConfig:
    """A kubeconfig from a path or inline content (YAML or JSON); None: the environment's
    (:func:`pulumi_lws.cluster.kubeconfig.load`; raises its KubeconfigError)."""
    return kubeconfig_source.load(kubeconfig)[0]


#: seconds every request of a client built by :meth:`LiveCluster.from_kubeconfig` may take (a
#: slow or hung API server is then a timeout, retried, then one error; lightkube's default is 10)
REQUEST_TIMEOUT = 10.0


#: what the capacity check's LISTs are for, named in a 403's error (the missing permission)
CAPACITY_RBAC = (
    "the capacity check, check_capacity / --check-capacity, reads every Node and every pod: grant list on "
    "nodes and pods cluster-wide, `pulumi-lws render --rbac --check-capacity` prints the ClusterRole, or turn "
    "the check off"
)


class LiveCluster(VerbHandlers):
    """Observer + Actuator for a real API server (see module docstring)."""

    def __init__(
        self,
        client: Client,
        *,
        gang_provider: str = "kubernetes",
        now: Callable[[], float] | None = None,
        retry: RetryPolicy | None = None,
        context: str | None = None,
    ) -> None:
        self.client = client
        #: the API (version, plural, optional or not) of each kind name a scope may use
        self.refs: dict[str, KindRef] = {**kind_refs(gang_provider), **CORE_REFS}
        self.kinds = {name: resource_of(ref) for name, ref in self.refs.items() if name not in CORE_REFS}
        self._now = now or (lambda: datetime.datetime.now(datetime.timezone.utc).timestamp())
        #: transient failures (429, 5xx, timeouts) are retried by this policy (:mod:`.resilience`)
        self.retry = retry or RetryPolicy()
        #: the kube context every error names (default: the client's configured context)
        self.context = context or getattr(getattr(client, "config", None), "context_name", None) or "?"
        #: the API server URL every error names with the context
        self.server = kubeconfig_source.server_of(getattr(client, "config", None))
        #: what the server serves, asked once (:mod:`.discovery`); shared by every check and LIST of this backend
        self.discovery = Discovery(self._discovery_get, lambda: self.where, lambda: self.retry)

    @property
    def where(self) -> str:
        """``cluster context 'NAME' at URL``: the cluster every error message names."""
        return f"cluster context {self.context!r}" + (f" at {self.server}" if self.server != "?" else "")

    @classmethod
    def from_kubeconfig(
        cls, context: str | None = None, *, kubeconfig: str | None = None, gang_provider: str = "kubernetes"
    ) -> LiveCluster:
        """The cluster of ``context`` (default: the current one) in ``kubeconfig`` (a path or the
        file's YAML/JSON content, as the provider's ``kubernetes:kubeconfig`` accepts), else in
        ``KUBECONFIG`` / ``~/.kube/config`` / the in-cluster config."""
        config, source = kubeconfig_source.load(kubeconfig)
        single = kubeconfig_source.select(config, source, context)
        try:  # the client loads certificates and keys now: a bad one is the kubeconfig's fault
            client = Client(config=single, field_manager=FIELD_MANAGER, timeout=httpx.Timeout(REQUEST_TIMEOUT))
        except Exception as exc:
            raise kubeconfig_source.KubeconfigError(
                source, f"context {single.context_name!r} cannot be used ({type(exc).__name__}: {exc})"
            ) from exc
        return cls(client, gang_provider=gang_provider)

    # ---- Observer --------------------------------------------------------------------------
    def observe(self, scope: Scope) -> Snapshot:
        """One LIST per kind of ``scope`` (selected server-side, checked again client-side), plus
        one for Nodes when the scope asks, plus (the opt-in capacity check, ``scope.capacity``) one
        for Nodes and one for the pods of every namespace (``Snapshot.capacity``)."""
        objs: list[dict[str, Any]] = []
        for kind in scope.kinds:
            selector = scope.selector_for(kind)
            objs += [
                o
                for o in self._list(
                    kind,
                    self._res(kind),
                    api=self.refs.get(kind),
                    namespace=scope.namespace,
                    labels=_lightkube_labels(selector),
                    selected_by=selector_text(selector),
                )
                if scope.selects(o, kind)
            ]
        nodes = (
            self._list(
                "Node", Node, api=CORE_REFS["Node"], why=CAPACITY_RBAC if scope.capacity and not scope.nodes else ""
            )
            if (scope.nodes or scope.capacity)
            else []
        )
        if scope.nodes:
            objs += nodes
        capacity = None
        if scope.capacity:
            # as kube-scheduler lists them: bound, not terminal (server-side; NodeCapacity.of filters again)
            bound = {
                "status.phase": operators.not_in(["Succeeded", "Failed"]),
                "spec.nodeName": operators.not_equal(""),
            }
            pods = self._list("Pod", Pod, api=self.refs["Pod"], namespace="*", fields=bound, why=CAPACITY_RBAC)
            capacity = NodeCapacity.of(nodes, pods)
        return Snapshot.of(objs, now=self._now(), capacity=capacity)

    def list_resource(
        self, kind: str, res: Any, namespace: str | None = None, *, api: KindRef | None = None
    ) -> list[dict[str, Any]]:
        """Every object of ``res`` (a lightkube resource class, e.g. a generic CR) in
        ``namespace``, with the observer's retries and errors; ``api`` optional: [] when API
        discovery says it is not served (no ``api``: a kind every cluster serves)."""
        return self._list(kind, res, api=api, **({"namespace": namespace} if namespace else {}))

    def _list(
        self,
        kind: str,
        res: Any,
        *,
        api: KindRef | None = None,
        why: str = "",
        selected_by: str | None = None,
        **kwargs: Any,
    ) -> list[dict[str, Any]]:
        """Every object of one LIST (all pages), retried on transient failures; a LIST that still
        fails raises :class:`ObserveError`, so nothing is planned from a partial read. ``api``: the
        kind's API; an optional one is first looked up by discovery (not served: [] and no LIST),
        anything else is served by every cluster, so a 404 is a fault. ``why``: what needs this
        LIST, named when the answer is 403 (the missing permission); ``selected_by``: the label
        selector as errors name it (default: from ``labels``)."""
        served = self.discovery.serves(api.api_version, api.kind, api.resource) if api and api.optional else True
        if served is False:
            return []  # not installed (discovery): nothing of this kind
        namespace = kwargs.get("namespace")
        where = f"LIST {kind}" + (
            " in every namespace" if namespace == "*" else f" in namespace {namespace}" if namespace else ""
        )
        if selected_by is None and kwargs.get("labels"):
            selected_by = ",".join(
                k if not isinstance(v, str) else f"{k}={v}" for k, v in sorted(kwargs["labels"].items())
            )
        if selected_by:
            where += f" selected by {selected_by}"
        try:
            for attempt in self.retry.retrying(f"{where} (context {self.context})"):
                with attempt:
                    return [to_plain(o, kind) for o in self.client.list(res, **kwargs)]
        except Exception as exc:  # lightkube raises ApiError, httpx errors or timeouts
            if status_code(exc) == 404 and served is None and is_kubernetes_not_found(exc):
                return []  # discovery refused, the API server's own 404 for an optional kind: not installed
            missing = ""
            if why and status_code(exc) == 403:
                scope_words = "cluster-wide" if namespace in (None, "*") else f"in namespace {namespace}"
                missing = f"; missing permission: list {res.__name__.lower()}s {scope_words} ({why})"
            raise ObserveError(
                f"observe failed: {where} on {self.where}: {describe_failure(exc)}{self._not_found(exc, api)}"
                f"{missing}{self._attempts_note(exc)}; nothing was planned from the partial read "
                "(the next `pulumi up` observes again)"
            ) from exc
        raise AssertionError("unreachable: tenacity either returns or raises")  # pragma: no cover

    # ---- Actuator --------------------------------------------------------------------------
    def execute(self, namespace: str, actions: Sequence[Action]) -> list[str]:
        """Run ``actions`` in order (see :class:`~pulumi_lws.core.contract.ports.Actuator`): each line is
        logged as it is applied; the first failure raises :class:`ActionError` naming the action,
        the context and the HTTP status, with the lines applied before it."""
        lines: list[str] = []
        for index, action in enumerate(actions):
            try:
                line = self._execute_one(namespace, action)
            except ActionError as exc:
                raise exc.within(lines, index + 1, len(actions)) from exc
            log.info("%s", line)
            lines.append(line)
        return lines

    def _execute_one(self, namespace: str, action: Action) -> str:
        """One action with bounded retries; a write whose outcome is unknown (timeout, 500) is
        settled by re-reading the object before it is sent again (:mod:`.settle`)."""
        handler = self._handlers().get(action.verb)
        if handler is None:
            raise ValueError(f"unknown action verb {action.verb!r}")
        res = self._res(action.kind)
        target = f"{action.verb} {action.kind}/{namespace}/{action.name}"
        unknown: BaseException | None = None  # the failure that left a previous attempt's outcome unknown
        try:
            for attempt in self.retry.retrying(f"{target} (context {self.context})"):
                with attempt:
                    try:
                        if unknown is not None and self._effect_visible(res, namespace, action):
                            return f"{target}: done (settled by re-reading after {describe_failure(unknown)})"
                        return handler(res, namespace, action)
                    except Exception as exc:
                        unknown = exc if unknown is None and outcome_unknown(exc) else unknown
                        raise
        except Exception as exc:  # lightkube raises ApiError, httpx errors or timeouts
            code = status_code(exc)
            if unknown is not None and is_transient(exc) and self._landed_after_all(res, namespace, action):
                return f"{target}: done (settled by re-reading after {describe_failure(unknown)}; retries exhausted)"
            if code == 404:
                return f"skipped {action.describe()}: HTTP 404, the object is gone (the next reconcile re-plans)"
            if is_stale_precondition(exc):
                return (
                    f"skipped {action.describe()}: HTTP {code}, the object changed since it was observed "
                    "(uid/resourceVersion/test precondition; the next reconcile re-plans)"
                )
            raise ActionError(
                f"{target} failed on {self.where}: {describe_failure(exc)}{self._attempts_note(exc)}",
                action=action,
                status=code,
            ) from exc
        raise AssertionError("unreachable: tenacity either returns or raises")  # pragma: no cover

    def _handlers(self) -> dict[str, Callable[[Any, str, Action], str]]:
        """verb -> handler(resource class, namespace, action) -> result line."""
        return {
            "label": self._label,
            "annotate": self._annotate,
            "ungate": self._ungate,
            "set-condition": self._set_condition,
            "finalize": self._finalize,
            "delete": self._delete,
            "disown": self._disown,
            "patch-status": self._patch_status,
        }

    def _effect_visible(self, res: Any, namespace: str, action: Action) -> bool:
        """Re-read the action's object: does it already show the action's effect?"""
        try:
            obj: dict[str, Any] | None = to_plain(self.client.get(res, action.name, namespace=namespace), action.kind)
        except Exception as exc:
            if status_code(exc) != 404:
                raise
            obj = None
        return bool(settle.effect_visible(action, obj))

    def _landed_after_all(self, res: Any, namespace: str, action: Action) -> bool:
        """The retries are exhausted but an attempt's outcome was unknown: one last re-read
        (best effort; a failing read means "not known to have landed")."""
        try:
            return self._effect_visible(res, namespace, action)
        except Exception:
            return False

    def _not_found(self, exc: BaseException, api: KindRef | None) -> str:
        """What a 404 on a LIST means, for its error ('' for any other failure)."""
        if status_code(exc) != 404:
            return ""
        request = request_words(exc)
        head = f" ({request})" if request else ""
        what = f"{api.api_version} {api.kind}" if api else "this API"
        if api is None or not api.optional:
            return (
                f"{head}; every Kubernetes API server serves {what}, so {self.server} is not one, or something in "
                "front of it answers for it (a proxy, a wrong path in the kubeconfig's server URL)"
            )
        if not is_kubernetes_not_found(exc):
            return f"{head}; the 404 is no Kubernetes Status (a proxy's or another server's answer)"
        return f"{head}; API discovery lists {what}, yet its LIST was not found (removed meanwhile?)"

    def _attempts_note(self, exc: BaseException) -> str:
        return f" (gave up after {self.retry.attempts} attempts)" if is_transient(exc) else ""

    def _res(self, kind: str) -> Any:
        if kind == "Node":
            return Node
        if kind not in self.kinds:
            raise ValueError(f"no API resource for kind {kind!r}")
        return self.kinds[kind]

    def _discovery_get(self, path: str) -> Any:
        # lightkube has no discovery call: its httpx client (base URL and auth of the context)
        return self.client._client._client.get(path)

    def serves_api(self, api_version: str, kind: str, plural: str | None = None) -> bool | None:
        """API discovery (:class:`~.discovery.Discovery`, asked once per backend): whether the
        server serves ``kind`` at ``api_version``; None when it cannot tell (401/403). An answer
        no API server gives raises :class:`ClusterError`."""
        return self.discovery.serves(api_version, kind, plural)

    def serves_crd(self, name: str) -> bool | None:
        """Whether the cluster has CustomResourceDefinition ``name`` (controller mode): one GET;
        None when it cannot tell (e.g. 403: no permission to read CRDs)."""
        from lightkube.resources.apiextensions_v1 import CustomResourceDefinition

        try:
            self.client.get(CustomResourceDefinition, name)
            return True
        except Exception as exc:
            code = status_code(exc)
            if code == 404:
                return False
            if code in (401, 403):
                return None
            raise ClusterError(f"GET CustomResourceDefinition {name} on {self.where}: {describe_failure(exc)}") from exc

    # ---- Events (pulumi_lws.core.features.events.EventSink) -------------------------------------------
    def list_events(self, namespace: str, selector: Mapping[str, str]) -> list[dict[str, Any]]:
        """One LIST of the workload's Events (by the labels pulumi-lws puts on them)."""
        from lightkube.resources.core_v1 import Event

        return self._list("Event", Event, api=CORE_REFS["Event"], namespace=namespace, labels=dict(selector))

    def record_events(self, namespace: str, events: Sequence[Any]) -> list[str]:
        """Create each Event; one that exists (409) is bumped with a merge patch (count + 1)."""
        from lightkube.codecs import from_dict
        from lightkube.resources.core_v1 import Event

        from pulumi_lws.core.features.events import bumped

        out, now = [], _rfc3339(self._now())
        for event in events:
            head = f"event {event.reason} {event.regarding['kind']}/{event.regarding['name']}"
            try:
                self.client.create(from_dict(event.manifest(namespace, now)), namespace=namespace)  # type: ignore[type-var]  # lightkube's generic resource classes are both namespaced and global
                out.append(f"{head}: recorded")
                continue
            except Exception as exc:  # lightkube raises ApiError, httpx errors or timeouts
                if status_code(exc) != 409:
                    raise ClusterError(f"{head} on {self.where}: {describe_failure(exc)}") from exc
            if not event.bump:
                continue
            existing = to_plain(self.client.get(Event, event.name, namespace=namespace), "Event")
            patch = bumped(existing, event, now)
            self.client.patch(Event, event.name, patch, namespace=namespace, patch_type=PatchType.MERGE)
            out.append(f"{head}: count {patch['count']}")
        return out
