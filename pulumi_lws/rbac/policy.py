"""The rules: kinds, grants, per-mode grant sets and :func:`policy` (pure; :mod:`pulumi_lws.rbac`
says what each mode needs and why).

Nothing here is per API: what an API renders, acts on, owns upstream and which gang provider its
PodGroups are come from its registered :class:`~pulumi_lws.core.contract.workload.Workload` facts
(``rbac``, ``gang``, ``observes``: :func:`api_actions`, :func:`api_renders`,
:func:`upstream_owns_unrendered`, :func:`fixed_gang_provider`); :data:`KINDS` holds the
Kubernetes kinds every API may use, and an API's own kinds (a custom resource it renders or
observes) join it from its facts."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pulumi_lws.core.contract.errors import FieldError, SpecError
from pulumi_lws.core.contract.facts import KindRef

RECONCILE = "reconcile"
PULUMI_KUBERNETES = "pulumi-kubernetes"
#: the components' ``mode`` values (:data:`pulumi_lws.components.controller.MODES`, checked by a test)
OPERATOR_FREE, CONTROLLER = "operator-free", "controller"
MODES = (OPERATOR_FREE, CONTROLLER)


@dataclass(frozen=True)
class Kind:
    """Where a kind lives in the API: group, plural, and whether it is namespaced."""

    group: str
    plural: str
    namespaced: bool = True


#: the Kubernetes kinds a reconcile reads, acts on or renders (an API's own kinds join from its facts:
#: :func:`kinds`); ``PodGroup`` is resolved by gang provider
KINDS: dict[str, Kind] = {
    "StatefulSet": Kind("apps", "statefulsets"),
    "Deployment": Kind("apps", "deployments"),
    "ControllerRevision": Kind("apps", "controllerrevisions"),
    "ReplicaSet": Kind("apps", "replicasets"),
    "Pod": Kind("", "pods"),
    "Service": Kind("", "services"),
    "Endpoints": Kind("", "endpoints"),
    "PersistentVolumeClaim": Kind("", "persistentvolumeclaims"),
    "Event": Kind("", "events"),
    "Node": Kind("", "nodes", namespaced=False),
    "PodGroup.scheduling.k8s.io": Kind("scheduling.k8s.io", "podgroups"),
    "PodGroup.scheduling.volcano.sh": Kind("scheduling.volcano.sh", "podgroups"),
    "Workload": Kind("scheduling.k8s.io", "workloads"),
}
CRD = Kind("apiextensions.k8s.io", "customresourcedefinitions", namespaced=False)

#: ``Action.verb`` -> the (RBAC verb, subresource) of each request the live actuator sends
VERB_REQUESTS: dict[str, tuple[tuple[str, str], ...]] = {
    "label": (("patch", ""),),
    "annotate": (("patch", ""),),
    "ungate": (("get", ""), ("patch", "")),
    "set-condition": (("get", ""), ("patch", "status")),
    "finalize": (("get", ""), ("patch", "")),
    "disown": (("get", ""), ("patch", "")),
    "patch-status": (("get", ""), ("patch", "status")),
    "delete": (("delete", ""),),
}


def _workload(api: str) -> Any:
    import pulumi_lws.workloads  # noqa: F401 - registers the built-in APIs
    from pulumi_lws.core.contract.workload import workload_for

    return workload_for(api)


def kinds() -> dict[str, Kind]:
    """:data:`KINDS` plus every registered API's own kinds (rendered or observed), by :func:`key_of`."""
    import pulumi_lws.workloads  # noqa: F401 - registers the built-in APIs
    from pulumi_lws.core.contract.workload import registered

    out = dict(KINDS)
    for workload in registered().values():
        for ref in (*workload.observes, *workload.rbac.renders, *workload.rbac.configures):
            out.setdefault(key_of(ref), Kind(ref.group, ref.resource, ref.namespaced))
    return out


def key_of(ref: KindRef) -> str:
    """The :data:`KINDS`-style name of ``ref``: the bare kind, or ``Kind.group`` where the bare
    name is another group's (``PodGroup.scheduling.volcano.sh``)."""
    bare = KINDS.get(ref.kind)
    if bare is not None and bare.group == ref.group:
        return ref.kind
    if ref.qualified in KINDS or bare is not None or ref.kind == "PodGroup":
        return ref.qualified
    return ref.kind


def api_actions(api: str) -> frozenset[tuple[str, str]]:
    """The (verb, kind) actions the planners of ``api`` can emit (its ``rbac.actions`` fact)."""
    return frozenset(_workload(api).rbac.actions)


def api_renders(api: str) -> frozenset[str]:
    """Every kind the renderer of ``api`` can emit (its ``rbac.renders`` and ``rbac.configures``
    facts, by :func:`key_of`)."""
    rbac = _workload(api).rbac
    return frozenset(key_of(k) for k in (*rbac.renders, *rbac.configures))


def upstream_owns_unrendered(api: str) -> frozenset[str]:
    """Scope kinds the upstream controller of ``api`` owns directly that pulumi-lws does not render
    (Kthena creates the Pods itself, each with a controller ownerReference to the ModelServing):
    adoption disowns every such object."""
    return frozenset(_workload(api).rbac.upstream_owns_unrendered)


def fixed_gang_provider(api: str) -> str | None:
    """The gang provider a bare ``PodGroup`` of ``api``'s scope always means (ModelServing:
    Volcano's), or None when it is the caller's choice; None for a name that is not a registered API."""
    import pulumi_lws.workloads  # noqa: F401 - registers the built-in APIs
    from pulumi_lws.core.contract.workload import registered

    workload = registered().get(api)
    return workload.gang.fixed if workload is not None else None


MANAGED_VERBS = ("get", "list", "watch", "create", "patch", "delete")
#: awaited kind -> what pulumi-kubernetes' await logic also watches (list + watch)
AWAIT_WATCHES: dict[str, tuple[str, ...]] = {
    "StatefulSet": ("Pod",),
    "Deployment": ("ReplicaSet", "Pod", "PersistentVolumeClaim"),
    "Service": ("Endpoints",),
}


@dataclass(frozen=True)
class Grant:
    """One verb on one resource (``pods`` or ``pods/status``), for ``who``, because ``why``;
    ``resource_names``: only those objects (empty: any)."""

    group: str
    resource: str
    verb: str
    who: str
    why: str
    cluster: bool = False
    resource_names: tuple[str, ...] = ()

    def allows(self, group: str, resource: str, verb: str, *, cluster: bool, name: str | None = None) -> bool:
        """RBAC's rule match for one request (``name``: the object a GET/PATCH/DELETE names; a
        rule with resourceNames never matches a request without one, e.g. a LIST)."""
        if (self.group, self.resource, self.verb, self.cluster) != (group, resource, verb, cluster):
            return False
        return not self.resource_names or name in self.resource_names


@dataclass(frozen=True)
class Policy:
    """The grants of one namespace's workloads (plus the cluster-scoped ones they need)."""

    namespace: str
    grants: tuple[Grant, ...]

    def allows(self, group: str, resource: str, verb: str, *, cluster: bool, name: str | None = None) -> bool:
        """Whether a request is authorized: some grant allows it (:meth:`Grant.allows`)."""
        return any(g.allows(group, resource, verb, cluster=cluster, name=name) for g in self.grants)

    def rules(self, *, cluster: bool) -> list[dict[str, Any]]:
        """RBAC PolicyRules: one per (group, resource, resourceNames), verbs sorted."""
        merged: dict[tuple[str, str, tuple[str, ...]], set[str]] = {}
        for g in self.grants:
            if g.cluster == cluster:
                merged.setdefault((g.group, g.resource, g.resource_names), set()).add(g.verb)
        return [
            {
                "apiGroups": [group],
                "resources": [resource],
                **({"resourceNames": list(names)} if names else {}),
                "verbs": sorted(verbs),
            }
            for (group, resource, names), verbs in sorted(merged.items())
        ]


def resolve(kind: str, gang_provider: str = "kubernetes") -> str:
    """A scope/action kind name as a :func:`kinds` key (bare ``PodGroup`` by gang provider)."""
    if kind == "PodGroup":
        from pulumi_lws.core.contract.facts import GANG_PODGROUPS

        return key_of(GANG_PODGROUPS[gang_provider if gang_provider in GANG_PODGROUPS else "kubernetes"])
    if kind not in kinds():
        raise KeyError(f"no RBAC resource known for kind {kind!r}")
    return kind


def kind_of_manifest(manifest: Mapping[str, Any]) -> str:
    """The :data:`KINDS` key of a rendered manifest (PodGroup by its apiVersion's group)."""
    kind = str(manifest.get("kind"))
    if kind == "PodGroup":
        return f"PodGroup.{str(manifest.get('apiVersion', '')).rpartition('/')[0]}"
    return resolve(kind)


def _grant(
    kind: str | Kind, verb: str, who: str, why: str, subresource: str = "", names: tuple[str, ...] = ()
) -> Grant:
    k = kinds()[kind] if isinstance(kind, str) else kind
    resource = f"{k.plural}/{subresource}" if subresource else k.plural
    return Grant(k.group, resource, verb, who, why, cluster=not k.namespaced, resource_names=names)


def adoption_kinds(
    scope_kinds: Iterable[str], rendered: Iterable[str], gang_provider: str = "kubernetes", *, api: str = ""
) -> list[str]:
    """The scope kinds ``disown`` can meet (:func:`pulumi_lws.core.features.adoption.disown_actions`: every
    observed object owned by the CR): what the upstream controller creates is what pulumi-lws
    renders in its place, plus :func:`upstream_owns_unrendered` (LWS Pods belong to their
    StatefulSet, never to the CR; Kthena's Pods to the ModelServing)."""
    made = set(rendered)
    extra = upstream_owns_unrendered(api) if api else frozenset()
    return sorted(k for k in scope_kinds if resolve(k, gang_provider) in made or k in extra)


def observe_grants(
    scope_kinds: Iterable[str], *, nodes: bool, gang_provider: str = "kubernetes", capacity: bool = False
) -> list[Grant]:
    """One LIST per scope kind (and Nodes, cluster-scoped, when the scope reads them): both modes.
    ``capacity`` (the opt-in capacity check, :mod:`pulumi_lws.core.features.fit`): a LIST of Nodes and
    one of the pods of every namespace, both cluster-scoped (what ``Scope.capacity`` reads)."""
    out = [
        _grant(resolve(k, gang_provider), "list", RECONCILE, "observe: one LIST per scope kind") for k in scope_kinds
    ]
    if nodes:
        out.append(_grant("Node", "list", RECONCILE, "observe: Nodes for exclusive placement"))
    if capacity:
        out.append(_grant("Node", "list", RECONCILE, "capacity check: every Node's allocatable, labels and taints"))
        pod = kinds()["Pod"]
        out.append(
            Grant(
                pod.group,
                pod.plural,
                "list",
                RECONCILE,
                "capacity check: the requests of the pods bound to every node, in every namespace",
                cluster=True,
            )
        )
    return out


def reconcile_grants(
    api: str,
    scope_kinds: Iterable[str],
    *,
    nodes: bool,
    gang_provider: str = "kubernetes",
    adoption: bool = False,
    rendered: Iterable[str] = (),
    capacity: bool = False,
) -> list[Grant]:
    """What the operator-free reconcile itself sends: observe, act, Events (``rendered``: for adoption)."""
    scope_kinds = list(scope_kinds)
    out = observe_grants(scope_kinds, nodes=nodes, gang_provider=gang_provider, capacity=capacity)
    # an action only touches an object the reconcile observed: kinds outside the scope get none
    in_scope = set(scope_kinds)
    actions = {(verb, kind) for verb, kind in api_actions(api) if kind in in_scope}
    if adoption:
        actions |= {("disown", k) for k in adoption_kinds(in_scope, rendered, gang_provider, api=api)}
    for verb, kind in sorted(actions):
        for http_verb, sub in VERB_REQUESTS[verb]:
            out.append(_grant(resolve(kind, gang_provider), http_verb, RECONCILE, f"action {verb} {kind}", sub))
    for verb, why in (
        ("list", "read the workload's Events (dedup)"),
        ("create", "record the stage's Events"),
        ("get", "bump a repeated Event"),
        ("patch", "bump a repeated Event"),
    ):
        out.append(_grant("Event", verb, RECONCILE, f"events: {why}"))
    return out


def managed_grants(rendered: Iterable[str | Kind], awaited: Iterable[str | Kind] | None = None) -> list[Grant]:
    """What pulumi-kubernetes sends to create, update, await and delete the rendered kinds (a
    :data:`KINDS` key, or a :class:`Kind`: controller mode's custom resource); ``awaited``: the
    kinds some object of which runs the built-in await (None: all rendered)."""
    rendered = sorted(set(rendered), key=lambda k: (isinstance(k, Kind), str(k)))
    awaited = set(rendered if awaited is None else awaited)
    out = []
    for kind in rendered:
        label = kind if isinstance(kind, str) else kind.plural
        for verb in MANAGED_VERBS:
            out.append(_grant(kind, verb, PULUMI_KUBERNETES, f"manage {label}"))
        for watched in AWAIT_WATCHES.get(kind, ()) if isinstance(kind, str) and kind in awaited else ():
            for verb in ("list", "watch"):
                out.append(_grant(watched, verb, PULUMI_KUBERNETES, f"await {kind}: watch its {watched}s"))
    if out:
        for verb in ("list", "watch"):
            out.append(_grant("Event", verb, PULUMI_KUBERNETES, "await: report the objects' warning Events"))
    return out


def controller_grants(
    upstream: Any, scope_kinds: Iterable[str], *, nodes: bool, gang_provider: str = "kubernetes", capacity: bool = False
) -> list[Grant]:
    """Controller mode (module docstring): observe, the CRD GET by name, pulumi-kubernetes on the
    CR. ``upstream``: the API's :class:`~pulumi_lws.core.contract.workload.UpstreamController`."""
    out = observe_grants(scope_kinds, nodes=nodes, gang_provider=gang_provider, capacity=capacity)
    out.append(
        _grant(
            CRD,
            "get",
            RECONCILE,
            f"controller mode: is {upstream.crd_name} served (missing-controller error)",
            names=(upstream.crd_name,),
        )
    )
    return out + managed_grants([Kind(upstream.group, upstream.plural)])


def check_mode(mode: str, *, kind: str, adoption: bool = False, gang_provider: str = "kubernetes") -> None:
    """``SpecError`` naming the field for an unknown ``mode``, and in controller mode for what only
    operator-free mode has: adoption (operator-free taking over from the controller) and a gang
    provider (the upstream controller's gang scheduling is its own configuration)."""
    if mode not in MODES:
        supported = ", ".join(f'"{m}"' for m in MODES)
        raise SpecError(kind, None, [FieldError("mode", f"Unsupported value: supported values: {supported}", mode)])
    problems = []
    if mode == CONTROLLER and adoption:
        problems.append(
            FieldError(
                "adoption",
                "adoption is operator-free mode taking a fleet over from the controller; "
                'in mode "controller" the controller keeps it',
                adoption,
            )
        )
    if mode == CONTROLLER and gang_provider != "kubernetes" and fixed_gang_provider(kind) is None:
        problems.append(
            FieldError(
                "gangProvider",
                "is a pulumi-lws (operator-free) option the upstream controller "
                'does not implement; remove it or use mode "operator-free"',
                gang_provider,
            )
        )
    if problems:
        raise SpecError(kind, None, problems)


def policy(
    api: str,
    namespace: str,
    *,
    scope_kinds: Iterable[str],
    nodes: bool,
    rendered: Iterable[str] = (),
    gang_provider: str = "kubernetes",
    adoption: bool = False,
    awaited: Iterable[str] | None = None,
    mode: str = OPERATOR_FREE,
    upstream: Any = None,
    capacity: bool = False,
) -> Policy:
    """The grants one workload of ``api`` needs in ``namespace`` in ``mode`` (module docstring).
    ``capacity``: the opt-in capacity check's cluster-wide LISTs of Nodes and pods (both modes);
    ``rendered``/``awaited``/``adoption``: operator-free only; ``upstream``: controller mode's
    :class:`~pulumi_lws.core.contract.workload.UpstreamController` (default: the registered API's).

    Raises ``ValueError`` for a rendered kind outside the API's ``rbac.renders`` fact (a renderer
    that emits a new kind must say so in its facts, so its RBAC is reviewed rather than guessed), ``SpecError`` for a
    mode / option mismatch (:func:`check_mode`)."""
    check_mode(mode, kind=api, adoption=adoption, gang_provider=gang_provider)
    rendered = set(rendered)
    if mode == CONTROLLER:
        if rendered:
            raise ValueError(f"{api} in controller mode renders nothing (the controller does): got {sorted(rendered)}")
        if upstream is None:
            upstream = _workload(api).upstream
        return Policy(
            namespace,
            tuple(
                dict.fromkeys(
                    controller_grants(
                        upstream, scope_kinds, nodes=nodes, gang_provider=gang_provider, capacity=capacity
                    )
                )
            ),
        )
    unknown = rendered - api_renders(api)
    if unknown:
        raise ValueError(f"{api} rendered {sorted(unknown)}: add them to its Workload.rbac.renders (api_renders)")
    grants = reconcile_grants(
        api,
        scope_kinds,
        nodes=nodes,
        gang_provider=gang_provider,
        adoption=adoption,
        rendered=rendered,
        capacity=capacity,
    )
    grants += managed_grants(rendered, awaited)
    return Policy(namespace, tuple(dict.fromkeys(grants)))
