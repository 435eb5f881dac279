"""Scenario files (YAML) for ``pulumi-lws simulate``; the format is documented in docs/simulator.md.

Invariants: loading is pure (no cluster is touched, no file is written); unknown keys are errors
(a typo never silently changes a run); every time is in simulated seconds from scenario start;
paths are relative to the scenario file, except in a program scenario ``manifest:`` and every
update's ``file:``, which name files of the program's project directory (the workspace).

What a loaded scenario is (:class:`Scenario`, :class:`Update`, :class:`Fault`, :class:`Event`) is
:mod:`.scenario_types`'s; this module parses and checks the file.
"""

from __future__ import annotations

import copy
import pathlib
from collections.abc import Mapping
from typing import Any, TypedDict

import yaml

from pulumi_lws.core.contract.errors import FieldError, SpecError
from pulumi_lws.sim.cluster.kubelet import KubeletConfig, Override, Timing

# the loaded scenario's values live in scenario_types; re-exported: readers import them from here
from pulumi_lws.sim.driver.scenario_types import EVENT_VERBS, FAULT_TYPES, Event, Fault, Scenario, Update
from pulumi_lws.sim.driver.workspace import (
    load_workload_manifest,
    merge_patch,  # noqa: F401 - re-exported: also imported from here by tests
)

TOP_KEYS = {
    "name",
    "description",
    "seed",
    "engine",
    "namespace",
    "manifest",
    "objects",
    "program",
    "start",
    "updates",
    "nodes",
    "kubelet",
    "faults",
    "events",
    "reconcile",
    "stop",
    "cluster",
    "apply",
}
#: ``start: converged``: the most reconciles the warm-up (stepped, seeded or synthesised) runs
#: before it gives up as "did not converge"
WARMUP_ROUNDS = 50


class _Errors:
    def __init__(self, where: str) -> None:
        self.where = where
        self.items: list[FieldError] = []

    def add(self, path: str, msg: str, value: Any = None) -> None:
        self.items.append(FieldError(path, msg, value))

    def unknown(self, path: str, data: Mapping[str, Any], allowed: set[str]) -> None:
        for k in sorted(set(data) - allowed):
            self.add(f"{path}{k}", "unknown field")

    def raise_if_any(self) -> None:
        if self.items:
            raise SpecError("Scenario", self.where, self.items)


def load_scenario(source: str | pathlib.Path | Mapping[str, Any], base: pathlib.Path | None = None) -> Scenario:
    """Parse a scenario from a path, YAML text or dict; raise SpecError listing every problem."""
    path: pathlib.Path | None = None
    if isinstance(source, Mapping):
        data = dict(source)
    else:
        if isinstance(source, pathlib.Path) or "\n" not in str(source):
            path = pathlib.Path(source)
            data = yaml.safe_load(path.read_text()) or {}
        else:
            data = yaml.safe_load(str(source)) or {}
    base = base or (path.parent if path else pathlib.Path.cwd())
    err = _Errors(str(path or data.get("name") or "scenario"))
    if not isinstance(data, Mapping):
        err.add("<root>", "expected a mapping")
        err.raise_if_any()
    err.unknown("", data, TOP_KEYS)
    sc = Scenario(
        name=str(data.get("name") or (path.stem if path else "scenario")),
        path=path,
        description=str(data.get("description") or ""),
        seed=int(data.get("seed") or 0),
        namespace=str(data.get("namespace") or "default"),
        start=str(data.get("start") or "empty"),
    )
    sc.engine = data.get("engine")
    if sc.engine not in (None, "pure", "pulumi"):
        err.add("engine", "must be pure or pulumi", sc.engine)
    if sc.start not in ("empty", "converged"):
        err.add("start", "must be empty or converged", sc.start)
    if data.get("program"):
        sc.program = (base / str(data["program"])).resolve()
        if not sc.program.is_file():
            err.add("program", "file not found", str(sc.program))
    if data.get("manifest") is not None:
        _scenario_manifest(sc, data["manifest"], base, err)
    sc.objects = [_manifest(o, base, f"objects[{i}]", err) for i, o in enumerate(data.get("objects") or [])]
    if sc.manifest is None and sc.program is None:
        err.add("manifest", "Required value: a scenario needs a manifest or a program")
    sc.updates = [_update(u, base, i, err) for i, u in enumerate(data.get("updates") or [])]
    _check_updates(sc, err)
    sc.nodes = _nodes(data.get("nodes") or [], err)
    sc.kubelet = _kubelet(data.get("kubelet") or {}, err)
    sc.faults = [_fault(f, i, err) for i, f in enumerate(data.get("faults") or [])]
    sc.events = _events(data.get("events"), err)
    _reconcile(sc, data.get("reconcile") or {}, err)
    _stop(sc, data.get("stop") or {}, err)
    cluster = data.get("cluster") or {}
    err.unknown("cluster.", cluster, {"statefulSetRevisions"})
    sc.statefulset_history = str(cluster.get("statefulSetRevisions", "objects"))
    if sc.statefulset_history not in ("objects", "internal"):
        err.add("cluster.statefulSetRevisions", "must be objects or internal", sc.statefulset_history)
    apply_cfg = data.get("apply") or {}
    err.unknown("apply.", apply_cfg, {"keep"})
    sc.apply_keep = float(apply_cfg.get("keep", 1.0))
    if not 0.0 < sc.apply_keep <= 1.0:
        err.add("apply.keep", "must be in (0, 1]", sc.apply_keep)
    err.raise_if_any()
    return sc


def _manifest(value: Any, base: pathlib.Path, where: str, err: _Errors) -> dict[str, Any]:
    if isinstance(value, Mapping):
        return copy.deepcopy(dict(value))
    p = base / str(value)
    if not p.exists():
        err.add(where, "file not found", str(p))
        return {}
    return load_workload_manifest(p)


def _scenario_manifest(sc: Scenario, value: Any, base: pathlib.Path, err: _Errors) -> None:
    """Inline or a file; in a program scenario a file is relative to the program's directory."""
    if sc.program is not None and not isinstance(value, Mapping):
        sc.manifest_file = str(value)
        sc.manifest = _manifest(value, sc.program.parent, "manifest", err)
    else:
        sc.manifest = _manifest(value, base, "manifest", err)


def _update(u: Mapping[str, Any], base: pathlib.Path, i: int, err: _Errors) -> Update:
    err.unknown(f"updates[{i}].", u, {"at", "manifest", "patch", "file", "replace"})
    given = [k for k in ("manifest", "patch", "replace") if k in u]
    if "file" in u:
        if sorted(given) not in (["patch"], ["replace"]):
            err.add(f"updates[{i}]", "an update with file: needs exactly one of patch or replace")
    elif given not in (["manifest"], ["patch"]):
        err.add(f"updates[{i}]", "exactly one of manifest or patch is required (replace needs file:)")
    for key in ("patch", "replace"):
        if key in u and not isinstance(u[key], Mapping):
            err.add(f"updates[{i}].{key}", "expected a mapping", u[key])
    manifest = _manifest(u["manifest"], base, f"updates[{i}].manifest", err) if "manifest" in u else None
    return Update(
        at=float(u.get("at", 0)),
        manifest=manifest,
        patch=u.get("patch"),
        file=None if u.get("file") is None else str(u["file"]),
        replace=u.get("replace"),
    )


def _inside(relative: str) -> bool:
    """A path the workspace accepts (``Workspace.path``): relative, no ``..``."""
    path = pathlib.PurePosixPath(relative)
    return not path.is_absolute() and ".." not in path.parts


def _check_updates(sc: Scenario, err: _Errors) -> None:
    """File edits need a program (its directory is the workspace); spec updates of a program
    scenario need ``manifest:`` to name the program's LWS file, or they would not reach the program."""
    if sc.program is not None and sc.manifest_file is not None and not _inside(sc.manifest_file):
        err.add("manifest", "must be a relative path inside the program directory (the workspace)", sc.manifest_file)
    for i, u in enumerate(sc.updates):
        if u.file is not None and not _inside(u.file):
            err.add(
                f"updates[{i}].file", "must be a relative path inside the program directory (the workspace)", u.file
            )
        elif u.file is not None and sc.program is None:
            err.add(f"updates[{i}].file", "file updates need a program: (the workspace is its directory)")
        elif u.file is not None and sc.program is not None and not (sc.program.parent / u.file).is_file():
            err.add(f"updates[{i}].file", "file not found in the program directory", u.file)
        elif u.file is None and sc.program is not None and sc.manifest_file is None:
            err.add(
                f"updates[{i}]",
                "in a program scenario a spec update needs manifest: <file the program reads> (or use file:)",
            )


def _nodes(nodes: list[Mapping[str, Any]], err: _Errors) -> list[dict[str, Any]]:
    out = []
    for i, n in enumerate(nodes):
        err.unknown(f"nodes[{i}].", n, {"name", "count", "labels", "capacity"})
        if not n.get("name"):
            err.add(f"nodes[{i}].name", "Required value")
            continue
        count = n.get("count")
        names = [str(n["name"])] if count is None else [f"{n['name']}-{k}" for k in range(int(count))]
        for name in names:
            labels = {"kubernetes.io/hostname": name, **{k: str(v) for k, v in (n.get("labels") or {}).items()}}
            out.append({"name": name, "labels": labels, "capacity": dict(n.get("capacity") or {})})
    return out


_TIMING_KEYS = {"startSeconds": "start", "readySeconds": "ready", "neverReady": "never_ready"}


class _TimingFields(TypedDict, total=False):
    """The keyword arguments of :class:`Timing` / :class:`Override` a ``kubelet:`` mapping sets."""

    start: float
    ready: float
    never_ready: bool


def _timing(m: Mapping[str, Any]) -> _TimingFields:
    """The timing keys ``m`` gives (``_TIMING_KEYS``), converted to the fields' types."""
    out: _TimingFields = {}
    if "startSeconds" in m:
        out["start"] = float(m["startSeconds"])
    if "readySeconds" in m:
        out["ready"] = float(m["readySeconds"])
    if "neverReady" in m:
        out["never_ready"] = bool(m["neverReady"])
    return out


def _images(k: Mapping[str, Any], key: str, err: _Errors) -> tuple[str, ...]:
    """``kubelet.failImages`` / ``kubelet.pullErrors``: a list of non-empty image names (or globs)."""
    value = k.get(key)
    if value is None:
        return ()
    if not isinstance(value, list):
        err.add(f"kubelet.{key}", "expected a list of images", value)
        return ()
    out = []
    for i, image in enumerate(value):
        if not isinstance(image, str) or not image.strip():
            err.add(f"kubelet.{key}[{i}]", "expected an image name (a non-empty string)", image)
        else:
            out.append(image.strip())
    return tuple(out)


def _kubelet(k: Mapping[str, Any], err: _Errors) -> KubeletConfig:
    if not isinstance(k, Mapping):
        err.add("kubelet", "expected a mapping", k)
        return KubeletConfig()
    err.unknown(
        "kubelet.", k, set(_TIMING_KEYS) | {"terminationGracePeriodSeconds", "overrides", "failImages", "pullErrors"}
    )
    default = Timing(**_timing(k))
    overrides = []
    for i, o in enumerate(k.get("overrides") or []):
        err.unknown(f"kubelet.overrides[{i}].", o, set(_TIMING_KEYS) | {"pod", "group", "lws", "after", "image"})
        overrides.append(
            Override(
                pod=o.get("pod"),
                image=None if o.get("image") is None else str(o["image"]),
                group=None if o.get("group") is None else str(o["group"]),
                lws=o.get("lws"),
                after=None if o.get("after") is None else float(o["after"]),
                **_timing(o),
            )
        )
    return KubeletConfig(
        default=default,
        overrides=overrides,
        termination_grace=float(k.get("terminationGracePeriodSeconds", 1.0)),
        fail_images=_images(k, "failImages", err),
        pull_errors=_images(k, "pullErrors", err),
    )


def _time(value: Any, path: str, err: _Errors) -> float:
    """A simulated time in seconds (>= 0); an error at ``path`` otherwise (0.0 returned)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        err.add(path, "expected a time in seconds >= 0", value)
        return 0.0
    return float(value)


def _events(events: Any, err: _Errors) -> list[Event]:
    """``events:``: a list of ``{at: T, <verb>: ...}`` with exactly one verb of :data:`EVENT_VERBS`."""
    if events is None:
        return []
    if not isinstance(events, list):
        err.add("events", "expected a list of {at: T, <event>: ...}", events)
        return []
    out = []
    for i, e in enumerate(events):
        where = f"events[{i}]"
        if not isinstance(e, Mapping):
            err.add(where, "expected a mapping {at: T, <event>: ...}", e)
            continue
        err.unknown(f"{where}.", e, {"at", "gpusPerNode", *EVENT_VERBS})
        verbs = [v for v in EVENT_VERBS if v in e]
        if len(verbs) != 1:
            err.add(where, f"exactly one of {', '.join(EVENT_VERBS)} is required", sorted(verbs) or None)
            continue
        verb, value = verbs[0], e[verbs[0]]
        at = _time(e.get("at", 0), f"{where}.at", err)
        if "gpusPerNode" in e and verb != "addNodes":
            err.add(f"{where}.gpusPerNode", "only with addNodes")
        event = _event(verb, value, at, e, f"{where}.{verb}", err)
        if event is not None:
            out.append(event)
    return out


def _event(verb: str, value: Any, at: float, e: Mapping[str, Any], path: str, err: _Errors) -> Event | None:
    if verb == "annotate":
        if not isinstance(value, Mapping):
            err.add(path, "expected {pods: GLOB, annotations: {...}}", value)
            return None
        err.unknown(f"{path}.", value, {"pods", "annotations"})
        glob, annotations = value.get("pods"), value.get("annotations")
        ok = True
        if not isinstance(glob, str) or not glob:
            err.add(f"{path}.pods", "Required value: a pod-name glob", glob)
            ok = False
        if not isinstance(annotations, Mapping) or not annotations:
            err.add(f"{path}.annotations", "Required value: a mapping of annotations (null deletes one)", annotations)
            ok = False
        elif any(
            not isinstance(k, str) or not (v is None or isinstance(v, (str, int, float, bool)))
            for k, v in annotations.items()
        ):
            err.add(f"{path}.annotations", "keys must be strings, values strings (or null)", dict(annotations))
            ok = False
        if not ok or not isinstance(glob, str) or not isinstance(annotations, Mapping):  # (the checks above)
            return None
        return Event(at, verb, glob, annotations=dict(annotations))
    if verb == "addNodes":
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            err.add(path, "expected a node count >= 1", value)
            return None
        gpus = e.get("gpusPerNode")
        if gpus is not None and (isinstance(gpus, bool) or not isinstance(gpus, (int, float)) or gpus <= 0):
            err.add(path.rsplit(".", 1)[0] + ".gpusPerNode", "expected a number > 0", gpus)
            return None
        return Event(at, verb, value, gpus_per_node=None if gpus is None else float(gpus))
    if not isinstance(value, str) or not value:
        what = "a pod-name glob" if verb == "deletePods" else "a node name"
        err.add(path, f"expected {what}", value)
        return None
    return Event(at, verb, value)


def _fault(f: Mapping[str, Any], i: int, err: _Errors) -> Fault:
    err.unknown(f"faults[{i}].", f, {"at", "type", "pod", "node"})
    ftype = str(f.get("type"))
    if ftype not in FAULT_TYPES:
        err.add(f"faults[{i}].type", f"must be one of {', '.join(FAULT_TYPES)}", f.get("type"))
    target = f.get("node") if ftype == "node-loss" else f.get("pod")
    if not target:
        err.add(f"faults[{i}]", "node-loss needs node:, pod faults need pod:")
    return Fault(at=float(f.get("at", 0)), type=ftype, target=str(target))


def _reconcile(sc: Scenario, r: Mapping[str, Any], err: _Errors) -> None:
    err.unknown("reconcile.", r, {"interval", "tick", "updateOrder", "gangProvider", "checkCapacity"})
    sc.interval = float(r.get("interval", sc.interval))
    sc.tick = float(r.get("tick", sc.tick))
    sc.update_order = r.get("updateOrder")
    sc.gang_provider = r.get("gangProvider")
    check = r.get("checkCapacity")
    if check is not None and not isinstance(check, bool):
        err.add("reconcile.checkCapacity", "expected true or false", check)
    elif check is not None and sc.program is not None:
        err.add(
            "reconcile.checkCapacity",
            "pure engine only: a program scenario sets the component argument check_capacity",
            check,
        )
    else:
        sc.check_capacity = check
    if sc.tick <= 0 or sc.interval < sc.tick:
        err.add("reconcile", "need 0 < tick <= interval", {"tick": sc.tick, "interval": sc.interval})


def _stop(sc: Scenario, s: Mapping[str, Any], err: _Errors) -> None:
    err.unknown("stop.", s, {"maxTime", "whenConverged", "requireConverged"})
    sc.max_time = float(s.get("maxTime", sc.max_time))
    sc.when_converged = bool(s.get("whenConverged", True))
    sc.require_converged = bool(s.get("requireConverged", True))
