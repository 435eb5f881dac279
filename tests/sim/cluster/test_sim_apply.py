"""Apply like Pulumi: create, update, delete, delete-before-replace, partial applies."""

from __future__ import annotations

from support.sim_helpers import cluster, run_until, sts

from pulumi_lws.sim.cluster.apply_diff import immutable_changes


def svc(name="s", ip=None):
    spec = {"selector": {"app": "x"}, "ports": [{"port": 80}]}
    if ip:
        spec["clusterIP"] = ip
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def test_create_update_unchanged_and_delete_unregistered():
    c = cluster()
    r = c.apply([sts(), svc()])
    assert r.created == ["StatefulSet/web", "Service/s"]  # registration order
    gen = c.get("StatefulSet", "web")["metadata"]["generation"]
    r = c.apply([sts(), svc()])
    assert r.unchanged == ["StatefulSet/web", "Service/s"] and not r.updated
    r = c.apply([sts(replicas=2)])
    assert r.updated == ["StatefulSet/web"] and r.deleted == ["Service/s"]
    assert c.get("Service", "s") is None
    s = c.get("StatefulSet", "web")
    assert s["metadata"]["generation"] == gen + 1 and s["status"]["replicas"] >= 2  # status kept, not clobbered


def test_objects_of_other_stacks_are_left_alone():
    c = cluster()
    c.apply([svc("a")], stack_id="one")
    c.apply([svc("b")], stack_id="two")
    c.apply([], stack_id="two")
    assert c.get("Service", "a") is not None and c.get("Service", "b") is None


def test_immutable_change_is_delete_before_replace():
    c = cluster(grace=2)
    c.apply([sts()])
    run_until(c, 4)
    old_uid = c.get("StatefulSet", "web")["metadata"]["uid"]
    r = c.apply([sts(serviceName="other")])
    assert r.replaced and "spec.serviceName" in r.replaced[0]
    assert c.get("StatefulSet", "web")["metadata"].get("deletionTimestamp")  # foreground: waits for its pods
    run_until(c, 8)
    new = c.get("StatefulSet", "web")
    assert new["metadata"]["uid"] != old_uid and new["spec"]["serviceName"] == "other"
    assert immutable_changes("StatefulSet", sts(), sts(replicas=9, partition=3)) == []
    assert immutable_changes("Deployment", {"spec": {"selector": 1}}, {"spec": {"selector": 2}}) == ["spec.selector"]
    assert immutable_changes("Service", svc(ip="10.0.0.1"), svc(ip="10.0.0.2")) == ["spec.clusterIP"]


def test_service_cluster_ip_is_kept_on_update():
    c = cluster()
    c.apply([svc()])
    ip = c.get("Service", "s")["spec"]["clusterIP"]
    c.apply([{**svc(), "spec": {**svc()["spec"], "ports": [{"port": 81}]}}])
    assert c.get("Service", "s")["spec"]["clusterIP"] == ip


def test_partial_apply_records_only_what_happened():
    c = cluster()
    r = c.apply([svc(f"s{i}") for i in range(20)], keep=0.5)
    assert r.skipped and r.created and len(r.skipped) + len(r.created) == 20
    r2 = c.apply([svc(f"s{i}") for i in range(20)])
    assert sorted(r2.created) == sorted(r.skipped)
