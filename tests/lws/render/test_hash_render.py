"""Hash-mode renderer (lws/render/hash.py): object shapes and strict Kubernetes 1.35 validation."""

from __future__ import annotations

import pytest
from conftest import validate_manifest
from support.fixtures_hash import NS, cr, key_of, leader, make_lws, rev, snap, worker_sts

from pulumi_lws.lws import labels as L
from pulumi_lws.lws.reconcile import reconcile

V1, V2 = make_lws(image="v1"), make_lws(image="v2")
R1, R2 = rev(V1), rev(V2)


def by(manifests, kind, name=None):
    return [m for m in manifests if m["kind"] == kind and (name is None or m["metadata"]["name"] == name)]


def _rollout_manifests(lws=V2):
    old = leader("web-o", R1, created=0, gated=False, ready=True, group_ready="True")
    new = leader("web-n", R2, created=5, gated=False)
    gated = leader("web-g", R2, created=6)
    dying = leader("web-d", R1, created=1, gated=False, deleting=True)
    return (
        reconcile(lws, snap(cr(V1, 1), cr(V2, 2), old, worker_sts(old), new, gated, dying)).manifests,
        old,
        new,
        gated,
        dying,
    )


def test_every_object_validates_strict_1_35_and_is_managed():
    manifests, *_ = _rollout_manifests()
    for m in manifests:
        validate_manifest(m)
        assert m["metadata"]["namespace"] == NS
        assert m["metadata"]["labels"][L.MANAGED_BY] == "pulumi-lws"
        assert m["metadata"]["labels"][L.OWNERSHIP] == "true"
    for m in by(manifests, "Deployment") + by(manifests, "StatefulSet"):
        assert m["metadata"]["annotations"][L.SKIP_AWAIT] == "true"


def test_leader_deployment_shape():
    lws = make_lws(image="v2", mu="25%", ms="50%")
    (dep,) = by(reconcile(lws, snap()).manifests, "Deployment", "web")
    spec = dep["spec"]
    assert spec["replicas"] == 2
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "50%"}}
    assert spec["selector"] == {"matchLabels": {L.NAME: "web", L.WORKER_INDEX: "0"}}
    tpl = spec["template"]
    assert (
        tpl["metadata"]["labels"][L.TEMPLATE_REVISION_HASH] == R2 == dep["metadata"]["labels"][L.TEMPLATE_REVISION_HASH]
    )
    assert tpl["metadata"]["annotations"][L.GROUP_IDENTITY] == "Hash"
    assert tpl["metadata"]["annotations"][L.POD_DELETION_COST] == "-100"
    assert tpl["metadata"]["annotations"][L.SIZE] == "3"
    assert tpl["spec"]["subdomain"] == "web"
    assert tpl["spec"]["readinessGates"] == [{"conditionType": L.GROUP_READY_CONDITION}]
    assert tpl["spec"]["schedulingGates"] == [{"name": L.GROUP_REPLACEMENT_GATE}]
    env = tpl["spec"]["containers"][0]["env"]
    assert env[0] == {
        "name": "LWS_LEADER_ADDRESS",
        "valueFrom": {"fieldRef": {"fieldPath": f"metadata.annotations['{L.LEADER_ADDRESS}']"}},
    }
    assert [e["name"] for e in env[:3]] == ["LWS_LEADER_ADDRESS", "LWS_GROUP_SIZE", "LWS_WORKER_INDEX"]
    validate_manifest(dep)


def test_size_one_has_no_readiness_gate_but_is_gated():
    lws = make_lws(size=1)
    (dep,) = by(reconcile(lws, snap()).manifests, "Deployment")
    assert "readinessGates" not in dep["spec"]["template"]["spec"]
    assert dep["spec"]["template"]["spec"]["schedulingGates"] == [{"name": L.GROUP_REPLACEMENT_GATE}]


def test_user_gates_are_kept():
    lws = make_lws()
    lws.spec.leader_worker_template.worker_template["spec"]["schedulingGates"] = [{"name": "example.com/mine"}]
    (dep,) = by(reconcile(lws, snap()).manifests, "Deployment")
    assert dep["spec"]["template"]["spec"]["schedulingGates"] == [
        {"name": "example.com/mine"},
        {"name": L.GROUP_REPLACEMENT_GATE},
    ]


def test_worker_statefulsets_only_for_admitted_leaders_on_their_revision():
    manifests, old, new, _gated, _dying = _rollout_manifests()
    sts = {m["metadata"]["name"]: m for m in by(manifests, "StatefulSet")}
    assert set(sts) == {f"web-{key_of(old)[:8]}", f"web-{key_of(new)[:8]}"}
    o = sts[f"web-{key_of(old)[:8]}"]
    assert o["metadata"]["labels"][L.TEMPLATE_REVISION_HASH] == R1
    assert o["spec"]["template"]["spec"]["containers"][0]["image"] == "v1"
    n = sts[f"web-{key_of(new)[:8]}"]
    assert n["spec"]["template"]["spec"]["containers"][0]["image"] == "v2"
    key = key_of(new)
    assert n["spec"]["replicas"] == 2 and n["spec"]["ordinals"] == {"start": 1}
    assert n["spec"]["podManagementPolicy"] == "Parallel" and n["spec"]["serviceName"] == "web"
    assert n["spec"]["selector"]["matchLabels"] == {L.NAME: "web", L.GROUP_INDEX: key, L.GROUP_KEY: key}
    tpl = n["spec"]["template"]
    assert tpl["metadata"]["labels"] == {
        L.NAME: "web",
        L.GROUP_INDEX: key,
        L.GROUP_KEY: key,
        L.TEMPLATE_REVISION_HASH: R2,
    }
    assert tpl["metadata"]["annotations"][L.LEADER_NAME] == "web-n"
    env = tpl["spec"]["containers"][0]["env"]
    assert env[0] == {"name": "LWS_LEADER_ADDRESS", "value": f"web-{key[:8]}.{NS}"}
    assert n["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Pod", "name": "web-n", "uid": "uid-web-n", "controller": True}
    ]


def test_per_group_leader_services_for_live_leaders_only():
    manifests, old, new, gated, _dying = _rollout_manifests()
    svcs = {m["metadata"]["name"]: m for m in by(manifests, "Service")}
    expected = {"web"} | {f"web-{key_of(p)[:8]}" for p in (old, new, gated)}
    assert set(svcs) == expected
    shared = svcs["web"]["spec"]
    assert shared == {"clusterIP": "None", "publishNotReadyAddresses": True, "selector": {L.NAME: "web"}}
    g = svcs[f"web-{key_of(gated)[:8]}"]["spec"]
    assert g["selector"] == {L.NAME: "web", L.WORKER_INDEX: "0", L.GROUP_KEY: key_of(gated)}
    assert g["clusterIP"] == "None" and g["publishNotReadyAddresses"] is True


def test_controller_revisions_for_target_and_revisions_in_use():
    manifests, *_ = _rollout_manifests()
    assert sorted(m["metadata"]["name"] for m in by(manifests, "ControllerRevision")) == sorted(
        [f"web-{R1}-1", f"web-{R2}-2"]
    )
    only_new = reconcile(V2, snap(cr(V1, 1), cr(V2, 2), leader("web-n", R2, gated=False))).manifests
    assert [m["metadata"]["name"] for m in by(only_new, "ControllerRevision")] == [f"web-{R2}-2"]


def test_exclusive_topology_affinity_and_validation():
    lws = make_lws(annotations={L.EXCLUSIVE_TOPOLOGY: "rack"})
    p = leader("web-a", rev(lws), gated=False, node="n1")
    manifests = reconcile(lws, snap(cr(lws), p)).manifests
    (sts,) = by(manifests, "StatefulSet")
    aff = sts["spec"]["template"]["spec"]["affinity"]
    assert aff["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]["labelSelector"][
        "matchExpressions"
    ] == [{"key": L.GROUP_KEY, "operator": "In", "values": [key_of(p)]}]
    (dep,) = by(manifests, "Deployment")
    assert "podAntiAffinity" in dep["spec"]["template"]["spec"]["affinity"]
    for m in manifests:
        validate_manifest(m)


@pytest.mark.parametrize("policy", ["PostTermination", "Immediate"])
def test_render_is_deterministic(policy):
    lws = make_lws(image="v2", policy=policy)
    a, *_ = _rollout_manifests(lws)
    b, *_ = _rollout_manifests(lws)
    assert a == b


# ---- renderer reuse: Hash leader env, TPU, UniquePerReplica -------------------------------------


def _env(container):
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def test_hash_leader_has_no_ordinal_leader_name_helper():
    (dep,) = by(reconcile(V2, snap()).manifests, "Deployment")
    names = [e["name"] for e in dep["spec"]["template"]["spec"]["containers"][0]["env"]]
    assert names == ["LWS_LEADER_ADDRESS", "LWS_GROUP_SIZE", "LWS_WORKER_INDEX"]


def tpu_lws(**kw):
    lws = make_lws(**kw)
    lws.spec.leader_worker_template.worker_template["spec"]["containers"][0]["resources"] = {
        "limits": {"google.com/tpu": 4}
    }
    return lws


def test_tpu_env_uses_the_group_host_and_worker_pod_names():
    lws = tpu_lws()
    p = leader("web-a", rev(lws), gated=False)
    key8 = key_of(p)[:8]
    st = reconcile(lws, snap(cr(lws), p))
    ann = next(a for a in st.stage.actions if a.verb == "annotate").params["annotations"]
    assert ann["pulumi-lws.io/group-host"] == f"web-{key8}" and ann[L.LEADER_ADDRESS] == f"web-{key8}.{NS}"
    (dep,) = by(st.manifests, "Deployment")
    c = dep["spec"]["template"]["spec"]["containers"][0]
    assert [e["name"] for e in c["env"]][:5] == [
        "LWS_LEADER_ADDRESS",
        "LWS_GROUP_SIZE",
        "LWS_WORKER_INDEX",
        "LWS_LEADER_NAME",
        "LWS_GROUP_HOST",
    ]
    env = _env(c)
    assert env["LWS_GROUP_HOST"] == {"fieldRef": {"fieldPath": "metadata.annotations['pulumi-lws.io/group-host']"}}
    assert env["TPU_WORKER_HOSTNAMES"] == "$(LWS_LEADER_ADDRESS),$(LWS_GROUP_HOST)-1.web,$(LWS_GROUP_HOST)-2.web"
    assert env["TPU_WORKER_ID"] == "0" and env["TPU_NAME"] == "$(LWS_LEADER_NAME)"
    (sts,) = by(st.manifests, "StatefulSet")
    wenv = _env(sts["spec"]["template"]["spec"]["containers"][0])
    assert wenv["TPU_WORKER_HOSTNAMES"] == f"web-{key8}.{NS},web-{key8}-1.web,web-{key8}-2.web"
    assert wenv["TPU_NAME"] == "web-a"
    assert wenv["TPU_WORKER_ID"] == {"fieldRef": {"fieldPath": f"metadata.labels['{L.POD_INDEX}']"}}
    for m in st.manifests:
        validate_manifest(m)


def test_no_group_host_annotation_without_tpus():
    p = leader("web-a", R1, gated=False)
    ann = next(a for a in reconcile(V1, snap(cr(V1), p)).stage.actions if a.verb == "annotate").params["annotations"]
    assert "pulumi-lws.io/group-host" not in ann


def upr_lws(tpu=False):
    lws = tpu_lws() if tpu else make_lws()
    lws.spec.network_config.subdomain_policy = "UniquePerReplica"
    return lws


def test_unique_per_replica_workers_use_the_per_group_service():
    lws = upr_lws(tpu=True)
    p = leader("web-a", rev(lws), gated=False)
    key = key_of(p)
    st = reconcile(lws, snap(cr(lws), p))
    svc = by(st.manifests, "Service", f"web-{key[:8]}")[0]
    assert svc["spec"]["selector"] == {L.NAME: "web", L.GROUP_INDEX: key}  # the whole group, as upstream
    (sts,) = by(st.manifests, "StatefulSet")
    assert sts["spec"]["serviceName"] == f"web-{key[:8]}"
    wenv = _env(sts["spec"]["template"]["spec"]["containers"][0])
    assert wenv["LWS_LEADER_ADDRESS"] == f"web-a.web.{NS}"  # through the shared Service
    assert wenv["TPU_WORKER_HOSTNAMES"] == f"web-a.web.{NS},web-{key[:8]}-1.web-{key[:8]},web-{key[:8]}-2.web-{key[:8]}"
    ann = next(a for a in st.stage.actions if a.verb == "annotate").params["annotations"]
    assert ann[L.LEADER_ADDRESS] == f"web-a.web.{NS}"
    (dep,) = by(st.manifests, "Deployment")
    lenv = _env(dep["spec"]["template"]["spec"]["containers"][0])
    assert lenv["TPU_WORKER_HOSTNAMES"] == (
        "$(LWS_LEADER_ADDRESS),$(LWS_GROUP_HOST)-1.$(LWS_GROUP_HOST),$(LWS_GROUP_HOST)-2.$(LWS_GROUP_HOST)"
    )
    for m in st.manifests:
        validate_manifest(m)


def test_shared_policy_keeps_the_leader_only_service_and_shared_subdomain():
    p = leader("web-a", R1, gated=False)
    manifests = reconcile(V1, snap(cr(V1), p)).manifests
    (sts,) = by(manifests, "StatefulSet")
    assert sts["spec"]["serviceName"] == "web"
    assert sts["spec"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "100%"}}
