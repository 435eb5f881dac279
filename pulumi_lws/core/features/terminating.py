"""Never declare again, in the same reconcile, an object the snapshot shows terminating (pure).

An object with a ``deletionTimestamp`` is on its way out: whoever deleted it (Pulumi dropping
it from an earlier stage, a delete-before-replace, the garbage collector following an owner,
``kubectl delete``), nothing declared now can keep it. Declaring it again meets the terminating
object: pulumi-kubernetes' server-side-apply create or update lands on it (``provider/pkg/await/
await.go`` ``Creation`` sends a PATCH: every 4.x from 4.18 on, and on 4.29+ with
``upsertExistingObjects``), then the object disappears while the stack's state says it exists,
and Pulumi, which diffs against its state and not the cluster, never creates it again until a
``pulumi refresh``; a plain create (4.29+ without upsert) answers ``409 AlreadyExists``.

So every API's ``Workload.reconcile`` passes its result through :func:`without_terminating`:
a manifest whose object the snapshot shows terminating is left out of this reconcile, its
dependents lose that dependency (what they waited for is not declared), and the stage notes it.
Left out, the object is deleted from the stack's state if it was there (the provider's DELETE
of a terminating object succeeds), and the next reconcile, once it is gone, declares it again:
a plain create. The planners need no rule of their own: a group whose worker StatefulSet is
terminating is already "terminating" in their views, not ready.

Workload children are also deleted in the background (``core.k8s.manifests.WORKLOAD_ANNOTATIONS``),
so with this project's own deletes the object is gone before the next reconcile reads the
cluster; this module covers the rest (objects registered before that annotation existed, an
object with a finalizer, the garbage collector, a user).

Invariant: the result declares no object the snapshot shows terminating; everything else is
unchanged (same manifests in the same order, same dependencies but the edges to what was left
out); a snapshot with no terminating declared object returns ``reconciled`` itself.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from pulumi_lws.core.contract.dependencies import Ref
from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.core.contract.workload import Reconciled


def terminating_refs(manifests: tuple[Mapping[str, Any], ...], snapshot: Snapshot) -> list[Ref]:
    """(kind, name) of every manifest whose object ``snapshot`` shows terminating, in order.
    One pass over the snapshot's objects but its pods (never declared; most of a fleet's objects)
    finds the terminating ones; the manifests are read only when there are some."""
    deleting = {
        (kind, meta["name"])
        for kind in snapshot.kinds()
        if kind != "Pod"
        for obj in snapshot.list(kind)
        if (meta := obj.get("metadata")) and meta.get("deletionTimestamp")
    }
    if not deleting:
        return []
    return [ref for m in manifests if (ref := (m["kind"], m["metadata"]["name"])) in deleting]


def without_terminating(reconciled: Reconciled, snapshot: Snapshot) -> Reconciled:
    """``reconciled`` without the manifests whose objects are terminating (module docstring)."""
    if not snapshot.objects:
        return reconciled
    dropped = terminating_refs(reconciled.manifests, snapshot)
    if not dropped:
        return reconciled
    gone = set(dropped)
    manifests = tuple(m for m in reconciled.manifests if (m["kind"], m["metadata"]["name"]) not in gone)
    dependencies: dict[Ref, tuple[Ref, ...]] = {}
    for ref, deps in reconciled.dependencies.items():
        if ref in gone:
            continue
        kept = tuple(d for d in deps if d not in gone)
        if kept:
            dependencies[ref] = kept
    names = ", ".join(f"{kind} {name}" for kind, name in dropped)
    note = f"not declared while terminating (declared again once gone): {names}"
    stage = dataclasses.replace(reconciled.stage, notes=reconciled.stage.notes + (note,))
    return dataclasses.replace(reconciled, stage=stage, manifests=manifests, dependencies=dependencies)
