"""Adoption of a LeaderWorkerSet fleet the upstream controller created (Ordinal and Hash): after
``kubectl delete lws --cascade=orphan`` — or with the controller gone and the CR still there —
one operator-free ``pulumi up`` takes the fleet over with zero pod restarts and no pod template
change (the ControllerRevision whose content matches the spec is the target, although upstream's
hash computed its key), drops upstream's ownerReferences, and the next template change rolls as
usual."""

from __future__ import annotations

import copy

import pytest
from support.adoption_helpers import (
    lws_upstream_revision,
    orphan_delete,
    upstream_fleet,
)

from pulumi_lws.core.features.adoption import DISOWN_REASON, POD_OWNER_REASON
from pulumi_lws.lws.revision import revision_key
from pulumi_lws.workloads import workload_for

LWS = workload_for("LeaderWorkerSet")


def manifest(identity: str, image: str = "nginx:1.27") -> dict:
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 3,
            "groupIdentity": identity,
            "rolloutStrategy": {"rollingUpdateConfiguration": {"maxUnavailable": 1, "maxSurge": 1}},
            "leaderWorkerTemplate": {
                "size": 2,
                "workerTemplate": {
                    "spec": {"terminationGracePeriodSeconds": 1, "containers": [{"name": "c", "image": image}]}
                },
            },
        },
    }


def fleet(identity: str):
    return upstream_fleet(
        LWS,
        manifest(identity),
        lws_upstream_revision,
        owned_kinds=("StatefulSet", "Deployment", "Service", "ControllerRevision"),
    )


@pytest.mark.parametrize("identity", ["Ordinal", "Hash"])
def test_orphaned_fleet_is_adopted_without_restarts_then_rolls(identity):
    f = fleet(identity)
    assert f.upstream_key != revision_key(f.spec)  # upstream's hash, not ours
    assert f.upstream_owned()  # the controller owned its objects
    orphan_delete(f)
    pods, templates = f.pods(), f.templates()
    assert pods and all(
        labels == templates[k]["metadata"]["labels"]
        for k, labels in ((k, t["metadata"]["labels"]) for k, t in templates.items())
    )

    result, applied, _ = f.up()  # the first operator-free pulumi up, from an empty stack
    assert result.stage.complete and result.stage.blocker is None
    assert result.stage.target_revision == f.upstream_key
    assert not applied.replaced and not applied.deleted
    f.cluster.step(f.cluster.clock.now + 30)
    assert f.pods() == pods  # zero pod restarts, no pod recreated
    assert f.templates() == templates  # no pod template (label) change at adoption

    f.manifest = manifest(identity, image="nginx:1.28")  # a normal staged rollout follows
    done = f.converge()
    assert done.stage.target_revision == revision_key(f.spec) != f.upstream_key
    images = {c["image"] for p in f.cluster.list("Pod", "default") for c in p["spec"]["containers"]}
    assert images == {"nginx:1.28"} and len(f.pods()) == 6


def test_fleet_whose_cr_still_exists_is_disowned_before_the_cr_goes():
    f = fleet("Ordinal")
    owned = f.upstream_owned()
    result, _, executed = f.up()
    every = [a for a in result.stage.actions if a.verb == "disown"]
    disown = [a for a in every if a.reason == DISOWN_REASON]  # the CR's references
    assert sorted(f"{a.kind}/{a.name}" for a in disown) == owned and len(executed) >= len(every)
    assert {a.kind for a in disown} >= {"StatefulSet", "ControllerRevision"} and all(a.uid for a in disown)
    pod_owned = [a for a in every if a.reason == POD_OWNER_REASON]  # the leader Pods' (Ordinal workers)
    assert sorted(a.name for a in pod_owned) == ["web-0", "web-1", "web-2"] and all(a.uid for a in pod_owned)
    assert result.stage.actions[: len(pod_owned)] == tuple(pod_owned)  # before any other action
    assert not f.upstream_owned()
    pods = f.pods()
    cr = f.cluster.store.by_uid(f.cr_uid)
    f.cluster.store.delete(cr["kind"], "default", "web", propagation="Background")  # no longer cascades
    f.cluster.step(f.cluster.clock.now + 30)
    assert f.pods() == pods
    again, _, _ = f.up()
    assert not [a for a in again.stage.actions if a.verb == "disown"]


def test_content_match_needs_equal_templates():
    """A revision with other covered fields is not adopted as the target: the spec rolls."""
    f = fleet("Ordinal")
    orphan_delete(f)
    f.manifest = copy.deepcopy(manifest("Ordinal", image="nginx:1.28"))
    result, _, _ = f.up()
    assert result.stage.target_revision == revision_key(f.spec) and not result.stage.complete
