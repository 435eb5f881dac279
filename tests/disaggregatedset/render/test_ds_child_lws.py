"""The child LeaderWorkerSet of a DisaggregatedSet (render.child_lws): name, labels, annotations,
env and placement affinities, exactly as upstream's LeaderWorkerSetManager.Create + the LWS docs' env."""

from __future__ import annotations

import copy

import pytest
from ds_render_base import container, load, manifest, role

from pulumi_lws.disaggregatedset import labels as DL
from pulumi_lws.disaggregatedset.render import add_placement_affinities, child_lws
from pulumi_lws.disaggregatedset.revision import compute_revision

LEADER = {
    "metadata": {"labels": {"app": "mine", "tier": "leader", DL.NAME: "spoofed"}, "annotations": {"note": "leader"}},
    "spec": {
        "initContainers": [container("init", "busybox")],
        "containers": [container(env=[{"name": DL.ENV_ROLE, "value": "user"}, {"name": "KEEP", "value": "1"}])],
    },
}
PREFILL = role(
    "prefill",
    2,
    size=2,
    leader=LEADER,
    worker_meta={"labels": {"tier": "worker", DL.SLICE: "9"}, "annotations": {"note": "worker"}},
    metadata={"labels": {"team": "a", DL.ROLE: "spoofed"}, "annotations": {"owner": "me"}},
)
DS = manifest(PREFILL, role("decode", 1), slices=2, placementPolicy={"type": "ExclusiveSlice", "topology": "zone"})


def ds_labels(s: int, rev: str, r: str) -> dict:
    return {"app": f"ds-{s}-{r}", DL.NAME: "ds", DL.ROLE: r, DL.SLICE: str(s), DL.REVISION: rev}


def env(s: int, rev: str, r: str) -> list[dict]:
    return [
        {"name": DL.ENV_NAME, "value": "ds"},
        {"name": DL.ENV_ROLE, "value": r},
        {"name": DL.ENV_SLICE, "value": str(s)},
        {"name": DL.ENV_REVISION, "value": rev},
    ]


def exclusive_slice(s: int) -> dict:
    spread = [{"key": DL.NAME, "operator": "In", "values": ["ds"]}]
    if s == 0:
        spread.append({"key": DL.SLICE, "operator": "Exists"})
    spread.append({"key": DL.SLICE, "operator": "NotIn", "values": [str(s)]})
    return {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": DL.NAME, "operator": "In", "values": ["ds"]},
                            {"key": DL.SLICE, "operator": "In", "values": [str(s)]},
                        ]
                    },
                    "topologyKey": "zone",
                }
            ]
        },
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchExpressions": spread}, "topologyKey": "zone"}
            ]
        },
    }


@pytest.mark.parametrize("s", [0, 1])
@pytest.mark.parametrize("r", ["prefill", "decode"])
def test_child_name_namespace_replicas_labels_annotations(s: int, r: str) -> None:
    ds = load(DS)
    rev = compute_revision(ds)
    lws = child_lws(ds, r, s, rev, 5)
    assert lws.name == f"ds-{s}-{rev}-{r}"
    assert lws.namespace == "default"
    assert lws.replicas == 5
    user = {"team": "a"} if r == "prefill" else {}
    assert lws.metadata.labels == {**user, **ds_labels(s, rev, r)}  # DS labels win over the user's
    assert lws.metadata.annotations == ({"owner": "me"} if r == "prefill" else {})
    assert lws.validation_errors() == []


@pytest.mark.parametrize("s", [0, 1])
def test_pod_templates_labels_env_affinities_exactly(s: int) -> None:
    ds = load(DS)
    rev = compute_revision(ds)
    lwt = child_lws(ds, "prefill", s, rev, 2).spec.leader_worker_template
    leader, worker = lwt.leader_template, lwt.worker_template
    assert leader["metadata"]["labels"] == {"tier": "leader", **ds_labels(s, rev, "prefill")}
    assert leader["metadata"]["annotations"] == {"note": "leader"}
    assert worker["metadata"]["labels"] == {"tier": "worker", **ds_labels(s, rev, "prefill")}
    assert worker["metadata"]["annotations"] == {"note": "worker"}
    # env first in every container and initContainer; a same-named user variable is replaced
    assert leader["spec"]["initContainers"][0]["env"] == env(s, rev, "prefill")
    assert leader["spec"]["containers"][0]["env"] == env(s, rev, "prefill") + [{"name": "KEEP", "value": "1"}]
    assert worker["spec"]["containers"][0]["env"] == env(s, rev, "prefill")
    assert leader["spec"]["affinity"] == exclusive_slice(s)
    assert worker["spec"]["affinity"] == exclusive_slice(s)
    # decode has no leader template: only the worker template is decorated
    dec = child_lws(ds, "decode", s, rev, 1).spec.leader_worker_template
    assert dec.leader_template is None
    assert dec.worker_template["metadata"]["labels"] == ds_labels(s, rev, "decode")
    assert dec.worker_template["spec"]["affinity"] == exclusive_slice(s)


def test_role_spec_is_not_mutated() -> None:
    ds = load(DS)
    before = ds.to_wire()
    child_lws(ds, "prefill", 1, compute_revision(ds), 3, initial_replicas=2)
    assert ds.to_wire() == before


def test_initial_replicas_annotation_only_when_given() -> None:
    m = copy.deepcopy(DS)
    m["spec"]["roles"][0]["metadata"]["annotations"][DL.INITIAL_REPLICAS] = "7"
    ds = load(m)
    rev = compute_revision(ds)
    assert child_lws(ds, "prefill", 0, rev, 1, initial_replicas=4).metadata.annotations == {
        "owner": "me",
        DL.INITIAL_REPLICAS: "4",
    }
    # the key is the controller's: a user-written one never reaches the child
    assert child_lws(ds, "prefill", 0, rev, 1).metadata.annotations == {"owner": "me"}
    assert child_lws(ds, "decode", 0, rev, 1, initial_replicas=0).metadata.annotations == {DL.INITIAL_REPLICAS: "0"}


def test_exclusive_topology_adds_the_foreign_set_term() -> None:
    m = copy.deepcopy(DS)
    m["spec"]["placementPolicy"] = {"type": "ExclusiveTopology", "topology": "rack"}
    ds = load(m)
    aff = child_lws(ds, "decode", 1, compute_revision(ds), 1).spec.leader_worker_template.worker_template["spec"][
        "affinity"
    ]
    anti = aff["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert [t["topologyKey"] for t in anti] == ["rack", "rack"]
    assert anti[0]["labelSelector"]["matchExpressions"] == [
        {"key": DL.NAME, "operator": "In", "values": ["ds"]},
        {"key": DL.SLICE, "operator": "NotIn", "values": ["1"]},
    ]
    assert anti[1]["labelSelector"]["matchExpressions"] == [
        {"key": DL.NAME, "operator": "Exists"},
        {"key": DL.NAME, "operator": "NotIn", "values": ["ds"]},
        {"key": DL.SLICE, "operator": "Exists"},
    ]
    assert len(aff["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]) == 1


def test_no_placement_no_affinity_and_user_affinity_kept() -> None:
    user_aff = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"x": "y"}}, "topologyKey": "host"}
            ]
        }
    }
    r = role("decode", 1)
    r["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["affinity"] = user_aff
    plain = load(manifest(role("prefill", 1), r))
    rev = compute_revision(plain)
    assert "affinity" not in child_lws(plain, "prefill", 0, rev, 1).spec.leader_worker_template.worker_template["spec"]
    assert (
        child_lws(plain, "decode", 0, rev, 1).spec.leader_worker_template.worker_template["spec"]["affinity"]
        == user_aff
    )
    placed = load(manifest(role("prefill", 1), r, placementPolicy={"type": "ExclusiveSlice", "topology": "zone"}))
    anti = child_lws(placed, "decode", 0, compute_revision(placed), 1).spec.leader_worker_template.worker_template[
        "spec"
    ]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert anti[0] == user_aff["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]  # appended after
    assert len(anti) == 2


def test_placement_without_topology_is_a_no_op() -> None:
    spec: dict = {}
    add_placement_affinities(spec, "ds", 0, "ExclusiveSlice", "")
    add_placement_affinities(spec, "ds", 0, "None", "zone")
    assert spec == {}
