"""External scaling (``scaling.mode: External``, pulumi_lws/disaggregatedset/external.py): one
DisaggregatedSetRoleScaler ``<ds>-<role>`` per External role (upstream's CRD, scale subresource),
seeded once (1 fresh, current replicas on a Static -> External switch) and then echoed back as
observed — never a value of pulumi-lws's own; the observed ``spec.replicas`` is the role's target
at every reconcile, including mid-rollout (lws#1022), and the rollout converges to it; its
``status.replicas``/``status.selector`` (what an HPA reads) are written with the ``patch-status``
action. The DS scope lists the scaler kind exactly when a role is External; the CRD is a cluster
prerequisite, never among a DisaggregatedSet's manifests (two sets in one stack never clash)."""

from __future__ import annotations

import copy

import yaml

from pulumi_lws.core.contract.snapshot import EMPTY, Snapshot
from pulumi_lws.disaggregatedset import external
from pulumi_lws.disaggregatedset import observe as ds_observe
from pulumi_lws.disaggregatedset.reconcile import external_scaling_active, role_targets
from pulumi_lws.lws.observe import LWS_KINDS
from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.workloads import workload_for

DS = workload_for("DisaggregatedSet")
NS = "default"


def manifest(image: str = "nginx:1", *, decode_external: bool = True, prefill: int = 3, name: str = "pd") -> dict:
    def role(name: str, replicas: int, external_: bool = False) -> dict:
        r = {
            "name": name,
            "spec": {
                "replicas": replicas,
                "leaderWorkerTemplate": {
                    "size": 2,
                    "workerTemplate": {"spec": {"containers": [{"name": "s", "image": image}]}},
                },
            },
        }
        if external_:
            r["scaling"] = {"mode": "External"}
        return r

    return {
        "apiVersion": DS.api_version,
        "kind": "DisaggregatedSet",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"roles": [role("prefill", prefill), role("decode", 1, decode_external)]},
    }


def kinds(result) -> list[str]:
    return [m["kind"] for m in result.manifests]


def scaler_of(result, role: str = "decode", ds: str = "pd") -> dict:
    return next(
        m for m in result.manifests if m["kind"] == external.SCALER_KIND and m["metadata"]["name"] == f"{ds}-{role}"
    )


def test_the_scope_lists_the_scaler_kind_exactly_when_a_role_is_external():
    static = DS.parse(manifest(decode_external=False))
    assert DS.scope(static).kinds == LWS_KINDS and not external_scaling_active(static)
    spec = DS.parse(manifest())
    assert DS.scope(spec).kinds == (*LWS_KINDS, external.SCALER_KIND) and external_scaling_active(spec)
    assert DS.scope(spec).selector == {"disaggregatedset.x-k8s.io/name": "pd"}
    result = DS.reconcile(static, EMPTY)
    assert external.SCALER_KIND not in kinds(result)
    assert {t.name: t.replicas for t in role_targets(spec)} == {"prefill": 3, "decode": None}


def test_the_crd_carries_upstreams_scale_subresource():
    crd = external.scaler_crd()
    assert crd["metadata"]["name"] == "disaggregatedsetrolescalers.disaggregatedset.x-k8s.io"
    (version,) = crd["spec"]["versions"]
    assert version["subresources"] == {
        "status": {},
        "scale": {
            "specReplicasPath": ".spec.replicas",
            "statusReplicasPath": ".status.replicas",
            "labelSelectorPath": ".status.selector",
        },
    }
    replicas = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["replicas"]
    assert replicas["default"] == 0 and replicas["minimum"] == 0
    assert crd["spec"]["names"]["kind"] == external.SCALER_KIND and crd["spec"]["scope"] == "Namespaced"
    assert yaml.safe_load(external.crd_yaml()) == crd  # what `python -m ...external | kubectl apply -f -` applies


def test_the_crd_is_never_declared_so_two_sets_in_one_stack_do_not_clash():
    """Two DisaggregatedSets with External roles applied as one stack: each declares only its own
    scaler (no CRD, no dependency on one); their objects never share a (kind, name)."""
    a, b = DS.parse(manifest(name="pd")), DS.parse(manifest(name="pd2"))
    ra, rb = DS.reconcile(a, EMPTY), DS.reconcile(b, EMPTY)
    for r in (ra, rb):
        assert "CustomResourceDefinition" not in kinds(r)
        assert not [d for deps in r.dependencies.values() for d in deps if d[0] == "CustomResourceDefinition"]
    keys = [(m["kind"], m["metadata"]["name"]) for m in (*ra.manifests, *rb.manifests)]
    assert len(keys) == len(set(keys))
    cluster = SimCluster(seed=1)
    cluster.apply([*ra.manifests, *rb.manifests], stack_id="one-stack")
    assert {o["metadata"]["name"] for o in cluster.list(external.SCALER_KIND)} == {"pd-decode", "pd2-decode"}


def test_a_fresh_external_role_is_seeded_with_1():
    spec = DS.parse(manifest())
    result = DS.reconcile(spec, EMPTY)
    s = scaler_of(result)
    assert s["spec"] == {"replicas": 1} and s["metadata"]["labels"]["disaggregatedset.x-k8s.io/role"] == "decode"
    assert not any(
        m["kind"] == external.SCALER_KIND and m["metadata"]["name"] == "pd-prefill" for m in result.manifests
    )
    assert not [a for a in result.stage.actions if a.verb == "patch-status"]  # nothing observed to patch yet


def test_the_observed_value_is_the_target_and_is_echoed_never_reseeded():
    spec = DS.parse(manifest())
    first = DS.reconcile(spec, EMPTY)
    objs = [copy.deepcopy(dict(m)) for m in first.manifests]
    hpa = next(o for o in objs if o["kind"] == external.SCALER_KIND)
    hpa["spec"]["replicas"] = 4  # the autoscaler wrote /scale
    result = DS.reconcile(spec, Snapshot.of(objs))
    assert scaler_of(result)["spec"] == {"replicas": 4}  # echoed, not re-seeded to 1
    decode = [m for m in result.manifests if m["kind"] == "StatefulSet" and m["metadata"]["name"].endswith("-decode")]
    assert {line.role: line.target for line in result.catalog.slices[0].roles}["decode"] == 4  # the role's target
    # ... applied in this reconcile although no pod runs yet: outside a rollout a scale-up does
    # not wait for any role's readiness (issue 24; upstream reconcileSimple; stage_planner module doc)
    assert [m["spec"]["replicas"] for m in decode] == [4] and result.stage.blocker is None
    assert external.targets(spec, Snapshot.of(objs), []) == {"decode": 4}


def test_a_static_to_external_switch_seeds_the_current_replicas():
    static = DS.parse(manifest(decode_external=False, prefill=3))
    objs = [copy.deepcopy(dict(m)) for m in DS.reconcile(static, EMPTY).manifests]
    snap = Snapshot.of(objs)
    children = ds_observe.observe_children(static, snap)
    assert external.seed("decode", children) == 1 and external.seed("prefill", children) == 3
    switched = copy.deepcopy(manifest(decode_external=False, prefill=3))
    switched["spec"]["roles"][0]["scaling"] = {"mode": "External"}  # prefill goes External
    result = DS.reconcile(DS.parse(switched), snap)
    assert scaler_of(result, "prefill")["spec"] == {"replicas": 3}  # no silent drain to 1


def test_scaler_status_is_upstreams_selector_and_replicas_over_revisions():
    spec = DS.parse(manifest())
    children = [type("C", (), {"role": "decode", "replicas": n, "being_deleted": False})() for n in (2, 3)]
    assert external.scaler_status(spec, "decode", children) == {
        "replicas": 5,
        "selector": "disaggregatedset.x-k8s.io/name=pd,disaggregatedset.x-k8s.io/role=decode,"
        "leaderworkerset.sigs.k8s.io/worker-index=0",
    }


def test_status_is_written_by_a_uid_guarded_patch_status_and_then_left_alone():
    cluster = SimCluster(seed=1)
    spec = DS.parse(manifest())
    for _ in range(2):  # create, then observe what was created
        result = DS.reconcile(spec, cluster.observe(DS.scope(spec)))
        cluster.apply(result.manifests, dependencies=result.dependencies)
    obj = cluster.get(external.SCALER_KIND, "pd-decode")
    (action,) = [a for a in result.stage.actions if a.verb == "patch-status"]
    assert (action.kind, action.name, action.uid) == (external.SCALER_KIND, "pd-decode", obj["metadata"]["uid"])
    assert action.params["status"]["replicas"] == 1 and action.params["status"]["selector"] == external.selector(
        spec, "decode"
    )
    assert "patch-status DisaggregatedSetRoleScaler/pd-decode" in action.describe()
    assert cluster.execute(NS, [action]) == ["patch-status DisaggregatedSetRoleScaler/pd-decode: ok"]
    obj = cluster.get(external.SCALER_KIND, "pd-decode")
    assert obj["status"]["replicas"] == 1 and obj["status"]["selector"].endswith("worker-index=0")
    assert obj["spec"] == {"replicas": 1}  # the status write never touches the spec
    again = DS.reconcile(spec, cluster.observe(DS.scope(spec)))
    assert not [a for a in again.stage.actions if a.verb == "patch-status"]  # in sync: nothing to write
    stale = type(action)(action.verb, action.kind, action.name, action.params, uid="recreated-uid")
    assert "uid precondition failed" in cluster.execute(NS, [stale])[0]


def _roll(cluster: SimCluster, spec, *, max_steps: int = 60, hook=None) -> list:
    """One reconcile per step (observe, plan, apply, act), then 5 s of cluster time."""
    stages = []
    for i in range(max_steps):
        if hook is not None:
            hook(i, cluster)
        snap = cluster.observe(DS.scope(spec))
        result = DS.reconcile(spec, snap)
        cluster.apply(result.manifests, dependencies=result.dependencies)
        cluster.execute(NS, list(result.stage.actions))
        stages.append(result.stage)
        cluster.step(cluster.clock.now + 5)
        if result.stage.complete and i > 0 and stages[-2].complete:
            return stages
    raise AssertionError(f"no convergence: {stages[-1].summary()}")


def _decode(cluster: SimCluster, spec) -> tuple[int, int]:
    """(old, new) decode groups observed, by the target revision."""
    from pulumi_lws.disaggregatedset.revision import compute_revision

    target = compute_revision(spec)
    kids = [
        c
        for c in ds_observe.observe_children(spec, cluster.observe(DS.scope(spec)))
        if c.role == "decode" and not c.being_deleted
    ]
    return (
        sum(c.replicas for c in kids if c.revision != target),
        sum(c.replicas for c in kids if c.revision == target),
    )


def test_scaling_mid_rollout_retargets_and_converges():
    """lws#1022: upstream blocks scaling for the whole rollout. Here the autoscaler's write in the
    middle of an image rollout becomes the new revision's target and the rollout ends there."""
    cluster = SimCluster(seed=1)
    old = DS.parse(manifest("nginx:1"))
    _roll(cluster, old)

    def hpa(value: int):
        obj = cluster.store.get(external.SCALER_KIND, NS, "pd-decode")
        obj["spec"]["replicas"] = value
        cluster.store.touch(obj)

    hpa(2)  # the autoscaler sets 2 before the image change
    _roll(cluster, old)
    assert _decode(cluster, old) == (0, 2)

    new = DS.parse(manifest("nginx:2"))
    seen: list[tuple[int, int]] = []

    def mid(i: int, c: SimCluster) -> None:
        seen.append(_decode(c, new))
        if i == 3:
            assert seen[-1][0] > 0, "still mid-rollout"  # old decode replicas still running
            hpa(4)

    stages = _roll(cluster, new, hook=mid)
    assert len(seen) > 4 and seen[4][1] < 4  # the raise to 4 happened while rolling
    assert _decode(cluster, new) == (0, 4)  # converged to the autoscaler's value
    assert cluster.get(external.SCALER_KIND, "pd-decode")["spec"]["replicas"] == 4  # never overwritten
    assert stages[-1].complete and stages[-1].blocker is None
    prefill = [c for c in ds_observe.observe_children(new, cluster.observe(DS.scope(new))) if c.role == "prefill"]
    assert [(c.revision, c.replicas) for c in prefill] == [(DS.target_revision(new), 3)]
