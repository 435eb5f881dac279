"""A worker StatefulSet deleted and declared again under the same name — replaced by a
``subdomainPolicy`` change (its ``serviceName`` is immutable: delete before replace in one
``pulumi up``), or scaled away and back within a few reconciles — never meets its terminating
predecessor, and no object the stack's state holds is lost.

Two rules make it so (docs/component.md "How pulumi-kubernetes treats the children"):
StatefulSets are deleted with ``pulumi.com/deletionPropagationPolicy: background`` (gone at once:
the delete-before-replace creates in the same ``up``), and no reconcile declares an object the
snapshot shows terminating (``core.features.terminating``). The simulator's applier fails an apply
on a terminating object (sim/cluster/apply.py), so the regression tests below — each rule taken
away — show the defect the real provider would have (a create landing on a terminating object).
"""

from __future__ import annotations

import copy

import pytest
from support.control_helpers import LwsHarness

from pulumi_lws.core.k8s import keys as K
from pulumi_lws.lws.render import worker_memo
from pulumi_lws.sim.cluster.kubelet import KubeletConfig, Timing
from pulumi_lws.sim.cluster.simcluster import SimCluster


def manifest(name: str, replicas: int = 3, subdomain: str = "Shared") -> dict:
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "networkConfig": {"subdomainPolicy": subdomain},
            "rolloutStrategy": {"rollingUpdateConfiguration": {"maxUnavailable": 1, "maxSurge": 0}},
            "leaderWorkerTemplate": {
                "size": 3,
                # long enough that a foreground delete would keep the StatefulSet for several reconciles
                "workerTemplate": {
                    "spec": {"terminationGracePeriodSeconds": 20, "containers": [{"name": "c", "image": "i:1"}]}
                },
            },
        },
    }


def harness(doc: dict) -> LwsHarness:
    cluster = SimCluster(seed=3, kubelet=KubeletConfig(default=Timing(1.0, 2.0)))
    h = LwsHarness(cluster, copy.deepcopy(doc))
    h.STACK = f"default/{doc['metadata']['name']}"
    h.warm_up()
    return h


def up(h: LwsHarness):
    """One ``pulumi up``, checked: nothing failed, and everything the stack's state holds exists
    and is not terminating (no object Pulumi believes in is lost)."""
    result, applied, _ = h.up()
    lost = [
        "/".join(key)
        for key in h.cluster.applier.state[h.STACK]
        if (obj := h.cluster.store.get(*key)) is None or obj["metadata"].get("deletionTimestamp")
    ]
    return result, applied, lost


def workers(h: LwsHarness, name: str) -> dict[str, dict]:
    return {
        s["metadata"]["name"]: s
        for s in h.cluster.list("StatefulSet", "default")
        if s["metadata"]["name"] != name and not s["metadata"].get("deletionTimestamp")
    }


def run(h: LwsHarness, rounds: int = 150) -> tuple[list[str], list[str], list[str]]:
    """Reconcile every simulated second until converged: (replaced, errors, lost) over the run."""
    replaced, errors, lost = [], [], []
    for _ in range(rounds):
        _, applied, gone = up(h)
        replaced += applied.replaced
        errors += applied.errors
        lost += gone
        if h.converged():
            break
        h.cluster.step(h.cluster.clock.now + 1.0)
    return replaced, errors, lost


def test_a_subdomain_policy_change_replaces_each_worker_statefulset_in_one_up():
    h = harness(manifest("sub"))
    assert {s["spec"]["serviceName"] for s in workers(h, "sub").values()} == {"sub"}
    h.change_spec(manifest("sub", subdomain="UniquePerReplica"))
    replaced, errors, lost = run(h)
    assert not errors and not lost and h.converged()
    # each group's worker StatefulSet was replaced (serviceName) — deleted and created again in the same up
    assert sorted(r.split(" ")[0] for r in replaced) == [f"StatefulSet/sub-{i}" for i in range(3)]
    assert all("spec.serviceName" in r for r in replaced)
    assert {n: s["spec"]["serviceName"] for n, s in workers(h, "sub").items()} == {
        f"sub-{i}": f"sub-{i}" for i in range(3)
    }
    assert not h.cluster.applier.pending  # nothing parked waiting for a predecessor


def test_groups_scaled_down_then_up_again_within_two_reconciles():
    h = harness(manifest("scale", replicas=4))
    h.change_spec(manifest("scale", replicas=2))
    _, applied, lost = up(h)
    assert sorted(applied.deleted) == ["StatefulSet/scale-2", "StatefulSet/scale-3"] and not lost
    assert sorted(workers(h, "scale")) == ["scale-0", "scale-1"]  # gone at once: background
    assert any(p["metadata"]["name"].startswith("scale-2-") for p in h.cluster.list("Pod", "default"))  # pods linger
    h.cluster.step(h.cluster.clock.now + 1.0)
    h.change_spec(manifest("scale", replicas=4))  # back up while the old workers still terminate
    _, applied, lost = up(h)
    assert not applied.errors and not lost
    assert {"StatefulSet/scale-2", "StatefulSet/scale-3"} <= set(applied.created)
    _, errors, lost = run(h)
    assert not errors and not lost and h.converged()
    assert sorted(workers(h, "scale")) == [f"scale-{i}" for i in range(4)]
    pods = {p["metadata"]["name"]: p for p in h.cluster.list("Pod", "default")}
    owners = {n: s["metadata"]["uid"] for n, s in workers(h, "scale").items()}
    for i in (2, 3):  # the recreated groups' workers belong to the new StatefulSets
        for j in (1, 2):
            assert pods[f"scale-{i}-{j}"]["metadata"]["ownerReferences"][0]["uid"] == owners[f"scale-{i}"]


# ---- regressions: each rule taken away, the simulator shows the defect -------------------------


@pytest.fixture
def foreground(monkeypatch):
    """Worker StatefulSets registered as before the fix: skipAwait, default (Foreground) propagation."""
    monkeypatch.setattr("pulumi_lws.lws.render.common.WORKLOAD_ANNOTATIONS", {K.SKIP_AWAIT: "true"})
    monkeypatch.setattr(worker_memo, "_last", {})


@pytest.fixture
def unguarded(monkeypatch):
    """The planners declaring an object the snapshot shows terminating, as before the fix."""
    monkeypatch.setattr("pulumi_lws.lws.workload.without_terminating", lambda result, snapshot: result)


def test_regression_foreground_replacement_meets_its_terminating_predecessor(foreground):
    h = harness(manifest("fgsub"))
    h.change_spec(manifest("fgsub", subdomain="UniquePerReplica"))
    _, errors, _ = run(h, rounds=6)
    assert errors and all("terminating" in e for e in errors)
    assert errors[0].startswith("replace StatefulSet/fgsub-")


def test_regression_foreground_scale_up_is_held_back_by_the_guard(foreground):
    """With foreground deletes but the guard: the terminating workers are not declared until gone."""
    h = harness(manifest("fgscale", replicas=4))
    h.change_spec(manifest("fgscale", replicas=2))
    up(h)
    h.change_spec(manifest("fgscale", replicas=4))
    result, applied, lost = up(h)
    assert not applied.errors and not lost
    assert any("not declared while terminating" in n for n in result.stage.notes)
    _, errors, lost = run(h, rounds=60)
    assert not errors and not lost and h.converged()


def test_regression_unguarded_foreground_scale_up_creates_on_a_terminating_object(foreground, unguarded):
    h = harness(manifest("ugscale", replicas=4))
    h.change_spec(manifest("ugscale", replicas=2))
    up(h)
    h.change_spec(manifest("ugscale", replicas=4))
    _, applied, _ = up(h)
    assert sorted(e.split(":")[0] for e in applied.errors) == [
        "create StatefulSet/ugscale-2",
        "create StatefulSet/ugscale-3",
    ]
