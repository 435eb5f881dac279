"""Ordinal renderer: golden YAML for the seeds' examples, revision-correct groups, env/labels,
placement, determinism, and strict Kubernetes 1.35 validation of every object.

Regenerate goldens after an intended change: ``UPDATE_GOLDEN=1 .venv/bin/python -m pytest
tests/lws/render/test_render_ordinal.py`` (then review the diff).
"""

from __future__ import annotations

import copy
import hashlib
import os

import pytest
import yaml
from conftest import TESTS_DIR, validate_manifest

from pulumi_lws.core.contract.stage import Stage
from pulumi_lws.lws import labels as L
from pulumi_lws.lws import names
from pulumi_lws.lws.api import LeaderWorkerSet
from pulumi_lws.lws.group_shape import static_worker_subgroup, subgroup_index
from pulumi_lws.lws.render.common import controller_revision
from pulumi_lws.lws.render.ordinal import render_ordinal
from pulumi_lws.lws.revision import build_catalog

GOLDEN = TESTS_DIR / "golden" / "ordinal"
INPUTS = GOLDEN / "inputs"
CASES = sorted(p.stem for p in INPUTS.glob("*.yaml"))
#: extra renderer arguments per golden case
KWARGS = {"exclusive-topology": {"group_domains": {0: "us-central1-a", "1": "us-central1-b"}}}


def load(text_or_path) -> LeaderWorkerSet:
    return LeaderWorkerSet.from_manifest(text_or_path)


def creation_stage(lws: LeaderWorkerSet, catalog, **over) -> Stage:
    """What plan_ordinal returns on an empty cluster (Case 1): every group on the target."""
    key = catalog.target.key
    fields = dict(
        policy="lws/ordinal",
        target_revision=key,
        replicas=lws.replicas,
        partition=lws.user_partition(),
        group_revisions={str(i): key for i in range(lws.replicas)},
        case="1",
    )
    fields.update(over)
    return Stage(**fields)


def render_creation(lws: LeaderWorkerSet, **kwargs) -> list[dict]:
    catalog = build_catalog(lws, [])
    return render_ordinal(lws, creation_stage(lws, catalog), catalog, None, **kwargs)


def by_kind_name(objs) -> dict[tuple[str, str], dict]:
    return {(o["kind"], o["metadata"]["name"]): o for o in objs}


def env_of(container) -> list[str]:
    return [e["name"] for e in container.get("env") or []]


# ---- golden -----------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_golden(case):
    lws = load(INPUTS / f"{case}.yaml")
    objs = render_creation(lws, **KWARGS.get(case, {}))
    text = yaml.safe_dump_all(objs, sort_keys=False, explicit_start=True)
    path = GOLDEN / f"{case}.yaml"
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(text)
    assert path.exists(), f"missing golden {path}: run with UPDATE_GOLDEN=1 and review it"
    assert list(yaml.safe_load_all(path.read_text())) == objs, f"{case}: output differs from {path}"


@pytest.mark.parametrize("case", CASES)
def test_golden_objects_validate_strict_1_35(case):
    lws = load(INPUTS / f"{case}.yaml")
    objs = render_creation(lws, **KWARGS.get(case, {}))
    for obj in objs:
        validate_manifest(obj)
        assert obj["metadata"]["namespace"] == lws.namespace
        assert obj["metadata"]["labels"][L.MANAGED_BY] == "pulumi-lws"
        assert obj["metadata"]["labels"][L.OWNERSHIP] == "true"
        assert "ownerReferences" not in obj["metadata"]
        if obj["kind"] == "StatefulSet":
            assert obj["metadata"]["annotations"][L.SKIP_AWAIT] == "true"


def test_rollout_sample_shape():
    lws = load(INPUTS / "rollout-strategy.yaml")
    objs = render_creation(lws)
    kinds = [(o["kind"], o["metadata"]["name"]) for o in objs]
    key = build_catalog(lws, []).target.key
    assert kinds == [
        ("ControllerRevision", f"leaderworkerset-sample-{key}-1"),
        ("Service", "leaderworkerset-sample"),
        ("StatefulSet", "leaderworkerset-sample"),
    ] + [("StatefulSet", f"leaderworkerset-sample-{i}") for i in range(4)]
    leader = objs[2]
    assert leader["spec"]["updateStrategy"]["rollingUpdate"] == {"partition": 0, "maxUnavailable": 4}  # max(1, 2+2)
    assert leader["metadata"]["annotations"][L.REPLICAS] == "4"
    assert leader["metadata"]["labels"][L.TEMPLATE_REVISION_HASH] == key
    assert leader["spec"]["selector"]["matchLabels"] == {L.NAME: "leaderworkerset-sample", L.WORKER_INDEX: "0"}
    worker = objs[4]
    assert worker["spec"]["replicas"] == 3 and worker["spec"]["ordinals"] == {"start": 1}
    assert worker["spec"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "100%"}}
    gk = hashlib.sha1(b"default/leaderworkerset-sample-1").hexdigest()
    assert worker["spec"]["selector"]["matchLabels"] == {
        L.GROUP_INDEX: "1",
        L.NAME: "leaderworkerset-sample",
        L.GROUP_KEY: gk,
    }
    assert worker["spec"]["template"]["metadata"]["annotations"][L.LEADER_NAME] == "leaderworkerset-sample-1"


def test_stage_replicas_and_partition_drive_leader_and_worker_count():
    lws = load(INPUTS / "rollout-strategy.yaml")
    catalog = build_catalog(lws, [])
    key = catalog.target.key
    stage = creation_stage(lws, catalog, replicas=6, partition=4, group_revisions={str(i): key for i in range(6)})
    objs = by_kind_name(render_ordinal(lws, stage, catalog))
    leader = objs[("StatefulSet", "leaderworkerset-sample")]
    assert leader["spec"]["replicas"] == 6
    assert leader["spec"]["updateStrategy"]["rollingUpdate"]["partition"] == 4
    assert leader["metadata"]["annotations"][L.REPLICAS] == "4"  # spec.replicas, not the surge count
    assert ("StatefulSet", "leaderworkerset-sample-5") in objs and (
        "StatefulSet",
        "leaderworkerset-sample-6",
    ) not in objs


# ---- revisions ----------------------------------------------------------------------------

OLD = """
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: llm, namespace: serving}
spec:
  replicas: 4
  rolloutStrategy: {rollingUpdateConfiguration: {partition: 2}}
  networkConfig: {subdomainPolicy: UniquePerReplica}
  leaderWorkerTemplate:
    size: 4
    workerTemplate:
      spec:
        containers: [{name: vllm, image: "vllm:v1"}]
"""


def old_and_new(new_size: int):
    old = load(OLD)
    new_doc = yaml.safe_load(OLD)
    new_doc["spec"]["leaderWorkerTemplate"]["size"] = new_size
    new_doc["spec"]["networkConfig"]["subdomainPolicy"] = "Shared"
    new_doc["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["image"] = "vllm:v2"
    new = load(new_doc)
    old_cr = controller_revision(old.name, old.namespace, build_catalog(old, []).target)
    catalog = build_catalog(new, [old_cr])
    old_key = old_cr["metadata"]["labels"][L.TEMPLATE_REVISION_HASH]
    groups = {"0": old_key, "1": old_key, "2": catalog.target.key, "3": catalog.target.key}
    stage = creation_stage(new, catalog, partition=2, group_revisions=groups, case="3")
    return new, catalog, stage, old_key


def test_old_groups_render_from_their_revision():
    new, catalog, stage, old_key = old_and_new(new_size=2)
    objs = render_ordinal(new, stage, catalog)
    got = by_kind_name(objs)
    crs = [o for o in objs if o["kind"] == "ControllerRevision"]
    assert [c["metadata"]["name"] for c in crs] == [f"llm-{old_key}-1", f"llm-{catalog.target.key}-2"]
    for i, (size, image, key) in enumerate([(4, "vllm:v1", old_key)] * 2 + [(2, "vllm:v2", catalog.target.key)] * 2):
        sts = got[("StatefulSet", f"llm-{i}")]
        tmpl = sts["spec"]["template"]
        assert sts["spec"]["replicas"] == size - 1
        assert (
            sts["metadata"]["labels"][L.TEMPLATE_REVISION_HASH]
            == key
            == tmpl["metadata"]["labels"][L.TEMPLATE_REVISION_HASH]
        )
        assert tmpl["metadata"]["annotations"][L.SIZE] == str(size)
        container = tmpl["spec"]["containers"][0]
        assert container["image"] == image
        assert {"name": "LWS_GROUP_SIZE", "value": str(size)} in container["env"]
        # networkConfig is revision-covered: old groups keep their per-replica subdomain
        assert sts["spec"]["serviceName"] == (f"llm-{i}" if i < 2 else "llm")
    leader = got[("StatefulSet", "llm")]["spec"]["template"]
    assert leader["spec"]["containers"][0]["image"] == "vllm:v2"
    assert leader["metadata"]["labels"][L.TEMPLATE_REVISION_HASH] == catalog.target.key
    services = sorted(n for k, n in got if k == "Service")
    assert services == ["llm", "llm-0", "llm-1"]  # per-replica services only for UniquePerReplica groups
    for obj in objs:
        validate_manifest(obj)


def test_size_one_renders_no_worker_statefulset():
    new, catalog, stage, _ = old_and_new(new_size=1)
    got = by_kind_name(render_ordinal(new, stage, catalog))
    workers = sorted(n for k, n in got if k == "StatefulSet" and n != "llm")
    assert workers == ["llm-0", "llm-1"]  # old groups (size 4) keep theirs, target groups (size 1) have none
    assert got[("StatefulSet", "llm")]["spec"]["template"]["metadata"]["annotations"][L.SIZE] == "1"


def test_unknown_revision_is_an_error():
    lws = load(INPUTS / "rollout-strategy.yaml")
    catalog = build_catalog(lws, [])
    stage = creation_stage(lws, catalog, group_revisions={"0": "nosuchkey"})
    with pytest.raises(KeyError, match="nosuchkey"):
        render_ordinal(lws, stage, catalog)


# ---- env, labels, annotations ---------------------------------------------------------------

ENV_LWS = """
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: envs, namespace: ml, labels: {team: a, leaderworkerset.sigs.k8s.io/name: spoofed}}
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 3
    workerTemplate:
      metadata: {labels: {app: x}, annotations: {note: kept}}
      spec:
        initContainers:
        - name: init
          image: busybox
          env: [{name: A, value: "1"}, {name: LWS_WORKER_INDEX, value: "99"}]
        containers:
        - name: main
          image: app
          env: [{name: LWS_LEADER_ADDRESS, value: mine}, {name: B, value: "2"}, {name: LWS_GROUP_SIZE, value: "7"}]
"""


def test_env_vars_first_in_order_and_replace_user_values():
    lws = load(ENV_LWS)
    got = by_kind_name(render_creation(lws))
    leader = got[("StatefulSet", "envs")]["spec"]["template"]["spec"]
    worker = got[("StatefulSet", "envs-1")]["spec"]["template"]["spec"]
    for spec in (leader, worker):
        assert [env_of(c) for c in spec["initContainers"]] and [env_of(c) for c in spec["containers"]]
    lead = ["LWS_LEADER_NAME", "LWS_LEADER_ADDRESS", "LWS_GROUP_SIZE", "LWS_WORKER_INDEX"]
    work = lead[1:]
    assert env_of(leader["initContainers"][0]) == lead + ["A"]
    assert env_of(leader["containers"][0]) == lead + ["B"]
    assert env_of(worker["initContainers"][0]) == work + ["A"]
    assert env_of(worker["containers"][0]) == work + ["B"]
    lenv = {e["name"]: e for e in leader["containers"][0]["env"]}
    assert lenv["LWS_LEADER_NAME"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.name"}}
    assert lenv["LWS_LEADER_ADDRESS"]["value"] == "$(LWS_LEADER_NAME).envs.ml"
    assert lenv["LWS_GROUP_SIZE"]["value"] == "3" and lenv["LWS_WORKER_INDEX"]["value"] == "0"
    wenv = {e["name"]: e for e in worker["containers"][0]["env"]}
    assert wenv["LWS_LEADER_ADDRESS"]["value"] == "envs-1.envs.ml"
    assert (
        wenv["LWS_WORKER_INDEX"]["valueFrom"]["fieldRef"]["fieldPath"]
        == "metadata.labels['apps.kubernetes.io/pod-index']"
    )
    assert wenv["B"]["value"] == "2"


def test_controller_labels_win_and_user_metadata_kept():
    lws = load(ENV_LWS)
    got = by_kind_name(render_creation(lws))
    sts = got[("StatefulSet", "envs")]
    assert sts["metadata"]["labels"]["team"] == "a"
    assert sts["metadata"]["labels"][L.NAME] == "envs"
    tmeta = got[("StatefulSet", "envs-0")]["spec"]["template"]["metadata"]
    assert tmeta["labels"]["app"] == "x" and tmeta["annotations"]["note"] == "kept"
    assert tmeta["labels"][L.GROUP_KEY] == names.group_key("ml", "envs", 0)


def test_render_is_pure_and_deterministic():
    lws = load(ENV_LWS)
    before = copy.deepcopy(lws.to_wire())
    first = render_creation(lws)
    first[2]["spec"]["template"]["spec"]["containers"][0]["env"].clear()  # output is not aliased
    assert render_creation(lws) == render_creation(lws)
    assert lws.to_wire() == before


def test_unique_per_replica_services_and_addresses():
    lws = load(INPUTS / "unique-per-replica.yaml")
    got = by_kind_name(render_creation(lws))
    name = "leaderworkerset-multi-template"
    shared = got[("Service", name)]
    assert shared["spec"] == {"clusterIP": "None", "publishNotReadyAddresses": True, "selector": {L.NAME: name}}
    per = got[("Service", f"{name}-1")]
    assert per["spec"]["selector"] == {L.NAME: name, L.GROUP_INDEX: "1"}
    leader = got[("StatefulSet", name)]
    assert leader["spec"]["serviceName"] == name
    assert leader["spec"]["template"]["metadata"]["annotations"][L.SUBDOMAIN_POLICY] == "UniquePerReplica"
    worker = got[("StatefulSet", f"{name}-1")]
    assert worker["spec"]["serviceName"] == f"{name}-1"
    env = {e["name"]: e.get("value") for e in worker["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["LWS_LEADER_ADDRESS"] == f"{name}-1.{name}.inference"  # the leader's resolvable name


def test_leader_ready_worker_groups_argument():
    lws = load(INPUTS / "leader-ready.yaml")
    got = by_kind_name(render_creation(lws, worker_groups={1}))
    assert sorted(n for k, n in got if k == "StatefulSet") == ["leaderworkerset-sample", "leaderworkerset-sample-1"]


# ---- placement ------------------------------------------------------------------------------


def test_exclusive_topology_affinity_and_node_selector():
    doc = yaml.safe_load((INPUTS / "exclusive-topology.yaml").read_text())
    doc["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["nodeSelector"] = {"pool": "gpu"}
    doc["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["affinity"] = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"x": "y"}}}
            ]
        }
    }
    lws = load(doc)
    got = by_kind_name(render_creation(lws, group_domains={"2": "zone-c"}))
    leader = got[("StatefulSet", "leaderworkerset-sample")]["spec"]["template"]
    terms = leader["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms[0]["topologyKey"] == "kubernetes.io/hostname"  # user term kept, ours appended
    assert terms[1]["topologyKey"] == "topology.kubernetes.io/zone"
    assert {L.NAME, L.WORKER_INDEX} == {e["key"] for e in terms[1]["labelSelector"]["matchExpressions"]}
    assert leader["metadata"]["annotations"][L.EXCLUSIVE_TOPOLOGY] == "topology.kubernetes.io/zone"
    w2 = got[("StatefulSet", "leaderworkerset-sample-2")]["spec"]["template"]["spec"]
    assert w2["nodeSelector"] == {"pool": "gpu", "topology.kubernetes.io/zone": "zone-c"}
    w0 = got[("StatefulSet", "leaderworkerset-sample-0")]["spec"]["template"]["spec"]
    assert w0["nodeSelector"] == {"pool": "gpu"}  # domain unknown -> no pin
    assert len(w0["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]) == 1


# ---- subgroups ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "size,sgs,expected",
    [
        (16, 8, [0] * 7 + [1] * 8),  # size divisible: w // sgs
        (9, 8, [0] * 8),  # size-1 divisible: (w-1) // sgs
        (8, 4, [0] * 3 + [1] * 4),
        (5, 2, [0, 0, 1, 1]),
    ],
)
def test_subgroup_index_matches_upstream(size, sgs, expected):
    assert [subgroup_index(size, sgs, w) for w in range(1, size)] == expected
    assert static_worker_subgroup(size, sgs) == (expected[0] if len(set(expected)) == 1 else None)


def test_subgroup_labels_static_only_when_constant():
    excluded = by_kind_name(render_creation(load(INPUTS / "subgroup-leader-excluded.yaml")))
    wl = excluded[("StatefulSet", "leaderworkerset-sample-1")]["spec"]["template"]["metadata"]
    assert wl["labels"][L.SUBGROUP_INDEX] == "0"
    assert wl["labels"][L.SUBGROUP_KEY] == names.subgroup_key("leaderworkerset-sample-1", 0)
    assert wl["annotations"][L.SUBGROUP_POLICY_TYPE] == "LeaderExcluded"
    assert (
        L.SUBGROUP_INDEX
        not in excluded[("StatefulSet", "leaderworkerset-sample")]["spec"]["template"]["metadata"]["labels"]
    )
    mixed = by_kind_name(render_creation(load(INPUTS / "subgroup-leader-worker.yaml")))
    wm = mixed[("StatefulSet", "leaderworkerset-sample-0")]["spec"]["template"]["metadata"]
    assert L.SUBGROUP_INDEX not in wm["labels"] and wm["annotations"][L.SUBGROUP_SIZE] == "8"
    lm = mixed[("StatefulSet", "leaderworkerset-sample")]["spec"]["template"]["metadata"]
    assert lm["labels"][L.SUBGROUP_INDEX] == "0"


def test_subgroup_exclusive_affinity_for_static_worker_subgroup():
    doc = yaml.safe_load((INPUTS / "subgroup-leader-excluded.yaml").read_text())
    doc["metadata"]["annotations"] = {L.SUBGROUP_EXCLUSIVE_TOPOLOGY: "rack"}
    got = by_kind_name(render_creation(load(doc)))
    spec = got[("StatefulSet", "leaderworkerset-sample-0")]["spec"]["template"]["spec"]
    key = names.subgroup_key("leaderworkerset-sample-0", 0)
    aff = spec["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert aff == {
        "labelSelector": {"matchExpressions": [{"key": L.SUBGROUP_KEY, "operator": "In", "values": [key]}]},
        "topologyKey": "rack",
    }
    assert "podAntiAffinity" in spec["affinity"]


# ---- TPU ------------------------------------------------------------------------------------


def test_tpu_env_static_hosts_and_pod_index_id():
    got = by_kind_name(render_creation(load(INPUTS / "tpu.yaml")))
    w = got[("StatefulSet", "tpu-sample-1")]["spec"]["template"]
    assert w["metadata"]["annotations"][L.LEADER_REQUESTS_TPUS] == "true"
    env = {e["name"]: e for e in w["spec"]["containers"][0]["env"]}
    assert (
        env["TPU_WORKER_HOSTNAMES"]["value"]
        == "tpu-sample-1.tpu-sample,tpu-sample-1-1.tpu-sample,tpu-sample-1-2.tpu-sample"
    )
    assert env["TPU_NAME"]["value"] == "tpu-sample-1"
    assert "fieldRef" in env["TPU_WORKER_ID"]["valueFrom"]
    assert env["TPU_PROCESS_PORT"]["value"] == "8476"
    lenv = {
        e["name"]: e for e in got[("StatefulSet", "tpu-sample")]["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    assert lenv["TPU_WORKER_ID"]["value"] == "0" and lenv["TPU_NAME"]["value"] == "$(LWS_LEADER_NAME)"


def test_tpu_worker_id_omitted_when_not_expressible():
    doc = yaml.safe_load((INPUTS / "tpu.yaml").read_text())
    doc["spec"]["leaderWorkerTemplate"]["leaderTemplate"] = {"spec": {"containers": [{"name": "cpu", "image": "c"}]}}
    got = by_kind_name(render_creation(load(doc)))
    w = got[("StatefulSet", "tpu-sample-0")]["spec"]["template"]
    env = {e["name"]: e for e in w["spec"]["containers"][0]["env"]}
    assert L.LEADER_REQUESTS_TPUS not in w["metadata"]["annotations"]
    assert "TPU_WORKER_ID" not in env  # would be pod-index - 1
    assert env["TPU_WORKER_HOSTNAMES"]["value"] == "tpu-sample-0-1.tpu-sample,tpu-sample-0-2.tpu-sample"
