"""Random mutations of valid specs, for the "every API alike" fuzz (tests/core/contract/test_workload_fuzz.py).

Seeds are the upstream sample manifests (tests/manifests_upstream*) and the examples' workload
manifests, each API's own. A mutation replaces, deletes or adds a value anywhere in the document
(top level to the depths of a pod template), duplicates a list item or renames a key; the values
are the ones that broke shells before: wrong types, int32/int64 edges, negative and huge numbers,
non-finite floats, percent strings, label-breaking strings, empty and nested containers.

:func:`run_pipeline` drives one document through what every command does with it — parse and
validate, reconcile on an empty cluster and on the seed's rendered fleet, and the update rules
both ways — so the only exception it may raise is :class:`SpecError`.
"""

from __future__ import annotations

import copy
import functools
import math
import pathlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import yaml

import pulumi_lws.workloads  # noqa: F401  (registers the built-in APIs)
from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.core.contract.snapshot import EMPTY, Snapshot
from pulumi_lws.core.contract.workload import workload_for

ROOT = pathlib.Path(__file__).resolve().parent.parent
SEED_DIRS = ("tests/manifests_upstream", "tests/manifests_upstream_kthena", "tests/manifests_upstream_ds", "examples")
KINDS = ("LeaderWorkerSet", "ModelServing", "DisaggregatedSet")

#: values that broke a parser, a planner or a renderer before (issue 23's fuzz). Counts stay at
#: most 100 or beyond the int32 range: a count of 2**31 - 1 is a valid spec of two billion objects
#: (accepted, rendered in time proportional to it), which no fuzz can wait for.
VALUES: tuple[Any, ...] = (
    None,
    0,
    1,
    -1,
    2,
    3,
    7,
    100,
    2**31,
    -(2**31) - 1,
    2**40,
    2**63,
    -(2**63) - 1,
    1.5,
    2.0,
    math.inf,
    -math.inf,
    math.nan,
    1e300,
    True,
    False,
    "",
    "x",
    "3",
    "-1",
    "50%",
    "100%",
    "200%",
    "-1%",
    "%",
    "1e3",
    "1Gi",
    "500m",
    ".",
    "+",
    "1e999999999",
    "a b",
    "Bad_NS",
    "UPPER",
    "-dash",
    "x" * 70,
    "a/b/c",
    [],
    [1],
    [None],
    ["x"],
    [{}],
    {},
    {"a": 1},
    {"bogusField": 1},
    {"": ""},
    {"a b": "c d"},
    {"x/y": "z"},
    {"name": "c", "image": "img:1"},
    {"containers": []},
)
KEYS = (
    "bogusField",
    "name",
    "replicas",
    "spec",
    "metadata",
    "containers",
    "resources",
    "requests",
    "labels",
    "annotations",
    "workerTemplate",
    "leaderTemplate",
    "maxSurge",
    "partition",
)


@functools.cache
def seeds(kind: str) -> tuple[Mapping[str, Any], ...]:
    """Every valid ``kind`` document of the seed folders (file order; the list is never empty)."""
    workload, out = workload_for(kind), []
    for folder in SEED_DIRS:
        for path in sorted((ROOT / folder).rglob("*.yaml")):
            for doc in yaml.safe_load_all(path.read_text()):
                if isinstance(doc, dict) and doc.get("kind") == kind:
                    try:
                        workload.parse(doc)
                    except SpecError:
                        continue
                    out.append(doc)
    assert out, f"no valid {kind} seed"
    return tuple(out)


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _nodes(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _nodes(v, path + (i,))


def mutate(doc: Mapping[str, Any], choose: Callable[[int], int], n: int = 1) -> dict[str, Any]:
    """``doc`` with ``n`` random edits; ``choose(k)`` picks an index in ``range(k)`` (a seeded
    ``random.Random.randrange`` or hypothesis' ``st.integers`` draw)."""
    out = copy.deepcopy(dict(doc))
    for _ in range(n):
        nodes = list(_nodes(out))[1:]
        path, node = nodes[choose(len(nodes))]
        parent: Any = out
        for part in path[:-1]:
            parent = parent[part]
        op, value = choose(6), copy.deepcopy(VALUES[choose(len(VALUES))])
        if op <= 2:
            parent[path[-1]] = value
        elif op == 3 and isinstance(parent, dict):
            del parent[path[-1]]
        elif op == 4 and isinstance(node, dict):
            node[KEYS[choose(len(KEYS))]] = value
        elif op == 4 and isinstance(node, list) and node:
            node.append(copy.deepcopy(node[choose(len(node))]))
        elif op == 5 and isinstance(parent, dict):
            parent[KEYS[choose(len(KEYS))]] = parent.pop(path[-1])
        else:
            parent[path[-1]] = value
    return out


def run_pipeline(kind: str, doc: Mapping[str, Any], seed: Mapping[str, Any]) -> bool:
    """Parse + validate ``doc``, reconcile it on an empty cluster and on ``seed``'s first stage,
    and check the update rules both ways. True when ``doc`` was accepted; raises only
    :class:`SpecError` (anything else is a bug the fuzz reports)."""
    workload = workload_for(kind)
    old = workload.parse(seed)
    try:
        spec = workload.parse(doc)
    except SpecError:
        return False
    first = workload.reconcile(spec, EMPTY, workload.options())
    assert first.manifests, "an accepted spec renders something"
    deployed = Snapshot.of(workload.reconcile(old, EMPTY, workload.options()).manifests)
    workload.reconcile(spec, deployed, workload.options())
    for new, previous in ((spec, old), (old, spec)):
        try:
            workload.validate_update(new, previous)
        except SpecError:
            pass
    return True
