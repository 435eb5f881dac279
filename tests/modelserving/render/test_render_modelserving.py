"""render_modelserving: objects, names, labels, env, PodGroups, revisions and apply order."""

from __future__ import annotations

import copy

import pytest
from conftest import validate_manifest
from ms_render_fixtures import two_role, two_role_wire, with_role

from pulumi_lws.core.contract.dependencies import check_dependency_order
from pulumi_lws.modelserving import labels as L
from pulumi_lws.modelserving.api import ModelServing
from pulumi_lws.modelserving.render import (
    DeclaredGroup,
    DeclaredRole,
    declare_all,
    modelserving_dependencies,
    render_modelserving,
)
from pulumi_lws.modelserving.render.resources import sum_requests
from pulumi_lws.modelserving.revision import (
    build_catalog,
    controller_revision,
    modelserving_revision,
    revision_data,
    role_template_hash,
)


def render(ms, declared=None, observed=()):
    cat = build_catalog(ms, observed)
    return render_modelserving(ms, declare_all(ms, cat) if declared is None else declared, cat), cat


def by_ref(objs):
    return {(o["kind"], o["metadata"]["name"]): o for o in objs}


def env_of(container):
    return {e["name"]: e for e in container["env"]}


def test_every_object_validates_and_is_scoped():
    objs, _ = render(two_role())
    assert len(objs) == 1 + 2 * (1 + 2 * 3 + 1)  # CR + per group: PodGroup, 2 prefill x (svc, entry, worker), decode
    for o in objs:
        validate_manifest(o)
        meta = o["metadata"]
        assert meta["namespace"] == "serving" and meta["labels"][L.NAME] == "llm"
        assert "ownerReferences" not in meta
        if o["kind"] != "ControllerRevision":
            assert meta["labels"][L.GROUP_NAME] in ("llm-0", "llm-1")
        if o["kind"] == "StatefulSet":
            assert meta["annotations"]["pulumi.com/skipAwait"] == "true"


def test_names_and_objects_per_role_replica():
    objs = by_ref(render(two_role())[0])
    rev = modelserving_revision(two_role())
    assert ("ControllerRevision", f"llm-{rev}") in objs
    for g in (0, 1):
        assert ("PodGroup", f"llm-{g}") in objs
        for r in (0, 1):
            entry = objs[("StatefulSet", f"llm-{g}-prefill-{r}")]
            worker = objs[("StatefulSet", f"llm-{g}-prefill-{r}-w")]
            svc = objs[("Service", f"llm-{g}-prefill-{r}-0")]  # = the entry pod name (pod 0 of the entry sts)
            assert entry["spec"]["replicas"] == 1 and entry["spec"]["serviceName"] == svc["metadata"]["name"]
            assert worker["spec"]["replicas"] == 2 and worker["spec"]["ordinals"] == {"start": 1}
            assert worker["spec"]["podManagementPolicy"] == "Parallel"
            assert worker["spec"]["updateStrategy"] == {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxUnavailable": "100%"},
            }
            assert svc["spec"]["clusterIP"] == "None" and svc["spec"]["publishNotReadyAddresses"] is True
            assert svc["spec"]["selector"] == {
                L.GROUP_NAME: f"llm-{g}",
                L.ROLE: "prefill",
                L.ROLE_ID: f"prefill-{r}",
                L.ENTRY: "true",
            }
        # decode: no workerTemplate -> no Service; workerReplicas 0 -> no worker StatefulSet
        assert ("StatefulSet", f"llm-{g}-decode-0") in objs
        assert ("Service", f"llm-{g}-decode-0-0") not in objs and ("StatefulSet", f"llm-{g}-decode-0-w") not in objs


def test_selectors_are_disjoint_and_match_their_templates():
    objs = by_ref(render(two_role())[0])
    entry, worker = objs[("StatefulSet", "llm-1-prefill-0")], objs[("StatefulSet", "llm-1-prefill-0-w")]
    for sts in (entry, worker):
        labels = sts["spec"]["template"]["metadata"]["labels"]
        assert sts["spec"]["selector"]["matchLabels"].items() <= labels.items()
        assert L.REVISION not in sts["spec"]["selector"]["matchLabels"]
    assert worker["spec"]["selector"]["matchExpressions"] == [{"key": L.ENTRY, "operator": "DoesNotExist"}]
    assert L.ENTRY not in worker["spec"]["template"]["metadata"]["labels"]


def test_pod_labels_annotations_and_scheduler():
    ms = two_role()
    objs = by_ref(render(ms)[0])
    rev, h = modelserving_revision(ms), role_template_hash(ms.roles[0])
    entry = objs[("StatefulSet", "llm-1-prefill-0")]["spec"]["template"]
    worker = objs[("StatefulSet", "llm-1-prefill-0-w")]["spec"]["template"]
    common = {
        L.NAME: "llm",
        L.GROUP_NAME: "llm-1",
        L.ROLE: "prefill",
        L.ROLE_ID: "prefill-0",
        L.REVISION: rev,
        L.ROLE_TEMPLATE_HASH: h,
    }
    assert entry["metadata"]["labels"] == {"app": "p", **common, L.ENTRY: "true"}
    assert worker["metadata"]["labels"] == common
    for t in (entry, worker):
        assert t["metadata"]["annotations"] == {
            "scheduling.k8s.io/group-name": "llm-1",
            "volcano.sh/task-spec": "prefill-0",
        }
        assert t["spec"]["schedulerName"] == "volcano"  # overrides the template's default-scheduler


def test_controller_labels_win_over_template_labels():
    wire = with_role(
        two_role_wire(),
        "prefill",
        workerTemplate={
            "metadata": {"labels": {L.ENTRY: "true", L.ROLE: "hijack", "team": "a"}},
            "spec": {"containers": [{"name": "w", "image": "x"}]},
        },
    )
    objs = by_ref(render(ModelServing.from_manifest(wire))[0])
    labels = objs[("StatefulSet", "llm-0-prefill-0-w")]["spec"]["template"]["metadata"]["labels"]
    assert labels[L.ROLE] == "prefill" and labels["team"] == "a" and L.ENTRY not in labels


def test_env_in_every_container_and_init_container():
    objs = by_ref(render(two_role())[0])
    entry = objs[("StatefulSet", "llm-1-prefill-1")]["spec"]["template"]["spec"]
    for c in entry["initContainers"] + entry["containers"]:
        assert [e["name"] for e in c["env"][:3]] == ["GROUP_SIZE", "ENTRY_ADDRESS", "WORKER_INDEX"]
        assert c["env"][:3] == [
            {"name": "GROUP_SIZE", "value": "3"},
            {"name": "ENTRY_ADDRESS", "value": "llm-1-prefill-1-0.serving"},
            {"name": "WORKER_INDEX", "value": "0"},
        ]
    main = entry["containers"][0]
    assert [e["name"] for e in main["env"]] == [
        "GROUP_SIZE",
        "ENTRY_ADDRESS",
        "WORKER_INDEX",
        "MODEL",
    ]  # user GROUP_SIZE replaced
    worker = objs[("StatefulSet", "llm-1-prefill-1-w")]["spec"]["template"]["spec"]["containers"][0]
    assert env_of(worker)["ENTRY_ADDRESS"]["value"] == "llm-1-prefill-1-0.serving"
    assert env_of(worker)["WORKER_INDEX"] == {
        "name": "WORKER_INDEX",
        "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['apps.kubernetes.io/pod-index']"}},
    }
    decode = objs[("StatefulSet", "llm-0-decode-0")]["spec"]["template"]["spec"]["containers"][0]
    assert env_of(decode)["GROUP_SIZE"]["value"] == "1"


def test_inputs_are_not_mutated():
    ms = two_role()
    before = copy.deepcopy(ms.to_wire())
    render(ms)
    assert ms.to_wire() == before


def test_podgroup_fields():
    objs = by_ref(render(two_role())[0])
    pg = objs[("PodGroup", "llm-0")]
    assert pg["apiVersion"] == "scheduling.volcano.sh/v1beta1"
    assert pg["metadata"]["labels"][L.GROUP_NAME] == "llm-0"
    assert pg["metadata"]["annotations"] == {"scheduling.k8s.io/group-name": "llm-0"}
    spec = pg["spec"]
    # prefill: (1+2) x min(1, 2) = 3; decode: (1+0) x min(1, 1) = 1
    assert spec["minMember"] == 4
    # prefill x1: 500m+2x1 cpu, 1Gi+2x512Mi; decode x1: 2 cpu, 2Gi (init containers not counted)
    assert spec["minResources"] == {"cpu": "4500m", "memory": "4Gi"}
    assert spec["queue"] == "q1"
    assert spec["networkTopology"] == {"mode": "hard", "highestTierAllowed": 2}
    assert spec["subGroupPolicy"] == [
        {
            "name": "prefill",
            "labelSelector": {"matchLabels": {L.NAME: "llm", L.ROLE: "prefill"}},
            "matchLabelKeys": [L.ROLE_ID],
            "subGroupSize": 3,
            "minSubGroups": 1,
            "networkTopology": {"mode": "soft"},
        },
        {
            "name": "decode",
            "labelSelector": {"matchLabels": {L.NAME: "llm", L.ROLE: "decode"}},
            "matchLabelKeys": [L.ROLE_ID],
            "subGroupSize": 1,
            "minSubGroups": 1,
            "networkTopology": {"mode": "soft"},
        },
    ]


def test_no_podgroup_or_volcano_annotations_for_other_schedulers():
    objs = render(two_role(schedulerName="default-scheduler"))[0]
    assert not [o for o in objs if o["kind"] == "PodGroup"]
    for o in objs:
        if o["kind"] == "StatefulSet":
            assert "annotations" not in o["spec"]["template"]["metadata"]
            assert o["spec"]["template"]["spec"]["schedulerName"] == "default-scheduler"


@pytest.mark.parametrize(
    ("parts", "want"),
    [
        (
            [
                ({"spec": {"containers": [{"resources": {"requests": {"cpu": "500m"}}}]}}, 1),
                ({"spec": {"containers": [{"resources": {"requests": {"cpu": "1"}}}]}}, 1),
            ],
            {"cpu": "1500m"},
        ),
        (
            [
                (
                    {
                        "spec": {
                            "containers": [
                                {"resources": {"requests": {"memory": "1Gi"}}},
                                {"resources": {"requests": {"memory": "512Mi"}}},
                            ]
                        }
                    },
                    1,
                )
            ],
            {"memory": "1536Mi"},
        ),
        (
            [({"spec": {"containers": [{"resources": {"requests": {"nvidia.com/gpu": "4", "cpu": "2"}}}]}}, 3)],
            {"cpu": "6", "nvidia.com/gpu": "12"},
        ),
        ([({"spec": {"containers": [{"resources": {"requests": {"cpu": "1"}}}]}}, 0)], {}),
    ],
)
def test_quantity_sums(parts, want):
    assert sum_requests(parts) == want


def _old_and_new():
    old = ModelServing.from_manifest(with_role(two_role_wire("vllm:1"), "prefill", workerReplicas=1))
    new = two_role("vllm:2")
    cr = controller_revision("llm", "serving", modelserving_revision(old), revision_data(old)["data"])
    return old, new, build_catalog(new, [cr])


def test_outdated_group_is_rendered_from_its_own_revision():
    old, new, cat = _old_and_new()
    old_rev, new_rev = modelserving_revision(old), cat.target
    objs = render_modelserving(new, [DeclaredGroup(0, old_rev), DeclaredGroup(1, new_rev)], cat)
    refs = by_ref(objs)
    assert {n for k, n in refs if k == "ControllerRevision"} == {f"llm-{old_rev}", f"llm-{new_rev}"}
    w0, w1 = refs[("StatefulSet", "llm-0-prefill-0-w")], refs[("StatefulSet", "llm-1-prefill-0-w")]
    assert w0["spec"]["replicas"] == 1 and w1["spec"]["replicas"] == 2
    assert w0["spec"]["template"]["spec"]["containers"][0]["image"] == "vllm:1"
    assert w1["spec"]["template"]["spec"]["containers"][0]["image"] == "vllm:2"
    assert w0["metadata"]["labels"][L.REVISION] == old_rev
    assert env_of(w0["spec"]["template"]["spec"]["containers"][0])["GROUP_SIZE"]["value"] == "2"
    # PodGroup of the old group: prefill (1+1) x 1 + decode 1 = 3; cpu 500m + 1 + 2 = 3500m
    assert refs[("PodGroup", "llm-0")]["spec"]["minMember"] == 3
    assert refs[("PodGroup", "llm-0")]["spec"]["minResources"] == {"cpu": "3500m", "memory": "3584Mi"}
    assert refs[("PodGroup", "llm-1")]["spec"]["minMember"] == 4
    for o in objs:
        validate_manifest(o)


def test_role_replicas_on_their_own_templates():
    """RoleRollingUpdate: group on the new revision, prefill-0 still on the old template."""
    old, new, cat = _old_and_new()
    old_rev, new_rev = modelserving_revision(old), cat.target
    group = DeclaredGroup(
        0,
        new_rev,
        (
            DeclaredRole("prefill", 0, old_rev),
            DeclaredRole("prefill", 1, new_rev),
            DeclaredRole("prefill", 2, new_rev),
            DeclaredRole("decode", 0, old_rev),
        ),
    )
    refs = by_ref(render_modelserving(new, [group], cat))
    p0, p1 = refs[("StatefulSet", "llm-0-prefill-0")], refs[("StatefulSet", "llm-0-prefill-1")]
    assert p0["metadata"]["labels"][L.REVISION] == new_rev  # the group's revision
    assert p0["spec"]["template"]["metadata"]["labels"][L.REVISION] == old_rev  # the template's
    assert p0["metadata"]["labels"][L.ROLE_TEMPLATE_HASH] == role_template_hash(old.roles[0])
    assert p1["metadata"]["labels"][L.ROLE_TEMPLATE_HASH] == role_template_hash(new.roles[0])
    assert refs[("StatefulSet", "llm-0-prefill-0-w")]["spec"]["replicas"] == 1
    assert ("StatefulSet", "llm-0-prefill-2") in refs  # a surge replica
    assert refs[("PodGroup", "llm-0")]["spec"]["minMember"] == 4  # the group's revision, spec replicas


def test_dependencies_and_order():
    old, new, cat = _old_and_new()
    objs = render_modelserving(new, [DeclaredGroup(0, modelserving_revision(old)), DeclaredGroup(1, cat.target)], cat)
    deps = modelserving_dependencies(objs)
    check_dependency_order(objs, deps)
    assert deps[("StatefulSet", "llm-0-prefill-0-w")] == (
        ("ControllerRevision", f"llm-{modelserving_revision(old)}"),
        ("Service", "llm-0-prefill-0-0"),
        ("PodGroup", "llm-0"),
    )
    assert deps[("StatefulSet", "llm-1-decode-0")] == (
        ("ControllerRevision", f"llm-{cat.target}"),
        ("PodGroup", "llm-1"),
    )
    assert all(k[0] == "StatefulSet" for k in deps)


def test_keep_revisions_unknown_revision_and_duplicates():
    old, new, cat = _old_and_new()
    objs = render_modelserving(new, [], cat, keep_revisions=[modelserving_revision(old)])
    assert [o["kind"] for o in objs] == ["ControllerRevision", "ControllerRevision"]
    with pytest.raises(KeyError, match="not stored"):
        render_modelserving(new, [DeclaredGroup(0, "nope")], cat)
    with pytest.raises(ValueError, match="declared twice"):
        render_modelserving(new, [DeclaredGroup(0, cat.target), DeclaredGroup(0, cat.target)], cat)


def test_namespace_argument_wins():
    ms = two_role()
    cat = build_catalog(ms)
    assert {o["metadata"]["namespace"] for o in render_modelserving(ms, declare_all(ms, cat), cat, "other")} == {
        "other"
    }
    env = by_ref(render_modelserving(ms, declare_all(ms, cat), cat, "other"))[("StatefulSet", "llm-0-decode-0")]
    assert (
        env_of(env["spec"]["template"]["spec"]["containers"][0])["ENTRY_ADDRESS"]["value"] == "llm-0-decode-0-0.other"
    )
