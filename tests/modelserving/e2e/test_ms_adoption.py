"""Adoption of a ModelServing fleet keyed by upstream's revision hash: the ControllerRevision
Kthena writes (``<ms>-<key>``, roles as Go serialises them) has the spec's content under a key
pulumi-lws does not compute; after ``kubectl delete modelserving --cascade=orphan`` one
operator-free ``pulumi up`` adopts it with zero pod restarts and no pod template change, drops
upstream's ownerReferences, and an image change then rolls as usual.

The fleet has pulumi-lws's shape (a StatefulSet per role replica) with upstream's keys and owners:
Kthena itself creates bare Pods, which no StatefulSet adopts without restarting them
(docs/modes.md, "Adoption: ModelServing")."""

from __future__ import annotations

import copy
import pathlib

import yaml
from support.adoption_helpers import (
    go_style_key,
    orphan_delete,
    upstream_fleet,
    with_null_timestamps,
)

from pulumi_lws.modelserving import labels as ML
from pulumi_lws.modelserving.revision import modelserving_revision, revision_data
from pulumi_lws.workloads import workload_for

MS = workload_for("ModelServing")
ROOT = pathlib.Path(__file__).resolve().parents[3]
PD = yaml.safe_load((ROOT / "examples" / "modelserving-pd" / "ms.yaml").read_text())


def with_image(doc: dict, image: str) -> dict:
    out = copy.deepcopy(doc)
    for role in out["spec"]["template"]["roles"]:
        for key in ("entryTemplate", "workerTemplate"):
            if role.get(key):
                for c in role[key]["spec"]["containers"]:
                    c["image"] = image
    return out


def upstream_revision(spec) -> tuple[str, dict]:
    roles = []
    for role in revision_data(spec)["data"]:
        role = dict(role)
        for key in ("entryTemplate", "workerTemplate"):
            if role.get(key) is not None:
                role[key] = with_null_timestamps(role[key])
        roles.append(role)
    data = {"data": roles}
    key = go_style_key(data)
    return key, {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": f"{spec.name}-{key}",
            "namespace": spec.namespace,
            "labels": {ML.NAME: spec.name, ML.REVISION: key},
        },
        "data": data,
        "revision": 1,
    }


def test_orphaned_fleet_is_adopted_without_restarts_then_rolls():
    f = upstream_fleet(
        MS, PD, upstream_revision, owned_kinds=("StatefulSet", "Service", "PodGroup", "ControllerRevision")
    )
    assert f.upstream_key != modelserving_revision(f.spec) and f.upstream_owned()
    revisions = {p["metadata"]["labels"].get(ML.REVISION) for p in f.cluster.list("Pod", "default")}
    assert revisions == {f.upstream_key}  # the pods run on upstream's key
    orphan_delete(f)
    pods, templates = f.pods(), f.templates()

    result, applied, _ = f.up()
    assert result.stage.complete and result.stage.blocker is None
    assert result.stage.target_revision == f.upstream_key
    assert not applied.replaced and not applied.deleted
    f.cluster.step(f.cluster.clock.now + 30)
    assert f.pods() == pods and f.templates() == templates  # zero restarts, no pod template change
    assert MS.status(f.spec, f.cluster.observe(MS.scope(f.spec)), result.stage)["updateRevision"] == f.upstream_key

    f.manifest = with_image(PD, "nginxinc/nginx-unprivileged:1.29")
    done = f.converge()
    assert done.stage.target_revision == modelserving_revision(f.spec) != f.upstream_key
    images = {c["image"] for p in f.cluster.list("Pod", "default") for c in p["spec"]["containers"]}
    assert images == {"nginxinc/nginx-unprivileged:1.29"}


def test_a_kept_cr_is_disowned():
    f = upstream_fleet(
        MS, PD, upstream_revision, owned_kinds=("StatefulSet", "Service", "PodGroup", "ControllerRevision")
    )
    owned = f.upstream_owned()
    result, _, _ = f.up()
    assert sorted(f"{a.kind}/{a.name}" for a in result.stage.actions if a.verb == "disown") == owned
    assert not f.upstream_owned()
