"""Register rendered manifest dicts as pulumi_kubernetes resources (one function, one table).

Typed classes for the kinds pulumi-lws renders; any other kind (PodGroup, Workload, Volcano
PodGroup, ...) becomes an ``apiextensions.CustomResource`` that keeps its body verbatim.

What pulumi-kubernetes does with them (its source, docs/component.md "How pulumi-kubernetes
treats the children"): StatefulSets and Deployments carry ``pulumi.com/skipAwait`` (its
built-in awaiters would hold ``pulumi up`` until every pod rolled; the planner judges
readiness) and ``pulumi.com/deletionPropagationPolicy: background`` (with skipAwait the
provider's delete of these kinds returns at once, so the object must be gone at once too: a
same-name object declared later must never meet it terminating), one table for both
(``core.k8s.manifests.WORKLOAD_ANNOTATIONS``, which the renderers also use); an object whose
declared annotations include one the reconcile's actuator also writes carries
``pulumi.com/patchForce`` (two field managers on one field are a server-side apply conflict once
its value changes), and so does an object the reconcile marked forced itself (adoption:
``core.features.adoption``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pulumi

from pulumi_lws.core.k8s.keys import PATCH_FORCE
from pulumi_lws.core.k8s.manifests import WORKLOAD_ANNOTATIONS

#: kind -> (module path under pulumi_kubernetes, class name, body fields besides metadata)
TYPED_KINDS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "StatefulSet": ("apps.v1", "StatefulSet", ("spec",)),
    "Deployment": ("apps.v1", "Deployment", ("spec",)),
    "ControllerRevision": ("apps.v1", "ControllerRevision", ("data", "revision")),
    "Service": ("core.v1", "Service", ("spec",)),
    "ConfigMap": ("core.v1", "ConfigMap", ("data", "binary_data", "immutable")),
    "PodDisruptionBudget": ("policy.v1", "PodDisruptionBudget", ("spec",)),
}

_FIELD_WIRE = {"binary_data": "binaryData"}


def logical_name(component: str, manifest: Mapping[str, Any]) -> str:
    """``<component>-<kind>-<metadata.name>``: deterministic, unique across kinds and components."""
    kind = manifest["kind"].lower()
    return f"{component}-{kind}-{manifest['metadata']['name']}"


def _typed_class(kind: str) -> tuple[Callable[..., pulumi.CustomResource], tuple[str, ...]] | None:
    entry = TYPED_KINDS.get(kind)
    if entry is None:
        return None
    module_path, cls_name, fields = entry
    import importlib

    module = importlib.import_module(f"pulumi_kubernetes.{module_path}")
    return getattr(module, cls_name), fields


#: Workloads whose readiness the planner judges: pulumi-kubernetes' await must not block ``up``
#: (and whose delete it then does not await either: they are deleted in the background).
SKIP_AWAIT_KINDS = ("StatefulSet", "Deployment")


def reconcile_written_annotations() -> frozenset[str]:
    """Annotations the reconcile writes itself (the live actuator, field manager ``pulumi-lws``) on
    an object it also declares: every registered API's ``Workload.reconcile_written_annotations``
    (LeaderWorkerSet's leader StatefulSet / Deployment restart counts, written before the actions
    they account for and declared so ``pulumi up`` keeps them)."""
    import pulumi_lws.workloads  # noqa: F401 - registers the built-in APIs
    from pulumi_lws.core.contract.workload import registered

    return frozenset(a for w in registered().values() for a in w.reconcile_written_annotations)


def with_skip_await(manifest: Mapping[str, Any]) -> Mapping[str, Any]:
    """Ensure :data:`WORKLOAD_ANNOTATIONS` (``pulumi.com/skipAwait: "true"``,
    ``pulumi.com/deletionPropagationPolicy: "background"``) on workloads (the renderers set them;
    never lose them: these values win over a user's annotation of the same key),
    and ``pulumi.com/patchForce: "true"`` on an object declaring an annotation the reconcile also
    writes: pulumi-kubernetes applies each object with its own field manager and no force, so
    when it applies a changed restart count the actuator wrote before (a field two managers own)
    the API server answers a conflict and ``pulumi up`` fails; forced, the declared value — the
    one the actuator writes — wins."""
    annotations = manifest["metadata"].get("annotations") or {}
    wanted: dict[str, str] = {}
    if manifest.get("kind") in SKIP_AWAIT_KINDS:
        wanted.update((k, v) for k, v in WORKLOAD_ANNOTATIONS.items() if annotations.get(k) != v)
    if (
        annotations
        and any(key in annotations for key in reconcile_written_annotations())
        and annotations.get(PATCH_FORCE) != "true"
    ):
        wanted[PATCH_FORCE] = "true"
    if not wanted:
        return manifest
    metadata = dict(manifest["metadata"])
    metadata["annotations"] = {**annotations, **wanted}
    return {**manifest, "metadata": metadata}


def _same(value: Any) -> Any:
    return value


def register_manifest(
    component: str, manifest: Mapping[str, Any], opts: pulumi.ResourceOptions, substitute: Callable[[Any], Any] = _same
) -> pulumi.CustomResource:
    """Create the pulumi_kubernetes resource for one manifest (inputs = the manifest, verbatim,
    after ``substitute``: the component's inputs put their Outputs back, see components/inputs.py;
    the logical name is always taken from the plain manifest)."""
    manifest = with_skip_await(manifest)
    name = logical_name(component, manifest)
    kind = manifest["kind"]
    plain_name = manifest["metadata"]["name"]
    manifest = substitute(manifest)
    typed = _typed_class(kind)
    if typed is not None and manifest.get("apiVersion", "").split("/")[-1] == "v1":
        cls, fields = typed
        body = {f: manifest[_FIELD_WIRE.get(f, f)] for f in fields if _FIELD_WIRE.get(f, f) in manifest}
        return cls(name, metadata=manifest["metadata"], opts=opts, **body)
    from pulumi_kubernetes.apiextensions import CustomResource

    extra = sorted(k for k in manifest if k not in ("apiVersion", "kind", "metadata", "spec", "status"))
    if extra:
        raise ValueError(
            f"{kind} {plain_name}: top-level fields {extra} cannot be declared as a "
            "CustomResource (only apiVersion, kind, metadata and spec are)"
        )
    return CustomResource(
        name,
        api_version=manifest["apiVersion"],
        kind=kind,
        metadata=manifest["metadata"],
        spec=manifest.get("spec"),
        opts=opts,
    )


def register_children(
    component: str,
    manifests: Iterable[Mapping[str, Any]],
    dependencies: Mapping[tuple[str, str], Iterable[tuple[str, str]]],
    parent: pulumi.Resource,
    *,
    substitute: Callable[[Any], Any] = _same,
    options: Callable[[str], pulumi.ResourceOptions] | None = None,
) -> list[pulumi.CustomResource]:
    """Register ``manifests`` in order, each with ``parent`` and ``depends_on`` the already
    registered children named by ``dependencies[(kind, name)]``, plus ``options(kind)`` (the
    component's input dependencies, ``retain_on_delete``, hooks: components/lifecycle.py).

    Raises ``ValueError`` if a dependency is not an earlier manifest: a ``depends_on`` that
    silently dropped a dependency would break the apply-order promise."""
    children: dict[tuple[str, str], pulumi.CustomResource] = {}
    out = []
    for manifest in manifests:
        ref = (manifest["kind"], manifest["metadata"]["name"])
        wanted = tuple(dependencies.get(ref, ()))
        missing = [d for d in wanted if d not in children]
        if missing:
            raise ValueError(f"{component}: {ref} depends on {missing}, which are not declared before it")
        opts = pulumi.ResourceOptions(parent=parent, depends_on=[children[d] for d in wanted] or None)
        if options is not None:
            opts = pulumi.ResourceOptions.merge(opts, options(manifest["kind"]))
        children[ref] = register_manifest(component, manifest, opts, substitute)
        out.append(children[ref])
    return out
