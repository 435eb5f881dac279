"""A :class:`SimCluster` as plain, versioned JSON data, and back (``pulumi-lws up`` keeps its
simulated cluster between runs in ``.pulumi-lws/<stack>/cluster.json``).

What is kept: every stored object exactly as the store holds it (server-set metadata and the
simulator's ``_sim_*`` bookkeeping: creation instant, kubelet timings, deletion deadlines), the
clock (time and the seeded RNG's state), the counters that name things (uids, resourceVersions,
pod and cluster IPs), the kubelet configuration, and Pulumi's per-stack view of the applier
(what each stack last registered, pending replacements, the last dependencies).

What is not: caches and indexes (``Store._observed``, the owner index, the kubelet's quiet set,
controllers' skip epochs). They are rebuilt on load; each of them only saves work (their own
docstrings say so), so a reloaded cluster behaves exactly as the one that was saved:
``dump -> load -> reconcile`` equals ``reconcile`` on the original (tests/sim/cluster/test_persist.py).

Invariant: :data:`FORMAT`/:data:`VERSION` name the layout; :func:`load_cluster` refuses any other
(a :class:`StateFormatError` naming the file's version), never guesses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from pulumi_lws.sim.cluster.kubelet import KubeletConfig, Override, Timing
from pulumi_lws.sim.cluster.simcluster import SimCluster

FORMAT = "pulumi-lws/sim-cluster"
VERSION = 1
_TIMING = "__timing__"


class StateFormatError(ValueError):
    """A saved cluster in another format or version than this release reads (bad input, exit 2)."""


def _encode(value: Any) -> Any:
    """JSON-shaped data; the kubelet's :class:`Timing` (the one non-JSON value objects hold) tagged."""
    if isinstance(value, Timing):
        return {_TIMING: asdict(value)}
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {_TIMING}:
            return Timing(**value[_TIMING])
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def _key(key: tuple[str, str, str]) -> str:
    return "/".join(key)


def _unkey(text: str) -> tuple[str, str, str]:
    kind, namespace, name = text.split("/", 2)
    return kind, namespace, name


def _rng_state(state: Any) -> Any:
    return [state[0], list(state[1]), state[2]]


def dump_cluster(cluster: SimCluster) -> dict[str, Any]:
    """The whole simulated cluster as JSON-shaped data (see the module docstring)."""
    store, applier, kubelet = cluster.store, cluster.applier, cluster.kubelet
    if not cluster.statefulsets.history_objects:  # the internal history lives in the controller, not the store
        raise ValueError("only a cluster keeping StatefulSet revisions as ControllerRevision objects can be saved")
    objects = sorted(store._by_uid.values(), key=lambda o: store.creation_order(o["metadata"]["uid"]))
    return {
        "format": FORMAT,
        "version": VERSION,
        "clock": {"now": cluster.clock.now, "rng": _rng_state(cluster.clock.rng.getstate())},
        "counters": {
            "version": store.version,
            "uid": store._uid_counter,
            "clusterIP": store._ip_counter,
            "podIP": kubelet._ip,
        },
        "kubelet": {
            "default": asdict(kubelet.config.default),
            "overrides": [asdict(o) for o in kubelet.config.overrides],
            "terminationGrace": kubelet.config.termination_grace,
        },
        "objects": [{"seq": store.creation_order(o["metadata"]["uid"]), "object": _encode(o)} for o in objects],
        "stacks": {
            stack: [{"key": _key(k), "manifest": _encode(m)} for k, m in state.items()]
            for stack, state in applier.state.items()
        },
        "pending": [
            {"key": _key(k), "stack": stack, "manifest": _encode(m)} for k, (stack, m) in applier.pending.items()
        ],
        "dependencies": {
            stack: {_key(k): [_key(d) for d in ds] for k, ds in deps.items()}
            for stack, deps in applier.dependencies.items()
        },
    }


def load_cluster(data: Mapping[str, Any], *, where: str = "cluster state") -> SimCluster:
    """A cluster equal to the one :func:`dump_cluster` saved (raises :class:`StateFormatError` on another format)."""
    if data.get("format") != FORMAT or data.get("version") != VERSION:
        raise StateFormatError(
            f"{where}: not a {FORMAT} v{VERSION} file (format={data.get('format')!r}, "
            f"version={data.get('version')!r}); remove it (pulumi-lws destroy) to start afresh"
        )
    k = data["kubelet"]
    config = KubeletConfig(
        default=Timing(**k["default"]),
        overrides=[Override(**o) for o in k["overrides"]],
        termination_grace=float(k["terminationGrace"]),
    )
    cluster = SimCluster(kubelet=config)
    clock, store = cluster.clock, cluster.store
    clock.now = float(data["clock"]["now"])
    rng = data["clock"]["rng"]
    clock.rng.setstate((rng[0], tuple(rng[1]), rng[2]))
    for entry in data["objects"]:
        obj = _decode(entry["object"])
        m = obj["metadata"]
        kind = obj["kind"]
        store._objs.setdefault(kind, {})[(m["namespace"], m["name"])] = obj
        store._by_uid[m["uid"]] = obj
        store._seq[m["uid"]] = int(entry["seq"])
        store._index_owners(obj)
        if m.get("deletionTimestamp") or (m.get("ownerReferences") and store.all_owners_gone(obj)):
            store._gc_candidate(m["uid"])
        if kind == "Pod":
            store.pods_written.add(m["uid"])
            if (
                not (obj.get("spec") or {}).get("nodeName")
                and not m.get("deletionTimestamp")
                and (obj.get("status") or {}).get("phase") == "Pending"
            ):
                store.unbound_pods.add(m["uid"])
    store._sorted.clear()
    counters = data["counters"]
    store.version, store._uid_counter = int(counters["version"]), int(counters["uid"])
    store._ip_counter, cluster.kubelet._ip = int(counters["clusterIP"]), int(counters["podIP"])
    store._epochs.clear()  # owner epochs only let controllers skip work; fresh controllers look at everything
    applier = cluster.applier
    applier.state = {
        stack: {_unkey(e["key"]): _decode(e["manifest"]) for e in entries} for stack, entries in data["stacks"].items()
    }
    applier.pending = {_unkey(e["key"]): (e["stack"], _decode(e["manifest"])) for e in data["pending"]}
    applier.dependencies = {
        stack: {_unkey(k): tuple(_unkey(d) for d in ds) for k, ds in deps.items()}
        for stack, deps in data["dependencies"].items()
    }
    return cluster
