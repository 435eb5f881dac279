"""Adoption of a fleet the Kthena controller itself created: bare Pods owned by the ModelServing
(entry ``<ms>-<g>-<role>-<r>-0``, workers ``<ms>-<g>-<role>-<r>-<w>``), headless Services, the
ControllerRevision keyed by upstream's hash, pods labelled with upstream's ``role-template-hash``
(not pulumi-lws's). After ``kubectl delete modelserving --cascade=orphan``:

* operator-free reconciles keep every pod (same uids, same labels, no restart) and register no
  StatefulSet for them, over several runs (docs/modes.md, "Adoption: ModelServing");
* an image change rolls every group into pulumi-lws's shape (StatefulSets) within the
  ServingGroup / per-role budgets at every simulated second (``ms_helpers.Bounds``), also when
  every stage is first applied only partly (a crash) and then re-run;
* a failed pod of an adopted replica has the replica recreated in pulumi-lws's shape.
"""

from __future__ import annotations

import copy
import random

import pytest
from support.adoption_helpers import go_style_key, with_null_timestamps
from support.ms_helpers import (
    ROLE,
    SG,
    Bounds,
    Harness,
    kubelet,
    ms_manifest,
    parse,
    role,
    with_image,
)

from pulumi_lws.modelserving import labels as L
from pulumi_lws.modelserving import names
from pulumi_lws.modelserving.render import declare_all, render_modelserving
from pulumi_lws.modelserving.revision import (
    build_catalog,
    modelserving_revision,
    revision_data,
)
from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.sim.cluster.store import meta

API = "workload.serving.volcano.sh/v1alpha1"


def manifest(strategy: str) -> dict:
    roles = [role("prefill", 1, workers=1), role("decode", 2, workers=2)]
    if strategy == ROLE:
        roles = [dict(r, maxUnavailable=1) for r in roles]
    return ms_manifest(replicas=3, roles=roles, strategy=strategy)


def kthena_revision(spec) -> tuple[str, dict]:
    """The ControllerRevision as Kthena writes it (Go serialisation, upstream's key)."""
    roles = []
    for r in revision_data(spec)["data"]:
        r = dict(r)
        for key in ("entryTemplate", "workerTemplate"):
            if r.get(key) is not None:
                r[key] = with_null_timestamps(r[key])
        roles.append(r)
    data = {"data": roles}
    key = go_style_key(data)
    return key, {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": f"{spec.name}-{key}",
            "namespace": spec.namespace,
            "labels": {L.NAME: spec.name, L.REVISION: key},
        },
        "data": data,
        "revision": 1,
    }


def _pod(name: str, template: dict, owner: dict, role_hash: str, worker_index: int, service: str | None) -> dict:
    """A pod as Kthena's ``createBasePod`` makes it: no StatefulSet, WORKER_INDEX a literal."""
    tmpl = copy.deepcopy(template)
    labels = {**tmpl["metadata"]["labels"], L.ROLE_TEMPLATE_HASH: role_hash}
    spec = tmpl["spec"]
    for c in spec.get("containers") or []:
        for e in c.get("env") or []:
            if e["name"] == L.ENV_WORKER_INDEX:
                e.pop("valueFrom", None)
                e["value"] = str(worker_index)
    spec["hostname"] = name
    if service:
        spec["subdomain"] = service
    md = {"name": name, "namespace": "default", "labels": labels, "ownerReferences": [dict(owner)]}
    if tmpl["metadata"].get("annotations"):
        md["annotations"] = tmpl["metadata"]["annotations"]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}


def kthena_fleet(doc: dict, *, seed: int = 0, ready: float = 1.0) -> tuple[Harness, str, str]:
    """A converged fleet as the Kthena controller leaves it, with its CR. -> (harness, CR uid, upstream key)."""
    spec = parse(doc)
    cluster = SimCluster(seed=seed, nodes=[], kubelet=kubelet(ready))
    h = Harness(cluster, copy.deepcopy(doc))
    cr = cluster.create(
        {
            "apiVersion": API,
            "kind": "ModelServing",
            "metadata": {"name": spec.name, "namespace": spec.namespace},
            "spec": copy.deepcopy(doc["spec"]),
        }
    )
    owner = {
        "apiVersion": API,
        "kind": "ModelServing",
        "name": spec.name,
        "uid": meta(cr)["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    key, revision = kthena_revision(spec)
    revision["metadata"]["ownerReferences"] = [dict(owner)]
    cluster.create(revision)
    catalog = build_catalog(spec, [revision])
    assert catalog.target == key != modelserving_revision(spec)
    upstream_hash = {r.name: go_style_key(r.to_wire()) for r in spec.roles}  # upstream's CalRoleTemplateHash
    for m in render_modelserving(spec, declare_all(spec, catalog), catalog):
        lbl = m["metadata"]["labels"]
        if m["kind"] in ("Service", "PodGroup"):
            cluster.create({**m, "metadata": {**m["metadata"], "ownerReferences": [dict(owner)]}})
        elif m["kind"] == "StatefulSet":
            entry = names.entry_statefulset(
                spec.name, int(lbl[L.GROUP_NAME].rsplit("-", 1)[1]), lbl[L.ROLE], int(lbl[L.ROLE_ID].rsplit("-", 1)[1])
            )
            indexes = [0] if m["metadata"]["name"] == entry else range(1, m["spec"]["replicas"] + 1)
            for w in indexes:
                cluster.create(
                    _pod(
                        f"{entry}-{w}",
                        m["spec"]["template"],
                        owner,
                        upstream_hash[lbl[L.ROLE]],
                        w,
                        m["spec"]["serviceName"],
                    )
                )
    cluster.kubelet.config.instant = True
    cluster.step(cluster.clock.now + 5)
    cluster.kubelet.config.instant = False
    h.bounds = Bounds(spec=lambda: h.spec, keep_history=False)
    h.check()  # arms the floors: every group is available
    assert all(g.available for g in h.groups().values()) and len(h.groups()) == spec.replicas
    return h, meta(cr)["uid"], key


def orphan_delete(h: Harness) -> None:
    """``kubectl delete modelserving ms --cascade=orphan``."""
    h.cluster.store.delete("ModelServing", "default", "ms", propagation="Orphan")
    h.cluster.settle()


def pods(h: Harness) -> dict[str, tuple[str, dict, int]]:
    """name -> (uid, labels, restarts) of every pod."""
    out = {}
    for p in h.cluster.list("Pod", "default"):
        restarts = sum(int(c.get("restartCount") or 0) for c in (p.get("status") or {}).get("containerStatuses") or [])
        out[meta(p)["name"]] = (meta(p)["uid"], dict(meta(p)["labels"]), restarts)
    return out


def owned_by_statefulsets(h: Harness) -> bool:
    return all(
        any(r["kind"] == "StatefulSet" for r in meta(p).get("ownerReferences") or [])
        for p in h.cluster.list("Pod", "default")
    )


def adopt(h: Harness, runs: int = 4) -> None:
    """Several operator-free runs on the unchanged spec: nothing restarts, no StatefulSet appears."""
    before = pods(h)
    services = {meta(s)["name"]: meta(s)["uid"] for s in h.cluster.list("Service", "default")}
    for _ in range(runs):
        result, applied, _ = h.up()
        assert result.stage.complete and result.stage.blocker is None, h.log[-1]
        assert not applied.replaced and not applied.deleted
        assert not [a for a in result.stage.actions if a.verb == "delete"]
        assert not any(m["kind"] == "StatefulSet" for m in result.manifests)
        h.advance(10)
    assert pods(h) == before  # same uids, labels and restart counts: zero restarts
    assert not h.cluster.list("StatefulSet", "default")
    assert {meta(s)["name"]: meta(s)["uid"] for s in h.cluster.list("Service", "default")} == services
    assert not any(meta(p).get("ownerReferences") for p in h.cluster.list("Pod", "default"))


def roll(h: Harness, rng: random.Random | None = None, rounds: int = 200) -> None:
    """Run `pulumi up` once a second until converged; with ``rng``, every stage is first applied
    partly (a crash: random subset of its object changes, no actions) and then re-run."""
    for _ in range(rounds):
        if rng is not None:
            h.up(keep=rng.random(), run_actions=False)
            h.check()
        snapshot = h.snapshot()
        first = h.WORKLOAD.reconcile(h.spec, snapshot, h.WORKLOAD.options())
        again = h.WORKLOAD.reconcile(h.spec, snapshot, h.WORKLOAD.options())
        assert first.stage == again.stage and first.manifests == again.manifests  # pure
        h.up()
        h.check()
        if h.converged() and owned_by_statefulsets(h):
            return
        h.advance(1)
    raise AssertionError("did not converge:\n" + "\n".join(h.log[-8:]))


def settled(h: Harness) -> bool:
    """The stage is complete and every group available (on the adopted revision: ``Harness.converged``
    wants pulumi-lws's own key)."""
    stage = h.last.stage
    groups = h.groups()
    return (
        stage.complete
        and stage.blocker is None
        and len(groups) == h.spec.replicas
        and all(g.available for g in groups.values())
    )


def rolled(h: Harness, image: str) -> None:
    assert h.converged() and owned_by_statefulsets(h)
    spec = h.spec
    assert {c["image"] for p in h.cluster.list("Pod", "default") for c in p["spec"]["containers"]} == {image}
    assert {meta(p)["labels"][L.REVISION] for p in h.cluster.list("Pod", "default")} == {modelserving_revision(spec)}
    assert len(h.cluster.list("Pod", "default")) == spec.replicas * sum(
        r.replicas * (r.worker_replicas + 1) for r in spec.roles
    )
    assert not h.bounds.violations


@pytest.mark.parametrize("strategy", [SG, ROLE])
def test_kthena_fleet_is_adopted_without_restarts_then_rolls(strategy):
    h, _, key = kthena_fleet(manifest(strategy))
    orphan_delete(h)
    adopt(h)
    assert h.last.stage.target_revision == key
    h.change_spec(with_image(manifest(strategy), "img:2"))
    roll(h)
    rolled(h, "img:2")


def test_a_kept_cr_is_disowned_pods_included():
    h, uid, _ = kthena_fleet(manifest(SG))
    result, _, _ = h.up()
    disowned = {a.name for a in result.stage.actions if a.verb == "disown" and a.kind == "Pod"}
    assert disowned == {meta(p)["name"] for p in h.cluster.list("Pod", "default")}
    assert not any(r.get("uid") == uid for o in h.cluster.store.all() for r in meta(o).get("ownerReferences") or [])
    adopt(h)


@pytest.mark.parametrize("strategy,seed", [(SG, 1), (SG, 2), (ROLE, 3), (ROLE, 4)])
def test_crash_at_every_stage_of_the_takeover_rollout(strategy, seed):
    h, _, _ = kthena_fleet(manifest(strategy), seed=seed)
    orphan_delete(h)
    adopt(h, runs=2)
    h.change_spec(with_image(manifest(strategy), "img:2"))
    roll(h, random.Random(seed))
    rolled(h, "img:2")


def test_a_failed_pod_of_an_adopted_replica_is_recreated_in_pulumi_lws_shape():
    h, _, _ = kthena_fleet(manifest(SG))
    orphan_delete(h)
    adopt(h, runs=1)
    victim = h.cluster.store.get("Pod", "default", "ms-1-decode-0-2")
    siblings = {
        meta(p)["name"]: meta(p)["uid"]
        for p in h.cluster.list("Pod", "default")
        if meta(p)["labels"][L.GROUP_NAME] == "ms-1"
    }
    h.cluster.kubelet.fail_pod(victim)
    h.cluster.settle()
    h.bounds.disarm()  # a fault: the floors re-arm once the group is available again
    for _ in range(120):
        h.up()
        h.check()
        if settled(h) and h.cluster.store.get("StatefulSet", "default", "ms-1-decode-0") is not None:
            break
        h.advance(1)
    assert settled(h), "\n".join(h.log[-8:])
    after = {
        meta(p)["name"]: meta(p)["uid"]
        for p in h.cluster.list("Pod", "default")
        if meta(p)["labels"][L.GROUP_NAME] == "ms-1"
    }
    recreated = {n for n in after if siblings.get(n) != after[n]}
    # the failed role replica now runs as StatefulSets (workers renamed -w-<w>); the other replicas are untouched
    assert recreated == {"ms-1-decode-0-0", "ms-1-decode-0-w-1", "ms-1-decode-0-w-2"}
    assert h.cluster.store.get("StatefulSet", "default", "ms-1-decode-0") is not None
    assert h.cluster.store.get("StatefulSet", "default", "ms-1-decode-0-w") is not None
    assert {n for n in siblings if siblings[n] == after.get(n)} == set(siblings) - {
        "ms-1-decode-0-0",
        "ms-1-decode-0-1",
        "ms-1-decode-0-2",
    }


def test_role_rollout_of_one_role_keeps_the_other_roles_adopted_pods():
    """RoleRollingUpdate, only prefill's image changes: decode's adopted pods (its template hash is
    the target's) are never touched, prefill's are replaced by StatefulSets."""
    h, _, _ = kthena_fleet(manifest(ROLE))
    orphan_delete(h)
    adopt(h, runs=1)
    decode = {n: v[0] for n, v in pods(h).items() if "-decode-" in n}
    h.change_spec(with_image(manifest(ROLE), "img:2", roles=("prefill",)))
    for _ in range(200):
        h.up()
        h.check()
        if settled(h) and all(h.cluster.store.get("StatefulSet", "default", f"ms-{g}-prefill-0") for g in range(3)):
            break
        h.advance(1)
    assert settled(h), "\n".join(h.log[-8:])
    assert {n: v[0] for n, v in pods(h).items() if "-decode-" in n} == decode
    prefill = [p for p in h.cluster.list("Pod", "default") if meta(p)["labels"][L.ROLE] == "prefill"]
    assert {c["image"] for p in prefill for c in p["spec"]["containers"]} == {"img:2"}
    assert all(meta(p)["ownerReferences"][0]["kind"] == "StatefulSet" for p in prefill)
    assert not h.bounds.violations
