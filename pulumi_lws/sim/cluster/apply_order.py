"""Which manifests a dependency (or a crash) names, and the order one apply upserts and deletes them in.

Apart from :mod:`.apply` because the order is a function of the desired keys and the declared
dependencies alone (no stored object, no stack state: the applier reuses the last one per stack
while both are equal). Invariants: a ``(kind, name)`` ref resolves in the dependent's namespace,
a full ``(kind, namespace, name)`` key as is, and a dependency on an undeclared object is dropped;
the upsert order is stable (the given order wherever the dependencies allow) and every dependency
comes before its dependents; deletion is the reverse, dependents first; a cycle raises
``ValueError``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from pulumi_lws.sim.cluster.store import Store

Key = tuple[str, str, str]  # kind, namespace, name


def label(k: Key) -> str:
    return f"{k[0]}/{k[2]}"


def _resolved(ref: tuple, namespace: str) -> Key:
    """A ``(kind, name)`` ref in ``namespace`` (a cluster-scoped kind: none), or a full
    ``(kind, namespace, name)`` key as is."""
    return (ref[0], Store._ns(ref[0], namespace), ref[1]) if len(ref) == 2 else (ref[0], ref[1], ref[2])


def matching_keys(refs: Collection[tuple], keys: Iterable[Key]) -> list[Key]:
    """Keys named by ``refs``: a full ``(kind, namespace, name)`` key, or ``(kind, name)`` in any namespace."""
    full = {tuple(r) for r in refs if len(r) == 3}
    short = {tuple(r) for r in refs if len(r) == 2}
    return [k for k in keys if k in full or (k[0], k[2]) in short]


def resolve_dependencies(
    desired: Mapping[Key, Any], dependencies: Mapping[tuple, Iterable[tuple]]
) -> dict[Key, tuple[Key, ...]]:
    """``dependencies`` as full keys of desired manifests. A ``(kind, name)`` dependent applies to
    every desired manifest of that kind and name; its ``(kind, name)`` dependencies are resolved in
    the dependent's namespace. Dependencies on undeclared objects are dropped (nothing to wait for)."""
    by_short: dict[tuple[str, str], list[Key]] = {}
    for key in desired:
        by_short.setdefault((key[0], key[2]), []).append(key)
    # per namespace: a dependency ref -> its desired key, or None (a fleet's dependents name the
    # same ControllerRevisions, and a replica's two StatefulSets the same Service and PodGroup)
    found: dict[str, dict[tuple, Key | None]] = {}
    # per namespace: a dependencies tuple (by identity: a fleet's dependents share a handful) ->
    # its desired keys; held by ``dependencies`` for the whole call, so the id is not reused
    resolved: dict[tuple[str, int], list[Key]] = {}
    out: dict[Key, dict[Key, None]] = {}
    for dependent, deps in dependencies.items():
        keys = by_short.get(tuple(dependent), ()) if len(dependent) == 2 else [_resolved(dependent, "")]
        for key in keys:
            if key not in desired:
                continue
            shared = resolved.get((key[1], id(deps))) if type(deps) is tuple else None
            if shared is None:
                refs = found.get(key[1])
                if refs is None:
                    refs = found[key[1]] = {}
                shared = []
                for d in deps:
                    try:
                        full = refs[d]
                    except KeyError:
                        full = _resolved(d, key[1])
                        full = refs[d] = full if full in desired else None
                    if full is not None:
                        shared.append(full)
                if type(deps) is tuple:
                    resolved[(key[1], id(deps))] = shared
            wanted = [full for full in shared if full != key] if key in shared else shared
            entry = out.get(key)  # placed at its first mention, as setdefault would
            if entry is None:
                out[key] = dict.fromkeys(wanted)
            else:
                entry.update(dict.fromkeys(wanted))
    return {k: tuple(v) for k, v in out.items() if v}


def topological_order(keys: list[Key], deps: Mapping[Key, tuple[Key, ...]]) -> list[Key]:
    """``keys`` reordered so every dependency comes before its dependents; otherwise the given
    order is kept (stable). Raises ``ValueError`` on a cycle.

    A depth-first walk with an explicit stack: a recursive closure would reference itself, and
    that cycle would keep every walk's bookkeeping alive until the cyclic collector ran (the
    simulator freezes the collector's generations between reconciles: sim/driver/collector.py)."""
    index = {k: n for n, k in enumerate(keys)}
    last = len(keys)
    out: list[Key] = []
    placed: set[Key] = set()
    visiting: set[Key] = set()  # on the walk's stack
    for root in keys:
        if root in placed:
            continue
        # the usual case, a root whose dependencies are all placed or undeclared (a fleet declares
        # them first): the walk below would place it alone, right away
        ds = deps.get(root)
        if not ds or placed.issuperset(ds) or all(d in placed or d not in index for d in ds):
            placed.add(root)
            out.append(root)
            continue
        visiting.add(root)
        stack = [(root, iter(sorted(deps.get(root, ()), key=lambda d: index.get(d, last))))]
        while stack:
            key, pending = stack[-1]
            for dep in pending:
                if dep not in index or dep in placed:
                    continue
                if dep in visiting:
                    raise ValueError(f"dependency cycle through {label(dep)}")
                visiting.add(dep)
                stack.append((dep, iter(sorted(deps.get(dep, ()), key=lambda d: index.get(d, last)))))
                break
            else:
                stack.pop()
                visiting.discard(key)
                placed.add(key)
                out.append(key)
    return out


def deletion_order(keys: list[Key], deps: Mapping[Key, tuple[Key, ...]]) -> list[Key]:
    """Dependents before their dependencies: the reverse of the registration order, reordered
    where the (previous run's) dependencies require it."""
    return list(reversed(topological_order(keys, deps)))
