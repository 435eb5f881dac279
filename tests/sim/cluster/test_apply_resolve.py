"""sim/cluster/apply.py: ``resolve_dependencies`` (which resolves each dependency ref once per
namespace) and ``topological_order`` (whose usual case is one set test) equal the plain
definitions they replaced, on any mix of short and full refs, namespaces, cluster-scoped kinds,
undeclared dependencies, self-references and repeats; a cycle is refused by both."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pulumi_lws.sim.cluster.apply_order import Key, resolve_dependencies, topological_order
from pulumi_lws.sim.cluster.store import Store

KINDS = ("StatefulSet", "Service", "ControllerRevision", "Node")  # Node: cluster-scoped
NAMES = ("a", "b", "c")
NAMESPACES = ("default", "other")


def reference_resolve(desired: Mapping[Key, object], dependencies: Mapping[tuple, Iterable[tuple]]) -> dict:
    """The definition: every ref resolved in the dependent's namespace, one at a time."""
    out: dict[Key, dict[Key, None]] = {}
    for dependent, deps in dependencies.items():
        if len(dependent) == 2:
            keys = [k for k in desired if (k[0], k[2]) == tuple(dependent)]
        else:
            keys = [(dependent[0], dependent[1], dependent[2])]
        for key in keys:
            if key not in desired:
                continue
            for d in deps:
                full = (d[0], Store._ns(d[0], key[1]), d[1]) if len(d) == 2 else (d[0], d[1], d[2])
                if full in desired and full != key:
                    out.setdefault(key, {})[full] = None
            out.setdefault(key, {})
    return {k: tuple(v) for k, v in out.items() if v}


def reference_order(keys: list[Key], deps: Mapping[Key, tuple[Key, ...]]) -> list[Key]:
    """The definition: a depth-first walk in the given order, dependencies by their position."""
    index = {k: n for n, k in enumerate(keys)}
    out: list[Key] = []
    state: dict[Key, int] = {}

    def visit(key: Key) -> None:
        if state.get(key) == 2:
            return
        if state.get(key) == 1:
            raise ValueError("cycle")
        state[key] = 1
        for d in sorted(deps.get(key, ()), key=lambda d: index.get(d, len(keys))):
            if d in index:
                visit(d)
        state[key] = 2
        out.append(key)

    for k in keys:
        visit(k)
    return out


full_key = st.tuples(st.sampled_from(KINDS), st.sampled_from(NAMESPACES), st.sampled_from(NAMES)).map(
    lambda k: (k[0], Store._ns(k[0], k[1]), k[2])
)
ref = st.one_of(st.tuples(st.sampled_from(KINDS), st.sampled_from(NAMES)), full_key)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(full_key, unique=True, max_size=12),
    st.dictionaries(ref, st.lists(ref, max_size=4).map(tuple), max_size=10),
)
def test_resolved_dependencies_equal_the_definition(keys: list[Key], dependencies: dict) -> None:
    desired = {k: {} for k in keys}
    got = resolve_dependencies(desired, dependencies)
    want = reference_resolve(desired, dependencies)
    assert got == want
    assert list(got) == list(want)
    try:
        expected = reference_order(keys, got)
    except ValueError:
        with pytest.raises(ValueError):
            topological_order(keys, got)
        return
    assert topological_order(keys, got) == expected
