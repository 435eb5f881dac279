"""The applier's model of pulumi-kubernetes' deletes (v4.25.0 ``provider/pkg/await/await.go``
``Deletion``; ``provider/pkg/metadata/overrides.go`` ``DeletedCondition``, ``allowsSkipAwaitWithDelete``,
``DeletionPropagation``): a StatefulSet or Deployment registered with ``pulumi.com/skipAwait`` is
deleted without waiting, with the propagation its registered inputs name; anything else is
awaited until gone. An apply that meets a terminating object fails (the real provider's
server-side-apply create would land on it and lose it; a plain create answers 409): the
simulator must show such a defect instead of parking the manifest until the object is gone."""

from __future__ import annotations

from support.sim_helpers import cluster, run_until, sts

from pulumi_lws.core.k8s import keys as K
from pulumi_lws.core.k8s.manifests import WORKLOAD_ANNOTATIONS
from pulumi_lws.sim.cluster.apply import TERMINATING


def workload(background: bool = True, **spec) -> dict:
    """A StatefulSet as the project registers it (background) or as it did before (foreground)."""
    obj = sts(**spec)
    annotations = dict(WORKLOAD_ANNOTATIONS) if background else {K.SKIP_AWAIT: "true"}
    obj["metadata"]["annotations"] = annotations
    return obj


def service(name: str = "web") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"clusterIP": "None", "selector": {"app": name}},
    }


def pods(c) -> list[str]:
    return sorted(p["metadata"]["name"] for p in c.list("Pod"))


def test_a_background_replacement_creates_the_new_object_in_the_same_up():
    c = cluster(grace=5)
    c.apply([workload()])
    run_until(c, 4)
    old = c.get("StatefulSet", "web")["metadata"]["uid"]
    r = c.apply([workload(serviceName="other")])  # an immutable field: delete before replace
    assert r.replaced and "spec.serviceName" in r.replaced[0] and not r.errors
    new = c.get("StatefulSet", "web")
    assert new["metadata"]["uid"] != old and not new["metadata"].get("deletionTimestamp")
    assert new["spec"]["serviceName"] == "other"
    run_until(c, 20)  # the old pods were garbage-collected, the new StatefulSet made its own
    assert pods(c) == [f"web-{i}" for i in range(4)]
    assert all(p["metadata"]["ownerReferences"][0]["uid"] == new["metadata"]["uid"] for p in c.list("Pod"))


def test_a_foreground_replacement_of_a_skip_await_workload_fails():
    """The provider's delete returned at once; the old StatefulSet waits for its pods; the create meets it."""
    c = cluster(grace=5)
    c.apply([workload(background=False), service()], dependencies={("Service", "web"): (("StatefulSet", "web"),)})
    run_until(c, 4)
    r = c.apply(
        [workload(background=False, serviceName="other"), service()],
        dependencies={("Service", "web"): (("StatefulSet", "web"),)},
    )
    assert r.errors == [f"replace StatefulSet/web (spec.serviceName): {TERMINATING}"]
    assert r.skipped == ["Service/web"]  # a failed operation's dependents are not applied
    assert c.get("StatefulSet", "web")["metadata"].get("deletionTimestamp")  # still there, terminating
    assert ("StatefulSet", "default", "web") not in c.applier.state["sim"]  # deleted, not created
    run_until(c, 20)
    r = c.apply([workload(background=False, serviceName="other"), service()])  # once it is gone
    assert r.created == ["StatefulSet/web"] and not r.errors


def test_an_awaited_replacement_waits_for_the_old_object():
    """A kind the provider awaits (no skipAwait): the new object is created once the old one is gone."""
    c = cluster(grace=5)
    c.apply([sts()])
    run_until(c, 4)
    r = c.apply([sts(serviceName="other")])
    assert r.replaced and not r.errors and c.applier.pending
    run_until(c, 20)
    assert c.get("StatefulSet", "web")["spec"]["serviceName"] == "other" and not c.applier.pending


def test_a_dropped_workload_declared_again_while_it_terminates_fails():
    c = cluster(grace=5)
    c.apply([workload(background=False), service()])
    run_until(c, 4)
    r = c.apply([service()])  # dropped (a scale-down): deleted in the foreground, returns at once
    assert r.deleted == ["StatefulSet/web"] and c.get("StatefulSet", "web")["metadata"].get("deletionTimestamp")
    again = c.apply([workload(background=False), service(), service("other")])  # declared again too soon
    assert again.errors == [f"create StatefulSet/web: {TERMINATING}"]
    assert again.created == ["Service/other"]  # independent operations still happen
    assert ("StatefulSet", "default", "web") not in c.applier.state["sim"]
    run_until(c, 20)
    assert c.get("StatefulSet", "web") is None  # nothing was parked to come back by itself
    assert c.apply([workload(background=False), service(), service("other")]).created == ["StatefulSet/web"]


def test_a_failed_operation_holds_back_the_deletions_of_that_up():
    c = cluster(grace=5)
    c.apply([workload(background=False), service("a")])
    run_until(c, 4)
    c.apply([service("a")])
    r = c.apply([workload(background=False)])  # Service/a dropped, but the create fails
    assert r.errors and "Service/a" in r.skipped and c.get("Service", "a") is not None


def test_a_dropped_background_workload_is_gone_at_once_and_comes_back_as_a_create():
    c = cluster(grace=5)
    c.apply([workload(), service()])
    run_until(c, 4)
    assert pods(c)
    r = c.apply([service()])
    assert r.deleted == ["StatefulSet/web"] and c.get("StatefulSet", "web") is None  # no pod holds it
    again = c.apply([workload(), service()])
    assert again.created == ["StatefulSet/web"] and not again.errors
