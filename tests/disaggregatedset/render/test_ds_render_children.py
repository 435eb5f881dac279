"""render_children (children through the LWS pipeline, DS labels stamped, apply order) and the
``<lws>-prv`` Services, checked on literal snapshots and on the simulator."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import validate_manifest
from ds_render_base import NS, load, manifest, plan, role, steady, with_image
from support.sim_helpers import cluster, run_until

from pulumi_lws.core.contract.dependencies import check_dependency_order
from pulumi_lws.core.contract.snapshot import EMPTY, labels_of
from pulumi_lws.disaggregatedset import labels as DL
from pulumi_lws.disaggregatedset.observe import ds_scope, observe_children
from pulumi_lws.disaggregatedset.render import render_children, service, services
from pulumi_lws.disaggregatedset.revision import compute_revision
from pulumi_lws.lws import labels as L

BASE = manifest(role("prefill", 2, size=2), role("decode", 1))
NEW = with_image(BASE, 0, "img:v2")


def scope_snapshot(c):
    return c.observe(ds_scope(NS, "ds"))


def up(c, ds, children, until: float):
    rendered = render_children(ds, children, scope_snapshot(c))
    c.apply(rendered.manifests, dependencies=rendered.dependencies)
    run_until(c, until)
    return rendered


def assert_stamped(manifests, ds_name: str = "ds") -> None:
    for m in manifests:
        lbl = labels_of(m)
        child = lbl[L.NAME]
        assert child == f"{ds_name}-{lbl[DL.SLICE]}-{lbl[DL.REVISION]}-{lbl[DL.ROLE]}", m["metadata"]["name"]
        assert lbl[DL.NAME] == ds_name
        validate_manifest(m)


def test_steady_children_render_strictly_valid_stamped_objects() -> None:
    ds = load(
        manifest(
            role("prefill", 2, size=2),
            role("decode", 1),
            slices=2,
            placementPolicy={"type": "ExclusiveSlice", "topology": "zone"},
        )
    )
    rev = compute_revision(ds)
    out = render_children(ds, steady(ds), EMPTY)
    assert_stamped(out.manifests)
    assert sorted(out.stages) == sorted(f"ds-{s}-{rev}-{r}" for s in (0, 1) for r in ("prefill", "decode"))
    check_dependency_order(out.manifests, out.dependencies)
    kinds = sorted((m["kind"], m["metadata"]["name"]) for m in out.manifests if m["kind"] == "StatefulSet")
    assert ("StatefulSet", f"ds-1-{rev}-prefill-1") in kinds  # worker StatefulSet of group 1
    leader = next(
        m for m in out.manifests if m["kind"] == "StatefulSet" and m["metadata"]["name"] == f"ds-0-{rev}-decode"
    )
    pod_labels = leader["spec"]["template"]["metadata"]["labels"]
    assert {k: pod_labels[k] for k in (DL.NAME, DL.ROLE, DL.SLICE, DL.REVISION, "app")} == {
        DL.NAME: "ds",
        DL.ROLE: "decode",
        DL.SLICE: "0",
        DL.REVISION: rev,
        "app": "ds-0-decode",
    }
    assert leader["spec"]["template"]["spec"]["affinity"]["podAffinity"]


def test_two_roles_two_revisions_all_stamped_old_on_its_recorded_template() -> None:
    c = cluster()
    old = load(BASE)
    a = compute_revision(old)
    up(c, old, steady(old), 10)
    new = load(NEW)
    b = compute_revision(new)
    assert a != b
    children = [
        plan(0, a, "prefill", 1, initial=2),
        plan(0, a, "decode", 1, initial=1),
        plan(0, b, "prefill", 1),
        plan(0, b, "decode", 0),
    ]
    out = render_children(new, children, scope_snapshot(c))
    assert_stamped(out.manifests)
    check_dependency_order(out.manifests, out.dependencies)
    images = {
        m["metadata"]["name"]: m["spec"]["template"]["spec"]["containers"][0]["image"]
        for m in out.manifests
        if m["kind"] == "StatefulSet"
    }
    assert images == {
        f"ds-0-{a}-prefill": "img:v1",
        f"ds-0-{a}-prefill-0": "img:v1",
        f"ds-0-{a}-decode": "img:v1",
        f"ds-0-{b}-prefill": "img:v2",
        f"ds-0-{b}-prefill-0": "img:v2",
        f"ds-0-{b}-decode": "img:v1",
    }
    # the old children keep their LWS revision: no new ControllerRevision, nothing to roll
    old_crs = {
        m["metadata"]["name"] for m in out.manifests if m["kind"] == "ControllerRevision" and a in m["metadata"]["name"]
    }
    assert old_crs == {
        o["metadata"]["name"]
        for o in c.list("ControllerRevision")
        if o.get("data", {}).get("spec", {}).get("leaderWorkerTemplate") and a in o["metadata"]["name"]
    }
    for name in (f"ds-0-{a}-prefill", f"ds-0-{a}-decode"):
        assert out.stages[name].complete or out.stages[name].blocker is None
    c.apply(out.manifests, dependencies=out.dependencies)
    run_until(c, 20)
    seen = {ch.name: ch for ch in observe_children(new, scope_snapshot(c))}
    assert sorted(seen) == sorted(f"ds-0-{r}-{role}" for r in (a, b) for role in ("prefill", "decode"))
    assert seen[f"ds-0-{a}-prefill"].updated == seen[f"ds-0-{a}-prefill"].ready == 1  # never rolled
    assert (seen[f"ds-0-{a}-prefill"].initial_replicas, seen[f"ds-0-{b}-prefill"].initial_replicas) == (2, None)


def test_removed_role_child_renders_from_its_controller_revision() -> None:
    c = cluster()
    three = load(manifest(role("prefill", 1), role("decode", 1), role("router", 1)))
    a = compute_revision(three)
    up(c, three, steady(three), 10)
    two = load(BASE)
    b = compute_revision(two)
    out = render_children(two, [plan(0, a, "router", 1, initial=1), plan(0, b, "prefill", 0)], scope_snapshot(c))
    assert_stamped(out.manifests)
    router = next(
        m for m in out.manifests if m["kind"] == "StatefulSet" and m["metadata"]["name"] == f"ds-0-{a}-router"
    )
    assert router["metadata"]["annotations"][DL.INITIAL_REPLICAS] == "1"
    assert router["spec"]["template"]["metadata"]["labels"][DL.ROLE] == "router"
    with pytest.raises(ValueError, match="removed role"):
        render_children(two, [plan(0, "deadbeef", "router", 1)], scope_snapshot(c))


def test_undeclared_children_are_not_rendered_and_plans_are_unique() -> None:
    ds = load(BASE)
    rev = compute_revision(ds)
    out = render_children(ds, [plan(0, rev, "prefill", 1), plan(0, rev, "decode", 1, declared=False)], EMPTY)
    assert set(out.stages) == {f"ds-0-{rev}-prefill"}
    assert all(labels_of(m)[DL.ROLE] == "prefill" for m in out.manifests)
    with pytest.raises(ValueError, match="planned twice"):
        render_children(ds, [plan(0, rev, "prefill", 1), plan(0, rev, "prefill", 2)], EMPTY)


def test_cross_child_name_collision_is_refused() -> None:
    # role "p" group 1's worker StatefulSet and role "p-1"'s leader StatefulSet share a name
    ds = load(manifest(role("p", 2, size=2), role("p-1", 1)))
    with pytest.raises(ValueError, match="rendered by both"):
        render_children(ds, steady(ds), EMPTY)


def test_hash_role_renders_a_stamped_leader_deployment() -> None:
    ds = load(manifest(role("prefill", 2, size=2, groupIdentity="Hash"), role("decode", 1)))
    rev = compute_revision(ds)
    out = render_children(ds, steady(ds), EMPTY)
    assert_stamped(out.manifests)
    dep = next(m for m in out.manifests if m["kind"] == "Deployment")
    assert dep["metadata"]["name"] == f"ds-0-{rev}-prefill"
    assert dep["spec"]["template"]["metadata"]["labels"][DL.REVISION] == rev


def test_services_only_for_the_given_revisions_shaped_as_upstream() -> None:
    ds = load(manifest(role("prefill", 2), role("decode", 1), slices=2))
    rev = compute_revision(ds)
    out = services(ds, [rev, "0ld0ld00"], range(2))
    assert [s["metadata"]["name"] for s in out] == [
        f"ds-{s}-{r}-{role}-prv" for s in (0, 1) for r in (rev, "0ld0ld00") for role in ("prefill", "decode")
    ]
    for svc in out:
        validate_manifest(svc)
        lbl = svc["metadata"]["labels"]
        selector = {DL.NAME: "ds", DL.ROLE: lbl[DL.ROLE], DL.REVISION: lbl[DL.REVISION], DL.SLICE: lbl[DL.SLICE]}
        assert svc["spec"] == {"clusterIP": "None", "selector": selector}  # headless, no publishNotReadyAddresses
        assert {k: lbl[k] for k in selector} == selector
        assert svc["metadata"]["namespace"] == NS
    assert services(ds, [], range(2)) == []
    assert [s["metadata"]["name"] for s in services(ds, [rev], [1], roles=["decode"])] == [f"ds-1-{rev}-decode-prv"]
    assert service(ds, 0, rev, "decode") == out[1]


def test_services_select_their_childs_pods_only() -> None:
    c = cluster()
    ds = load(BASE)
    rev = compute_revision(ds)
    up(c, ds, steady(ds), 10)
    for svc in services(ds, [rev], [0]):
        sel = svc["spec"]["selector"]
        pods = [p for p in c.list("Pod") if all(labels_of(p).get(k) == v for k, v in sel.items())]
        child = f"ds-0-{rev}-{sel[DL.ROLE]}"
        assert pods and all(labels_of(p)[L.NAME] == child for p in pods)
        assert len(pods) == {"prefill": 4, "decode": 1}[sel[DL.ROLE]]
        for p in pods:  # the seeds' LWS page: DS labels and env on every pod of the child
            assert labels_of(p)["app"] == f"ds-0-{sel[DL.ROLE]}"
            env = {e["name"]: e.get("value") for e in p["spec"]["containers"][0]["env"]}
            assert {k: env[k] for k in (DL.ENV_NAME, DL.ENV_ROLE, DL.ENV_SLICE, DL.ENV_REVISION)} == {
                DL.ENV_NAME: "ds",
                DL.ENV_ROLE: sel[DL.ROLE],
                DL.ENV_SLICE: "0",
                DL.ENV_REVISION: rev,
            }


def test_exclusive_slice_places_each_slice_in_its_own_zone() -> None:
    nodes = [
        {"name": f"n-{z}-{i}", "labels": {"zone": z}, "capacity": {"cpu": "64", "pods": "110"}}
        for z in ("a", "b")
        for i in range(3)
    ]
    c = cluster(nodes=nodes)
    ds = load(
        manifest(
            role("prefill", 1, size=2),
            role("decode", 1),
            slices=2,
            placementPolicy={"type": "ExclusiveSlice", "topology": "zone"},
        )
    )
    up(c, ds, steady(ds), 10)
    zone = {n["metadata"]["name"]: n["metadata"]["labels"]["zone"] for n in c.list("Node", namespace=None)}
    by_slice: dict[str, set[str]] = {}
    for p in c.list("Pod"):
        by_slice.setdefault(labels_of(p)[DL.SLICE], set()).add(zone[p["spec"]["nodeName"]])
    assert len(by_slice) == 2 and all(len(z) == 1 for z in by_slice.values())
    assert by_slice["0"] != by_slice["1"]
    assert all(ch.ready == 1 for ch in observe_children(ds, scope_snapshot(c)))


def test_child_stages_are_the_lws_stages_without_their_per_group_detail() -> None:
    # the DS reads a child's actions, completeness and blocker, never its groups: they are dropped
    # so 10,000 group views do not live until the DS reconcile returns (issue 27 memory)
    from pulumi_lws.disaggregatedset.render import reconcile_child

    ds = load(manifest(role("prefill", 2, size=2), role("decode", 1)))
    children = steady(ds)
    out = render_children(ds, children, EMPTY)
    for child in children:
        _, rec = reconcile_child(ds, child, EMPTY)
        name = f"ds-{child.slice}-{child.revision}-{child.role}"
        assert rec.stage.groups and rec.stage.group_revisions
        assert out.stages[name] == dataclasses.replace(rec.stage, groups=(), group_revisions={})
