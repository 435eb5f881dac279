"""``pulumi-lws simulate --from OLD.yaml --to NEW.yaml``: a scenario built from a change, in memory.

:func:`scenario_from_change` is pure (no file read, nothing written): the workload (any kind the
registry models: LeaderWorkerSet, ModelServing, ...) starts converged on ``old`` (rolled out
instantly at t=0, untraced), ``new`` becomes the desired workload at t=0, the
``pure`` engine reconciles with the default kubelet timings, optionally on a node pool of ``nodes``
identical nodes (``nvidia.com/gpu`` capacity, zone label ``topology.kubernetes.io/zone``).
Both manifests are validated as the API server would, through the workload contract
(``parse``; ``validate_update(new, old)``: immutable fields); every problem raises
:class:`SpecError` with field paths.
"""

from __future__ import annotations

import copy
import string
from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_lws.core.contract.errors import FieldError, SpecError
from pulumi_lws.sim.cluster.kubelet import KubeletConfig, Timing
from pulumi_lws.sim.driver.scenario import Scenario, Update
from pulumi_lws.workloads import Workload, option_refused, workload_of

GPU = "nvidia.com/gpu"
ZONE_LABEL = "topology.kubernetes.io/zone"
#: CPU and memory of every pool node: generous, so only the GPUs (or the zones) constrain scheduling
NODE_CPU = 64
NODE_MEMORY = "512Gi"
UPDATE_ORDERS = ("ScaleFirst", "RolloutFirst")
#: ``SpecError.kind`` of an inconsistent pool/timing option (paths are the CLI flags)
OPTIONS = "Options"


def scenario_from_change(
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    *,
    nodes: int | None = None,
    gpus_per_node: float | None = None,
    zones: int | None = None,
    ready_seconds: float | None = None,
    update_order: str | None = None,
    name: str | None = None,
    description: str | None = None,
    max_time: float | None = None,
    fail_images: Sequence[str] | None = None,
) -> Scenario:
    """The scenario "converged on ``old``, ``new`` applied at t=0" (pure engine).

    ``nodes``: a pool of that many nodes ``node-<i>`` (cpu 64, memory 512Gi, plus ``gpus_per_node``
    ``nvidia.com/gpu`` when given), spread round-robin over ``zones`` zones ``zone-a``, ``zone-b``, ...
    (label ``topology.kubernetes.io/zone``; one zone by default); without ``nodes`` the cluster is
    one unbounded node. ``ready_seconds``: Running → Ready for every pod (default: the kubelet's
    default). ``update_order``: ScaleFirst (upstream, default) or RolloutFirst. ``fail_images``:
    images whose containers crash-loop (``kubelet.failImages``: "what if my new image crash-loops").

    Raises :class:`SpecError` when the pool options are inconsistent (kind ``Options``, paths are
    the CLI flags: ``--zones``), when either manifest is not a valid workload, when the two
    name different objects (kind ``Change``) or when the change is not a valid update (immutable
    fields). ``update_order`` is refused (kind ``Options``) for an API whose arguments do not take it.
    Neither argument is modified.
    """
    errors = _pool_errors(nodes, gpus_per_node, zones, ready_seconds, update_order, max_time)
    errors += [
        FieldError("--fail-image", "must be a non-empty image name", image)
        for image in fail_images or ()
        if not str(image).strip()
    ]
    if errors:
        raise SpecError(OPTIONS, None, errors)
    workload, old_spec = _valid(old, "old")
    new_workload, new_spec = _valid(new, "new")
    refused = option_refused(workload, "update_order", "--update-order") if update_order is not None else None
    if refused:
        raise SpecError(
            OPTIONS, None, [FieldError("--update-order", refused.removeprefix("--update-order "), update_order)]
        )
    if new_workload is not workload:
        raise SpecError(
            "Change",
            None,
            [
                FieldError(
                    "kind",
                    f"old and new must be the same kind (old: {workload.kind}, new: {new_workload.kind})",
                    new_workload.kind,
                )
            ],
        )
    (old_ns, old_name), (new_ns, new_name) = workload.identity(old_spec), workload.identity(new_spec)
    if old_name != new_name:
        errors.append(
            FieldError(
                "metadata.name",
                f"old and new must name the same {workload.kind} (old: {old_name!r}, new: {new_name!r})",
                new_name,
            )
        )
    if old_ns != new_ns:
        errors.append(
            FieldError(
                "metadata.namespace",
                f"old and new must be in the same namespace (old: {old_ns!r}, new: {new_ns!r})",
                new_ns,
            )
        )
    if errors:
        raise SpecError("Change", new_name or None, errors)
    workload.validate_update(new_spec, old_spec)  # update-only rules (immutable fields)

    sc = Scenario(
        name=name or new_name,
        engine="pure",
        namespace=old_ns,
        start="converged",
        description=description or f"{old_name}: the change applied at t=0 to the converged set",
        manifest=copy.deepcopy(dict(old)),
        updates=[Update(at=0.0, manifest=copy.deepcopy(dict(new)))],
        nodes=pool(nodes or 0, gpus_per_node, zones or 1),
        update_order=update_order,
    )
    if ready_seconds is not None or fail_images:
        sc.kubelet = KubeletConfig(
            default=Timing() if ready_seconds is None else Timing(ready=float(ready_seconds)),
            fail_images=tuple(str(i).strip() for i in fail_images or ()),
        )
    if max_time is not None:
        sc.max_time = float(max_time)
    return sc


def pool(nodes: int, gpus_per_node: float | None = None, zones: int = 1) -> list[dict[str, Any]]:
    """``nodes`` identical nodes in the scenario's resolved node format (empty: one unbounded node)."""
    out = []
    for i in range(nodes):
        name = f"node-{i}"
        capacity: dict[str, Any] = {"cpu": NODE_CPU, "memory": NODE_MEMORY}
        if gpus_per_node:
            capacity[GPU] = int(gpus_per_node) if float(gpus_per_node).is_integer() else gpus_per_node
        out.append(
            {
                "name": name,
                "labels": {"kubernetes.io/hostname": name, ZONE_LABEL: zone_name(i % zones)},
                "capacity": capacity,
            }
        )
    return out


def zone_name(i: int) -> str:
    """``zone-a`` ... ``zone-z``, then ``zone-26``, ..."""
    return f"zone-{string.ascii_lowercase[i]}" if i < 26 else f"zone-{i}"


def _valid(manifest: Mapping[str, Any], which: str) -> tuple[Workload, Any]:
    """The workload API of ``manifest`` (by kind) and its parsed spec; SpecError otherwise."""
    if not isinstance(manifest, Mapping):
        raise SpecError(
            "manifest", None, [FieldError("<root>", f"{which}: expected a mapping", type(manifest).__name__)]
        )
    workload = workload_of(manifest)
    if workload is None:
        from pulumi_lws.workloads import registered

        known = ", ".join(sorted(registered()))
        raise SpecError(
            "manifest",
            None,
            [FieldError("kind", f"{which}: not a workload this project models (known: {known})", manifest.get("kind"))],
        )
    return workload, workload.parse(dict(manifest))


def _pool_errors(nodes, gpus_per_node, zones, ready_seconds, update_order, max_time=None) -> list[FieldError]:
    errors = []
    if nodes is not None and (not isinstance(nodes, int) or nodes < 1):
        errors.append(FieldError("--nodes", "must be a positive integer", nodes))
    if gpus_per_node is not None and (nodes is None or gpus_per_node <= 0):
        errors.append(FieldError("--gpus-per-node", "must be > 0 and needs --nodes", gpus_per_node))
    if zones is not None:
        if nodes is None:
            errors.append(FieldError("--zones", "needs --nodes", zones))
        elif not isinstance(zones, int) or not 1 <= zones <= nodes:
            errors.append(FieldError("--zones", f"must be between 1 and --nodes ({nodes})", zones))
    if ready_seconds is not None and ready_seconds < 0:
        errors.append(FieldError("--ready-seconds", "must be >= 0", ready_seconds))
    if update_order is not None and update_order not in UPDATE_ORDERS:
        errors.append(FieldError("--update-order", f"must be one of {', '.join(UPDATE_ORDERS)}", update_order))
    if max_time is not None and not (isinstance(max_time, (int, float)) and 0 < max_time < float("inf")):
        errors.append(FieldError("--max-time", "must be a finite number of seconds > 0", max_time))
    return errors
