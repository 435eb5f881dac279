"""DisaggregatedSet observation (observe.py): the one scope, the per-child split, and the child
readings (replicas, ready, initial-replicas, creation order) read back from the simulator."""

from __future__ import annotations

import pathlib
import sys

import pytest

from pulumi_lws.core.contract.snapshot import Snapshot, labels_of
from pulumi_lws.disaggregatedset import labels as DL
from pulumi_lws.disaggregatedset.observe import (
    ds_scope,
    observe_children,
    parse_initial_replicas,
    revisions_newest_first,
    split_by_child,
)
from pulumi_lws.disaggregatedset.render import render_children, services
from pulumi_lws.disaggregatedset.revision import compute_revision
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.observe import LWS_KINDS, lws_scope

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "render"))
from ds_render_base import NS, load, manifest, plan, role, steady, with_image
from support.sim_helpers import cluster, run_until

BASE = manifest(role("prefill", 2, size=2), role("decode", 1))


def snap(c) -> Snapshot:
    return c.observe(ds_scope(NS, "ds"))


def up(c, ds, children, *, svc_revisions=()):
    out = render_children(ds, children, snap(c))
    c.apply(list(out.manifests) + services(ds, svc_revisions, range(ds.slices)), dependencies=out.dependencies)
    c.execute(NS, [a for stage in out.stages.values() for a in stage.actions])  # the children's actions


def test_one_scope_for_the_whole_set() -> None:
    scope = ds_scope("ns", "ds")
    assert (scope.namespace, dict(scope.selector), scope.kinds, scope.nodes) == (
        "ns",
        {DL.NAME: "ds"},
        LWS_KINDS,
        False,
    )
    assert ds_scope("ns", "ds", nodes=True).nodes


def test_children_read_back_from_the_simulator() -> None:
    c = cluster()
    old = load(BASE)
    a = compute_revision(old)
    up(c, old, steady(old))
    assert {ch.name: ch.ready for ch in observe_children(old, snap(c))} == {
        f"ds-0-{a}-prefill": 0,
        f"ds-0-{a}-decode": 0,
    }
    run_until(c, 10)
    first = {ch.role: ch for ch in observe_children(old, snap(c))}
    assert {r: (ch.replicas, ch.ready, ch.initial_replicas, ch.slice, ch.revision) for r, ch in first.items()} == {
        "prefill": (2, 2, None, 0, a),
        "decode": (1, 1, None, 0, a),
    }
    assert all(ch.workload and not ch.being_deleted and not ch.hash_mode for ch in first.values())

    new = load(with_image(BASE, 0, "img:v2"))
    b = compute_revision(new)
    up(
        c,
        new,
        [
            plan(0, a, "prefill", 2, initial=2),
            plan(0, a, "decode", 1, initial=1),
            plan(0, b, "prefill", 1),
            plan(0, b, "decode", 0),
        ],
        svc_revisions=[a],
    )
    run_until(c, 20)
    seen = {(ch.revision, ch.role): ch for ch in observe_children(new, snap(c))}
    assert {k: (ch.replicas, ch.ready, ch.initial_replicas) for k, ch in seen.items()} == {
        (a, "prefill"): (2, 2, 2),
        (a, "decode"): (1, 1, 1),
        (b, "prefill"): (1, 1, None),
        (b, "decode"): (0, 0, None),
    }
    assert seen[(b, "prefill")].created > seen[(a, "prefill")].created
    assert seen[(a, "prefill")].created == first["prefill"].created  # re-declaring keeps the objects
    assert revisions_newest_first(list(seen.values()), 0) == [b, a]
    assert revisions_newest_first(list(seen.values()), 1) == []


def test_split_by_child_isolates_children() -> None:
    c = cluster(nodes=[{"name": "n1", "labels": {"zone": "a"}, "capacity": {"cpu": "64", "pods": "110"}}])
    ds = load(manifest(role("prefill", 2, size=2), role("decode", 1), slices=2))
    rev = compute_revision(ds)
    up(c, ds, steady(ds), svc_revisions=[rev])
    run_until(c, 10)
    whole = c.observe(ds_scope(NS, "ds", nodes=True))
    parts = split_by_child(whole)
    assert sorted(parts) == sorted(f"ds-{s}-{rev}-{r}" for s in (0, 1) for r in ("prefill", "decode"))
    assigned = 0
    for name, part in parts.items():
        assert part.now == whole.now
        assert part.get("Node", "n1") is not None
        own = [o for o in part if o["kind"] != "Node"]
        assert own and all(labels_of(o)[L.NAME] == name for o in own)
        assert {labels_of(o)[DL.SLICE] for o in own} == {name.split("-")[1]}
        assigned += len(own)
    dsvc = [o for o in whole if o["kind"] == "Service" and o["metadata"]["name"].endswith("-prv")]
    assert len(dsvc) == 4  # the DS Services are read by the scope but belong to no child
    assert assigned == len(whole) - 1 - len(dsvc)
    for name, part in parts.items():  # each part is what the child LWS reconcile alone would read
        own = {(o["kind"], o["metadata"]["name"]) for o in part if o["kind"] != "Node"}
        alone = {(o["kind"], o["metadata"]["name"]) for o in c.observe(lws_scope(NS, name))}
        assert own == alone


def test_hash_child_replicas_from_the_deployment() -> None:
    c = cluster()
    ds = load(manifest(role("prefill", 2, size=2, groupIdentity="Hash"), role("decode", 1)))
    for t in (5, 10, 15):  # Hash workers are rendered once their leader pods exist: a few reconciles
        up(c, ds, steady(ds))
        run_until(c, t)
    seen = {ch.role: ch for ch in observe_children(ds, snap(c))}
    assert seen["prefill"].hash_mode and not seen["decode"].hash_mode
    assert (seen["prefill"].replicas, seen["prefill"].ready) == (2, 2)


def _obj(
    kind: str,
    name: str,
    child: str,
    *,
    ds: str = "ds",
    slice_: str | None = "0",
    deleting: bool = False,
    created: str = "2026-01-01T00:00:00Z",
    annotations: dict | None = None,
    ds_labels: bool = True,
) -> dict:
    labels = {L.NAME: child}
    if ds_labels:
        labels.update({DL.NAME: ds, DL.ROLE: "decode", DL.REVISION: "abcd1234"})
        if slice_ is not None:
            labels[DL.SLICE] = slice_
    meta = {
        "name": name,
        "namespace": NS,
        "labels": labels,
        "creationTimestamp": created,
        "annotations": annotations or {},
    }
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:01:00Z"
    return {"kind": kind, "metadata": meta, "spec": {"replicas": 3}}


def test_literal_readings_deleting_partial_foreign_and_legacy() -> None:
    ds = load(BASE)
    objs = [
        # a child whose leader StatefulSet is being deleted; replicas from the annotation, not spec
        _obj(
            "StatefulSet",
            "c1",
            "c1",
            deleting=True,
            created="2026-01-01T00:00:05Z",
            annotations={L.REPLICAS: "2", DL.INITIAL_REPLICAS: "x"},
        ),
        _obj("ControllerRevision", "c1-k-1", "c1", created="2026-01-01T00:00:01Z"),
        # a child with no leader workload left: only terminating pods (identity from their labels)
        _obj("Pod", "c2-0", "c2", deleting=True),
        # a legacy (pre-slices) object: slice 0
        _obj("StatefulSet", "c3", "c3", slice_=None, annotations={L.REPLICAS: "1", DL.INITIAL_REPLICAS: "4"}),
        # another DisaggregatedSet's child and an unlabelled LWS object: not ours
        _obj("StatefulSet", "c4", "c4", ds="other"),
        _obj("StatefulSet", "c5", "c5", ds_labels=False),
    ]
    seen = {ch.name: ch for ch in observe_children(ds, Snapshot.of(objs))}
    assert sorted(seen) == ["c1", "c2", "c3"]
    c1, c2, c3 = seen["c1"], seen["c2"], seen["c3"]
    assert (c1.replicas, c1.being_deleted, c1.workload, c1.initial_replicas) == (2, True, True, None)
    assert c1.created == pytest.approx(1767225601.0)  # the earliest object, not the workload
    assert (c2.replicas, c2.ready, c2.being_deleted, c2.workload, c2.role) == (0, 0, True, False, "decode")
    assert (c3.slice, c3.replicas, c3.initial_replicas, c3.being_deleted) == (0, 1, 4, False)
    assert c3.key == "0/decode/abcd1234"


@pytest.mark.parametrize(
    "raw, want",
    [("3", 3), ("+3", 3), ("-1", -1), ("0", 0), ("x", None), ("", None), (" 3", None), ("3.0", None), (None, None)],
)
def test_parse_initial_replicas_as_strconv_atoi(raw, want) -> None:
    assert parse_initial_replicas(raw) == want
