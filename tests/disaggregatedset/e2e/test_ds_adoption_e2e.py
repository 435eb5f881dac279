"""Adoption of a DisaggregatedSet fleet the upstream DS + LWS controllers created (docs/modes.md,
"Adoption"): after ``kubectl delete ds,lws --cascade=orphan`` — or with the controllers gone and
the CRs still there — operator-free pulumi-lws takes the fleet over with zero pod restarts and no
pod template change (the observed DS revision whose children's content matches the spec is the
target under upstream's ``rev8``; each child keeps upstream's LWS template hash), drops the
ownerReferences to the DS and child LWS CRs, and an image change then rolls as a normal staged DS
rollout with the per-role budgets holding at every observed state.

The fleet is seeded as upstream leaves it: the DS CR, one child LeaderWorkerSet CR per role
(``<ds>-0-<rev8>-<role>``, owned by the DS, upstream's child shape: DS labels, no pulumi-lws env),
each child's ControllerRevision written with upstream's serialisation (labelled only with the LWS
name and hash), the child expanded by the project's LWS pipeline (its names and labels mirror the
LWS controller's; the StatefulSets carry the child's labels, as upstream's ``mergeMetadata``),
upstream's ownerReferences on what each CR owns, and the DS's ``<lws>-prv`` Services."""

from __future__ import annotations

import pytest
from support.adoption_helpers import (
    ADOPTING_STACK,
)
from support.ds_adoption_helpers import (
    ds_pods,
    manifest,
    upstream_ds_fleet,
)
from support.ds_helpers import (
    Bounds,
    converged_on,
    lane_sequence,
)

from pulumi_lws.core.features.adoption import DISOWN_REASON, POD_OWNER_REASON
from pulumi_lws.disaggregatedset import names
from pulumi_lws.disaggregatedset.revision import compute_revision
from pulumi_lws.disaggregatedset.workload import WORKLOAD as DS
from pulumi_lws.lws import labels as L
from pulumi_lws.sim.cluster.store import meta


@pytest.mark.parametrize("identity", [None, "Hash"])
def test_orphaned_ds_fleet_is_adopted_without_restarts_then_rolls_within_budgets(identity):
    f = upstream_ds_fleet(identity)
    spec = f.spec
    assert f.upstream_key != compute_revision(spec)  # upstream's rev8, not ours
    assert all(k.startswith(f"{spec.name}-0-{f.upstream_key}-") for k in ds_pods(f))
    f.orphan_delete()
    pods, templates = ds_pods(f), f.templates()
    assert len(pods) == (3 + 2) * 2
    bounds = Bounds(spec=lambda: f.spec)
    for _ in range(4):  # several operator-free reconciles, from an empty stack
        result, applied, _ = f.up(ADOPTING_STACK)
        assert result.stage.complete and result.stage.blocker is None, result.stage.summary()
        assert result.stage.target_revision == f.upstream_key
        assert not applied.replaced and not applied.deleted
        f.cluster.step(f.cluster.clock.now + 10)
        assert ds_pods(f) == pods  # zero pod restarts, no pod recreated
        assert f.templates() == templates  # no pod template (label) change at adoption
    assert not [a for a in result.stage.actions if a.verb == "disown"]

    f.manifest = manifest(image="img:2", identity=identity)  # a normal staged rollout, budgets at every state
    bounds(f.cluster, f.cluster.clock.now)  # armed: every role ready at its target
    assert bounds.armed
    for _ in range(200):
        result, _, _ = f.up(ADOPTING_STACK)
        bounds(f.cluster, f.cluster.clock.now)
        if result.stage.complete and result.stage.blocker is None and not converged_on(f.cluster, f.spec):
            break
        f.cluster.step(f.cluster.clock.now + 1.0)
        bounds(f.cluster, f.cluster.clock.now)
    assert result.stage.target_revision == compute_revision(f.spec) != f.upstream_key
    assert not converged_on(f.cluster, f.spec), converged_on(f.cluster, f.spec)
    assert not bounds.violations, bounds.violations[:5]
    assert bounds.max_running[(0, "prefill")] <= 3 + 1 and bounds.min_ready[(0, "prefill")] >= 3 - 1
    assert bounds.max_running[(0, "decode")] <= 2 + 1 and bounds.min_ready[(0, "decode")] >= 2
    images = {c["image"] for p in f.cluster.list("Pod", "default") for c in p["spec"]["containers"]}
    assert images == {"img:2"}
    staged = lane_sequence(bounds, ["prefill", "decode"], compute_revision(f.spec))
    assert staged[0] == ((3, 2), (0, 0)) and staged[-1] == ((0, 0), (3, 2)) and len(staged) >= 4, staged


def test_ds_fleet_whose_crs_still_exist_is_disowned_from_ds_and_child_lws():
    f = upstream_ds_fleet()
    owned = f.upstream_owned()
    assert any(o.endswith(names.SERVICE_SUFFIX) for o in owned) and any(
        o.startswith("ControllerRevision/") for o in owned
    )
    # the child's own headless Service carries only the LWS name label upstream (like its
    # revisions), so the DS scope reads it once the first apply stamped the DS labels on it: the
    # second reconcile disowns it (docs/modes.md: wait for a preview without disown before
    # deleting the CRs without --cascade=orphan)
    first, _, _ = f.up(ADOPTING_STACK)
    second, _, _ = f.up(ADOPTING_STACK)
    disown = [a for r in (first, second) for a in r.stage.actions if a.verb == "disown" and a.reason == DISOWN_REASON]
    assert sorted(f"{a.kind}/{a.name}" for a in disown) == owned and all(a.uid for a in disown)
    assert {f"{a.kind}/{a.name}" for a in second.stage.actions if a.verb == "disown"} == {
        f"Service/{c}" for c in f.child_uids
    }
    # the Ordinal roles' worker StatefulSets: their leader Pods' references, dropped by the first
    pod_owned = {a.name for a in first.stage.actions if a.reason == POD_OWNER_REASON}
    assert (
        pod_owned
        == {
            meta(s)["name"]
            for s in f.cluster.list("StatefulSet", "default")
            if L.GROUP_INDEX in (meta(s).get("labels") or {})
        }
        and len(pod_owned) == 3 + 2
    )
    assert not [s for s in f.cluster.list("StatefulSet", "default") if meta(s).get("ownerReferences")]
    assert not f.upstream_owned()
    pods = ds_pods(f)
    for uid in f.crs():  # deleting the CRs no longer cascades into the adopted fleet
        cr = f.cluster.store.by_uid(uid)
        f.cluster.store.delete(cr["kind"], "default", meta(cr)["name"], propagation="Background")
    f.cluster.step(f.cluster.clock.now + 30)
    assert ds_pods(f) == pods
    again, _, _ = f.up(ADOPTING_STACK)
    assert not [a for a in again.stage.actions if a.verb == "disown"]
    assert again.stage.target_revision == f.upstream_key


def test_a_changed_template_is_not_adopted():
    """Content match needs every role's template equal: another image rolls to pulumi-lws's key."""
    f = upstream_ds_fleet()
    f.orphan_delete()
    f.manifest = manifest(image="img:2")
    result, _, _ = f.up(ADOPTING_STACK)
    assert result.stage.target_revision == compute_revision(f.spec) and not result.stage.complete


def test_foreign_revisions_read_by_the_existence_selector_form_no_child():
    """The scope reads every LWS-labelled ControllerRevision of the namespace (one LIST); those of
    another LeaderWorkerSet, or of another DisaggregatedSet's child, form no part of this one."""
    from pulumi_lws.disaggregatedset.observe import observe_children, split_by_child

    f = upstream_ds_fleet()
    f.orphan_delete()
    f.up(ADOPTING_STACK)
    for name, labels in (("web", {}), ("other-0-abcdef12-decode", {"disaggregatedset.x-k8s.io/name": "other"})):
        f.cluster.create(
            {
                "apiVersion": "apps/v1",
                "kind": "ControllerRevision",
                "metadata": {
                    "name": f"{name}-x-1",
                    "namespace": "default",
                    "labels": {L.NAME: name, L.TEMPLATE_REVISION_HASH: "x", **labels},
                },
                "data": {"spec": {"leaderWorkerTemplate": {}}},
                "revision": 1,
            }
        )
    snapshot = f.cluster.observe(DS.scope(f.spec))
    assert snapshot.get("ControllerRevision", "web-x-1") is not None  # read: the LIST is by label existence
    assert set(split_by_child(snapshot)) == {f"pd-0-{f.upstream_key}-{r}" for r in ("prefill", "decode")}
    assert len(observe_children(f.spec, snapshot)) == 2
    result, applied, _ = f.up(ADOPTING_STACK)
    assert result.stage.complete and result.stage.target_revision == f.upstream_key and not applied.deleted
