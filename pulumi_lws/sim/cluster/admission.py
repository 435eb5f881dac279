"""The simulated API server's mutating admission: MutatingAdmissionPolicy + binding on CREATE.

Generic (no API's labels): every ``MutatingAdmissionPolicyBinding`` in the store whose policy
exists, whose ``matchResources`` (namespace and object selectors) and whose policy's
``matchConstraints.resourceRules`` match the request, in binding-name order:

1. ``matchConditions`` in order: any ``false`` skips the binding; an error fails it;
2. ``variables`` are evaluated lazily (:class:`pulumi_lws.sim.cluster.cel.LazyVariables`);
3. ``mutations`` in order, each against the object as the previous ones left it:
   ``ApplyConfiguration`` merges the returned ``Object{...}`` (maps merged key by key, lists and
   scalars replaced: the rendered policies only write maps of strings); ``JSONPatch`` applies the
   returned ``[JSONPatch{...}]`` (``add``, ``replace``, ``remove``, ``test``; RFC 6902 pointers).

A failure (a CEL error, a construct outside :mod:`pulumi_lws.sim.cluster.cel`'s subset, a patch
that does not apply) refuses the request under ``failurePolicy: Fail`` (the default), raising
:class:`AdmissionDenied`; under ``Ignore`` that binding's mutations are dropped. Activation:
``object`` (the object being created, after defaulting), ``oldObject`` (null), ``request``
(``operation``, ``namespace``, ``name``, ``kind``), ``namespaceObject`` (the Namespace, or one with
only its name), ``variables``. ``reinvocationPolicy`` is moot here: no other mutating plug-in runs.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from pulumi_lws.sim.cluster.cel import CelError, LazyVariables, evaluate, plain
from pulumi_lws.sim.cluster.selectors import selector_matches

POLICY_KIND = "MutatingAdmissionPolicy"
BINDING_KIND = "MutatingAdmissionPolicyBinding"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
#: kind -> (API group, resource) for the rule match
RESOURCES = {"Pod": ("", "pods")}


class AdmissionDenied(Exception):
    """A policy with ``failurePolicy: Fail`` could not be applied: the request is refused."""


def _rule_matches(rule: Mapping[str, Any], group: str, resource: str, operation: str) -> bool:
    def has(values: Any, value: str) -> bool:
        return "*" in (values or []) or value in (values or [])

    return (
        has(rule.get("apiGroups"), group)
        and has(rule.get("apiVersions"), "v1")
        and has(rule.get("operations"), operation)
        and has(rule.get("resources"), resource)
    )


def _matches(
    resources: Mapping[str, Any] | None, obj: Mapping[str, Any], ns_labels: Mapping[str, str], rules: bool
) -> bool:
    resources = resources or {}
    group, resource = RESOURCES.get(obj["kind"], ("?", "?"))
    if rules and not any(_rule_matches(r, group, resource, "CREATE") for r in resources.get("resourceRules") or []):
        return False
    labels = (obj.get("metadata") or {}).get("labels") or {}
    ns_selector, obj_selector = resources.get("namespaceSelector"), resources.get("objectSelector")
    return (ns_selector is None or selector_matches(ns_selector, ns_labels)) and (
        obj_selector is None or selector_matches(obj_selector, labels)
    )


def admit(obj: dict[str, Any], store: Any) -> dict[str, Any]:
    """``obj`` (being created) after every matching policy's mutations; raises
    :class:`AdmissionDenied` when a ``Fail`` policy cannot be applied."""
    bindings = store.list(BINDING_KIND, "")
    if not bindings or obj["kind"] not in RESOURCES:
        return obj
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    ns_obj = store.get("Namespace", "", namespace) or {"metadata": {"name": namespace, "labels": {}}}
    ns_labels = {**((ns_obj.get("metadata") or {}).get("labels") or {}), NAMESPACE_NAME_LABEL: namespace}
    for binding in sorted(bindings, key=lambda b: b["metadata"]["name"]):
        spec = binding.get("spec") or {}
        policy = store.get(POLICY_KIND, "", spec.get("policyName") or "")
        if policy is None:
            continue
        pspec = policy.get("spec") or {}
        if not _matches(pspec.get("matchConstraints"), obj, ns_labels, rules=True):
            continue
        if not _matches(spec.get("matchResources"), obj, ns_labels, rules=False):
            continue
        try:
            before = obj
            obj = _apply_policy(policy["metadata"]["name"], pspec, obj, ns_obj)
            if obj is not before:
                record = getattr(store, "admitted", None)
                if record is not None:
                    record[f"{namespace}/{meta.get('name')}"] = mutation_summary(before, obj)
        except (CelError, PatchError) as exc:
            if pspec.get("failurePolicy", "Fail") == "Fail":
                policy_name, binding_name = policy["metadata"]["name"], binding["metadata"]["name"]
                raise AdmissionDenied(
                    f'MutatingAdmissionPolicy "{policy_name}" (binding "{binding_name}") denied the request: {exc}'
                ) from exc
    return obj


def mutation_summary(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """What admission changed: the labels and annotations it added or changed, and the top-level
    ``spec`` fields it touched (``simulate`` shows a few; tests read them)."""

    def changed(field: str) -> dict[str, str]:
        old = (before.get("metadata") or {}).get(field) or {}
        new = (after.get("metadata") or {}).get(field) or {}
        return {k: v for k, v in new.items() if old.get(k) != v}

    old_spec, new_spec = before.get("spec") or {}, after.get("spec") or {}
    fields = sorted(k for k in {*old_spec, *new_spec} if old_spec.get(k) != new_spec.get(k))
    return {"labels": changed("labels"), "annotations": changed("annotations"), "spec": fields}


def _activation(obj: Mapping[str, Any], ns_obj: Mapping[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata") or {}
    return {
        "object": obj,
        "oldObject": None,
        "namespaceObject": ns_obj,
        "request": {
            "operation": "CREATE",
            "namespace": meta.get("namespace"),
            "name": meta.get("name"),
            "kind": obj["kind"],
        },
    }


def _apply_policy(name: str, spec: Mapping[str, Any], obj: dict[str, Any], ns_obj: Mapping[str, Any]) -> dict[str, Any]:
    activation = _activation(obj, ns_obj)
    for condition in spec.get("matchConditions") or []:
        value = evaluate(condition["expression"], activation)
        if value is not True:
            if value is False:
                return obj
            raise CelError(f"matchCondition {condition['name']!r} is not a bool")
    current = copy.deepcopy(obj)
    definitions = [(v["name"], v["expression"]) for v in spec.get("variables") or []]
    for mutation in spec.get("mutations") or []:
        activation = _activation(current, ns_obj)
        activation["variables"] = LazyVariables(definitions, activation)
        kind = mutation.get("patchType")
        if kind == "ApplyConfiguration":
            value = plain(evaluate(mutation["applyConfiguration"]["expression"], activation))
            if not isinstance(value, dict):
                raise CelError(f"policy {name}: an ApplyConfiguration expression must return Object{{...}}")
            current = merge_apply(current, value)
        elif kind == "JSONPatch":
            ops = plain(evaluate(mutation["jsonPatch"]["expression"], activation))
            if not isinstance(ops, list):
                raise CelError(f"policy {name}: a JSONPatch expression must return a list of JSONPatch")
            current = apply_json_patch(current, ops)
        else:
            raise CelError(f"policy {name}: patchType {kind!r}")
    return current


def merge_apply(target: dict[str, Any], config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` merged into ``target`` (a new dict): maps key by key, anything else replaced."""
    out = dict(target)
    for key, value in config.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge_apply(dict(out[key]), value)
        else:
            out[key] = copy.deepcopy(value)
    return out


class PatchError(Exception):
    """A JSONPatch operation that does not apply to the object."""


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"JSON pointer {path!r} must start with /")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _parent(doc: Any, parts: list[str], path: str) -> Any:
    node = doc
    for part in parts[:-1]:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise PatchError(f"path {path!r}: {part!r} does not exist")
    return node


def apply_json_patch(doc: dict[str, Any], ops: list[Any]) -> dict[str, Any]:
    """RFC 6902 ``add``/``replace``/``remove``/``test`` on a copy of ``doc``."""
    out = copy.deepcopy(doc)
    for op in ops:
        if not isinstance(op, Mapping) or "op" not in op or "path" not in op:
            raise PatchError(f"not a JSONPatch: {op!r}")
        path, verb = op["path"], op["op"]
        parts = _pointer(path)
        if not parts:
            raise PatchError("the document root cannot be patched")
        parent, last = _parent(out, parts, path), parts[-1]
        value = copy.deepcopy(op.get("value"))
        if verb == "test":
            here = parent.get(last) if isinstance(parent, dict) else None
            if here != value:
                raise PatchError(f"test {path!r} failed")
        elif isinstance(parent, dict):
            if verb in ("replace", "remove") and last not in parent:
                raise PatchError(f"{verb} {path!r}: no such member")
            if verb == "remove":
                del parent[last]
            elif verb in ("add", "replace"):
                parent[last] = value
            else:
                raise PatchError(f"JSONPatch op {verb!r} is not supported")
        elif isinstance(parent, list):
            index = len(parent) if last == "-" and verb == "add" else int(last) if last.isdigit() else -1
            if not 0 <= index <= len(parent) - (0 if verb == "add" else 1):
                raise PatchError(f"{verb} {path!r}: index out of range")
            if verb == "add":
                parent.insert(index, value)
            elif verb == "replace":
                parent[index] = value
            elif verb == "remove":
                del parent[index]
            else:
                raise PatchError(f"JSONPatch op {verb!r} is not supported")
        else:
            raise PatchError(f"path {path!r}: parent is not an object or array")
    return out
