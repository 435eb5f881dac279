"""Apply order of one reconcile's manifests: ``{dependent: (dependencies...)}`` refs.

A dependent is applied only after every dependency was applied successfully in the same run
(Pulumi's ``dependsOn``; the simulator's partial apply keeps the applied set closed under it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

#: A declared object within the LWS's namespace: ``(kind, metadata.name)``.
Ref = tuple[str, str]


#: ``{dependent: (dependencies...)}``: the dependent is applied only after every dependency was
#: applied successfully in the same run (Pulumi's ``dependsOn``). Absent key = no dependency.
Dependencies = Mapping[Ref, tuple[Ref, ...]]


def ref_of(manifest: Mapping[str, Any]) -> Ref:
    return (manifest["kind"], manifest["metadata"]["name"])


def merge_dependencies(
    manifests: Iterable[Mapping[str, Any]], *parts: Mapping[Ref, Iterable[Ref]]
) -> dict[Ref, tuple[Ref, ...]]:
    """Union of ``parts`` in manifest order, each list deduplicated in first-seen order.

    Invariant of the result: every key and every dependency is a declared manifest, and no
    object depends on itself (callers' rules only name declared objects; this enforces it)."""
    declared = dict.fromkeys(ref_of(m) for m in manifests)
    merged: dict[Ref, dict[Ref, None]] = {}
    for part in parts:
        for ref, deps in part.items():
            if ref in declared:
                merged.setdefault(ref, {}).update((d, None) for d in deps if d in declared and d != ref)
    return {ref: tuple(merged[ref]) for ref in declared if merged.get(ref)}


def check_dependency_order(manifests: Sequence[Mapping[str, Any]], dependencies: Mapping[Ref, tuple[Ref, ...]]) -> None:
    """Raise ``ValueError`` unless every dependency precedes its dependents in ``manifests`` (the
    component registers in this order and hands earlier children to ``depends_on``)."""
    position = {ref_of(m): n for n, m in enumerate(manifests)}
    for ref, deps in dependencies.items():
        late = [d for d in deps if position.get(d, len(manifests)) >= position[ref]]
        if late:
            raise ValueError(f"{ref} is declared before its dependencies {late}")
