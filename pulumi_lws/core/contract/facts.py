"""The facts an API states about itself (pure data), which the shells read instead of tables by kind.

Every :class:`pulumi_lws.core.contract.workload.Workload` fills each of these; :func:`pulumi_lws.core.contract.workload.register`
refuses one that leaves a fact out or states it inconsistently (:func:`check_facts`), so a
forgotten fact fails when the API is registered, never in a user's command.

* :class:`Words` — what help and headers call the API;
* :class:`ArgumentSchema` — the component arguments it takes (manifest paths, nested objects,
  pulumi-lws options with their validators, which are operator-free only, the rollout-control
  arguments it writes as annotations): the one argument layer of every component
  (:func:`pulumi_lws.components.args.build_spec`) reads nothing else;
* :class:`GangChoice` — which gang provider's PodGroups its objects are (fixed, or a choice);
* :class:`RbacFacts` — the (verb, kind) actions its planners emit, the kinds it renders (with API
  versions: a bare ``PodGroup`` names two APIs), what its upstream controller owns that
  pulumi-lws does not render;
* ``observes`` — every kind one of its scopes may list, with API versions (:class:`KindRef`).

Invariants: every dataclass here is frozen; option names are snake_case and unique; an option is
never also a manifest field.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

#: snake_case argument names (what ``components.args.snake`` makes of camelCase)
_SNAKE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")


#: the API versions every Kubernetes cluster serves: a kind of these is never "not installed"
ALWAYS_SERVED = ("v1", "apps/v1")


@dataclass(frozen=True)
class KindRef:
    """One Kubernetes kind at one API version (``PodGroup`` exists as ``scheduling.k8s.io/v1beta1``
    and ``scheduling.volcano.sh/v1beta1``: two refs). ``plural``: the REST resource (default: the
    kind lower-cased + ``s``); ``namespaced``: whether objects live in a namespace.

    ``optional``: a cluster may not serve it (a CRD, a beta or feature-gated API: PodGroup,
    Workload, MutatingAdmissionPolicy, DisaggregatedSetRoleScaler). The live backend asks API
    discovery whether an optional kind is served before LISTing it (not served: none of it); a
    kind that is not optional is served by every cluster (:data:`ALWAYS_SERVED`), so a 404 on its
    LIST is a cluster fault, never "not installed". :func:`check_facts` refuses a required kind
    outside :data:`ALWAYS_SERVED`."""

    kind: str
    api_version: str
    plural: str = ""
    namespaced: bool = True
    optional: bool = False

    @property
    def group(self) -> str:
        """The API group (``""`` for the core group, ``apiVersion: v1``)."""
        return self.api_version.rpartition("/")[0]

    @property
    def resource(self) -> str:
        return self.plural or f"{self.kind.lower()}s"

    @property
    def qualified(self) -> str:
        """``Kind.group`` (``Kind`` for the core group): one name per API."""
        return f"{self.kind}.{self.group}" if self.group else self.kind


#: gang provider -> the PodGroup kind its gang objects are (and what a bare ``PodGroup`` of a
#: scope means for an API reconciled with that provider)
GANG_PODGROUPS: Mapping[str, KindRef] = {
    "kubernetes": KindRef("PodGroup", "scheduling.k8s.io/v1beta1", optional=True),
    "volcano": KindRef("PodGroup", "scheduling.volcano.sh/v1beta1", optional=True),
}


@dataclass(frozen=True)
class Words:
    """What help texts and headers call the API. ``display_name``: e.g. ``Kthena ModelServing``;
    ``description``: one line for ``--help`` (no trailing period); ``group``: what one group of
    its pods is called (``group``, ``ServingGroup``)."""

    display_name: str
    description: str
    group: str = "group"


@dataclass(frozen=True)
class Nested:
    """An object argument whose keys are set one by one at ``base`` + the key's wire name
    (LeaderWorkerSet's ``rollout``: ``{max_surge: 1}`` -> ``spec.rolloutStrategy.rollingUpdateConfiguration.maxSurge``).
    ``keys``: snake_case key -> wire name; ``coerce`` is applied to each value (the provider
    delivers IntOrString as strings); ``expected``: the error text for a non-object."""

    base: tuple[str, ...]
    keys: Mapping[str, str]
    coerce: Callable[[Any], Any] = lambda value: value
    expected: str = "expected an object"


class ArgumentError(ValueError):
    """Raised by an :class:`Option`'s ``check``: the message of the option's FieldError."""


@dataclass(frozen=True)
class Option:
    """A pulumi-lws reconcile choice given as a component argument (never part of the manifest).

    ``check(value)`` -> the validated value (``value`` is None when the argument is unset: return
    the default, or None); raises :class:`ArgumentError` with the message. The validated values
    reach ``Workload.options(**choices)`` under ``name``. ``operator_free_only``: the upstream
    controller lacks it, so controller mode refuses it (docs/modes.md)."""

    name: str
    check: Callable[[Any], Any] = lambda value: value
    operator_free_only: bool = True


#: the rollout-control arguments an API may take (:func:`pulumi_lws.core.features.control.check_arguments`)
CONTROL_ARGUMENTS = ("paused", "progress_deadline_seconds", "check_capacity")


class ManifestModel(Protocol):
    """A typed manifest class an API accepts as ``manifest`` (its ``ManifestResource``): structural,
    so core names no pydantic model."""

    def to_wire(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class ArgumentSchema:
    """The component arguments of one API (besides ``manifest`` and ``mode``, which every API has).

    ``fields``: snake_case name -> path in the manifest (``name`` -> ``metadata.name``);
    ``nested``: object arguments set key by key (:class:`Nested`); ``options``: pulumi-lws choices
    (:class:`Option`); ``control``: the rollout-control arguments (``paused``,
    ``progress_deadline_seconds``, ``check_capacity``) written as the manifest's annotations
    (:func:`pulumi_lws.core.features.control.with_arguments`) — an API that keeps
    ``progress_deadline_seconds`` as its own option lists it in ``options`` instead; ``model``:
    the API's typed manifest class a caller may pass (``to_wire()`` is its manifest), or None."""

    fields: Mapping[str, tuple[str, ...]]
    options: tuple[Option, ...] = ()
    nested: Mapping[str, Nested] = field(default_factory=dict)
    control: tuple[str, ...] = CONTROL_ARGUMENTS
    model: type[ManifestModel] | None = None

    @property
    def option_names(self) -> tuple[str, ...]:
        return tuple(o.name for o in self.options)

    @property
    def operator_free_only(self) -> tuple[str, ...]:
        """The arguments controller mode refuses (the upstream controller would ignore them)."""
        return tuple(o.name for o in self.options if o.operator_free_only)

    @property
    def known(self) -> frozenset[str]:
        """Every argument name (snake_case) the API's components accept, ``manifest`` included."""
        return frozenset({*self.fields, *self.nested, *self.option_names, *self.control, "manifest"})


@dataclass(frozen=True)
class GangChoice:
    """The gang providers an API's objects can use; the first is the default. One provider: fixed
    (ModelServing's PodGroups are always Volcano's), so a ``gang_provider`` choice never applies."""

    providers: tuple[str, ...] = ("kubernetes",)

    @property
    def default(self) -> str:
        return self.providers[0]

    @property
    def fixed(self) -> str | None:
        return self.providers[0] if len(self.providers) == 1 else None

    def provider(self, chosen: str | None = None) -> str:
        """The provider a reconcile runs with: the fixed one, else ``chosen`` (unset: the default)."""
        return self.fixed or chosen or self.default

    def podgroup(self, chosen: str | None = None) -> KindRef:
        """The PodGroup kind a bare ``PodGroup`` means for this API under ``chosen``."""
        return GANG_PODGROUPS[self.provider(chosen)]


@dataclass(frozen=True)
class RbacFacts:
    """What the API's reconcile does to the cluster, for least-privilege RBAC (:mod:`pulumi_lws.rbac`).

    ``actions``: every ``(Action.verb, kind)`` its planners can emit (checked against the planners'
    ``Action(...)`` literals by tests/rbac/test_rbac_rules.py); ``renders``: every kind its
    renderer can emit (pulumi-kubernetes manages them); ``upstream_owns_unrendered``: scope kinds
    its upstream controller owns directly that pulumi-lws does not render (adoption disowns them);
    ``configures``: cluster-scoped configuration kinds its renderer can emit but no reconcile reads
    back (LeaderWorkerSet per-pod values ``admission-policy``: the MutatingAdmissionPolicy and its
    binding; a held stage registers them as planned, :data:`pulumi_lws.core.features.hold.KEPT_WHILE_HELD`)."""

    actions: frozenset[tuple[str, str]]
    renders: tuple[KindRef, ...]
    upstream_owns_unrendered: frozenset[str] = frozenset()
    configures: tuple[KindRef, ...] = ()


def check_facts(
    kind: str, *, api_version: str, words: Any, arguments: Any, gang: Any, rbac: Any, observes: Any
) -> list[str]:
    """Every problem with one API's facts (empty: complete and consistent)."""
    problems: list[str] = []
    if not isinstance(kind, str) or not kind:
        problems.append("kind: a non-empty string")
    if not isinstance(api_version, str) or "/" not in api_version:
        problems.append("api_version: group/version")
    if not isinstance(words, Words) or not words.display_name or not words.description or "\n" in words.description:
        problems.append("words: Words(display_name, one-line description)")
    if not isinstance(arguments, ArgumentSchema):
        problems.append("arguments: an ArgumentSchema")
    else:
        names = [*arguments.fields, *arguments.nested, *arguments.option_names, *arguments.control]
        bad = sorted(n for n in names if not _SNAKE.match(n))
        if bad:
            problems.append(f"arguments: not snake_case: {bad}")
        clash = sorted(set(arguments.option_names) & (set(arguments.fields) | set(arguments.control)))
        if clash or len(set(arguments.option_names)) != len(arguments.options):
            problems.append(f"arguments: an option is also a field, a control argument or repeated: {clash}")
        if "name" not in arguments.fields or "namespace" not in arguments.fields:
            problems.append("arguments: fields must include name and namespace")
        if any(c not in CONTROL_ARGUMENTS for c in arguments.control):
            problems.append("arguments: control lists only " + " / ".join(CONTROL_ARGUMENTS))
    if not isinstance(gang, GangChoice) or not gang.providers or any(p not in GANG_PODGROUPS for p in gang.providers):
        problems.append(f"gang: a GangChoice of {sorted(GANG_PODGROUPS)}")
    if not isinstance(observes, tuple) or not observes or not all(isinstance(k, KindRef) for k in observes):
        problems.append("observes: a non-empty tuple of KindRef")
    else:
        unsure = sorted(
            f"{k.kind} {k.api_version}" for k in observes if not k.optional and k.api_version not in ALWAYS_SERVED
        )
        if unsure:  # a 404 on its LIST would read as a cluster fault where the API is merely not installed
            problems.append(f"observes: not served by every cluster, mark optional=True: {unsure}")
    if not isinstance(rbac, RbacFacts) or not all(isinstance(k, KindRef) for k in rbac.renders):
        problems.append("rbac: RbacFacts(actions, renders as KindRef, upstream_owns_unrendered)")
    elif isinstance(observes, tuple):
        unobserved = sorted(k.qualified for k in rbac.renders if k not in observes)
        if unobserved:  # a reconcile must read back what it declares
            problems.append(f"rbac.renders not in observes: {unobserved}")
        namespaced = sorted(k.qualified for k in rbac.configures if not isinstance(k, KindRef) or k.namespaced)
        if namespaced:  # only cluster configuration may go unobserved
            problems.append(f"rbac.configures must be cluster-scoped KindRefs: {namespaced}")
    return problems


# -- option validators (``Option.check``) and value coercions shared by the APIs


def int_or_percent(value: Any) -> Any:
    """maxUnavailable/maxSurge from the provider arrive as ``str`` (no Unions): "2" -> 2, "50%" stays."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return value


def one_of(*values: str) -> Callable[[Any], str]:
    """A check accepting one of ``values`` (unset or empty: the first)."""
    supported = ", ".join(f'"{v}"' for v in values)

    def check(value: Any) -> str:
        chosen = value or values[0]
        if chosen not in values:
            raise ArgumentError(f"Unsupported value: supported values: {supported}")
        return str(chosen)

    return check


def queue_name(value: Any) -> str | None:
    """A Volcano Queue name, or None."""
    if value is not None and (not isinstance(value, str) or not value):
        raise ArgumentError("must be a non-empty string (a Volcano Queue name)")
    return value


def positive_int(value: Any) -> int | None:
    """An integer >= 1 (a float with an integer value is one: Pulumi delivers numbers as floats), or None."""
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ArgumentError("must be an integer >= 1")
    return int(value)


def seconds(value: Any) -> float | None:
    """A number of seconds >= 0, or None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ArgumentError("must be a number of seconds >= 0")
    return float(value)
