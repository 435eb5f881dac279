"""``pulumi-lws render --stage steady``: every object of the converged fleet, with the values a
running cluster gives them (exclusive placement pinned to the leaders' domains, gang objects of
either provider), node pools from flags or assumed, and a stuck set printed with its blocker."""

from __future__ import annotations

import copy

import pytest
import yaml
from conftest import TESTS_DIR, validate_manifest

from pulumi_lws.cli import main
from pulumi_lws.core.k8s.yamlio import read_documents
from pulumi_lws.lws import labels as L
from pulumi_lws.sim.driver.expansion import steady_state

UPSTREAM = TESTS_DIR / "manifests_upstream"
EXCLUSIVE = UPSTREAM / "config_samples_leaderworkerset_exclusiveplacement.yaml"
NODEPOOL = "cloud.google.com/gke-nodepool"
GANG = {
    "apiVersion": "leaderworkerset.x-k8s.io/v1",
    "kind": "LeaderWorkerSet",
    "metadata": {"name": "inf"},
    "spec": {
        "replicas": 2,
        "scheduling": {},
        "leaderWorkerTemplate": {
            "size": 3,
            "workerTemplate": {
                "spec": {"containers": [{"name": "w", "image": "a", "resources": {"requests": {"cpu": "500m"}}}]}
            },
        },
    },
}


def run(capsys, *argv: str) -> tuple[int, list[str], list[dict], str]:
    code = main(["render", *argv])
    out, err = capsys.readouterr()
    heads = [line[2:] for line in out.splitlines() if line.startswith("# ")]
    return code, heads, [d for d in yaml.safe_load_all(out) if d is not None], err


def by_name(objs: list[dict], kind: str) -> dict[str, dict]:
    return {o["metadata"]["name"]: o for o in objs if o["kind"] == kind}


def test_exclusive_placement_shows_every_worker_statefulset_pinned_to_a_domain(capsys) -> None:
    code, heads, objs, err = run(capsys, str(EXCLUSIVE), "--stage", "steady")
    assert code == 0, err
    sts = by_name(objs, "StatefulSet")
    assert sorted(sts) == [
        "leaderworkerset-sample",
        "leaderworkerset-sample-0",
        "leaderworkerset-sample-1",
        "leaderworkerset-sample-2",
    ]
    domains = [
        sts[f"leaderworkerset-sample-{i}"]["spec"]["template"]["spec"]["nodeSelector"][NODEPOOL] for i in range(3)
    ]
    assert sorted(domains) == ["domain-a", "domain-b", "domain-c"]  # one domain per group, as the assumed pool has
    leader = sts["leaderworkerset-sample"]["spec"]["template"]["spec"]["affinity"]
    assert leader["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]["topologyKey"] == NODEPOOL
    for obj in objs:
        validate_manifest(obj)
    (head,) = heads
    assert head.startswith("LeaderWorkerSet default/leaderworkerset-sample: steady state after ")
    assert f"3 nodes in 3 domains of {NODEPOOL}, assumed" in head
    assert head.endswith(
        "3 groups of 4 pods, all on revision "
        + sts["leaderworkerset-sample"]["metadata"]["labels"][L.TEMPLATE_REVISION_HASH]
    )


def test_first_stage_of_the_same_file_has_the_leader_only_and_says_why(capsys) -> None:
    code, (head,), objs, _ = run(capsys, str(EXCLUSIVE))
    assert code == 0
    assert list(by_name(objs, "StatefulSet")) == ["leaderworkerset-sample"]
    assert "first `pulumi up` on an empty cluster" in head and "--stage steady shows them" in head
    assert "groups=" not in head


def test_a_given_pool_labels_domains_per_zone(capsys) -> None:
    code, (head,), objs, err = run(
        capsys, str(EXCLUSIVE), "--stage", "steady", "--nodes", "6", "--zones", "3", "--gpus-per-node", "8"
    )
    assert code == 0, err
    sts = by_name(objs, "StatefulSet")
    domains = {
        sts[f"leaderworkerset-sample-{i}"]["spec"]["template"]["spec"]["nodeSelector"][NODEPOOL] for i in range(3)
    }
    assert domains == {"domain-a", "domain-b", "domain-c"}
    assert "node pool: 6 nodes in 3 zones" in head and "assumed" not in head


def test_too_few_domains_prints_the_last_reconcile_with_the_blocker_and_exits_1(capsys) -> None:
    code, (head,), objs, err = run(capsys, str(EXCLUSIVE), "--stage", "steady", "--nodes", "2", "--zones", "2")
    assert code == 1
    assert "NOT converged" in head and "topology-domain-unavailable" in head
    assert "did not converge" in err and "topology-domain-unavailable" in err
    workers = [n for n in by_name(objs, "StatefulSet") if n != "leaderworkerset-sample"]
    assert len(workers) == 2  # two groups found a domain; the third waits


@pytest.mark.parametrize(
    "provider, api, kinds",
    [
        ("volcano", "scheduling.volcano.sh/v1beta1", ["PodGroup", "PodGroup"]),
        ("kubernetes", "scheduling.k8s.io/v1beta1", ["Workload", "PodGroup", "PodGroup"]),
    ],
)
def test_gang_provider_objects_in_the_steady_state(capsys, tmp_path, provider, api, kinds) -> None:
    path = tmp_path / "gang.yaml"
    path.write_text(yaml.safe_dump(GANG))
    code, _, objs, err = run(capsys, str(path), "--stage", "steady", "--gang-provider", provider)
    assert code == 0, err
    gang = [o for o in objs if o["apiVersion"] == api]
    assert [o["kind"] for o in gang] == kinds
    groups = [o["metadata"]["name"] for o in gang if o["kind"] == "PodGroup"]
    assert [g.rsplit("-", 1)[0] for g in groups] == ["inf-0", "inf-1"]
    workers = by_name(objs, "StatefulSet")
    if provider == "volcano":
        for i, group in enumerate(groups):
            template = workers[f"inf-{i}"]["spec"]["template"]
            assert template["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == group
            validate_manifest(workers[f"inf-{i}"])


def test_gang_provider_applies_to_the_first_stage_too(capsys, tmp_path) -> None:
    path = tmp_path / "gang.yaml"
    path.write_text(yaml.safe_dump(GANG))
    _, _, objs, _ = run(capsys, str(path), "--gang-provider", "volcano")
    assert {o["apiVersion"] for o in objs if o["kind"] == "PodGroup"} == {"scheduling.volcano.sh/v1beta1"}


def test_leader_ready_steady_state_has_every_worker(capsys) -> None:
    path = TESTS_DIR / "golden" / "ordinal" / "inputs" / "leader-ready.yaml"
    code, (head,), objs, _ = run(capsys, str(path), "--stage", "steady")
    lws = read_documents(path)[0]
    assert code == 0 and "node pool: 1 unbounded node" in head
    assert len(by_name(objs, "StatefulSet")) == 1 + lws["spec"]["replicas"]


def test_hash_identity_steady_state_has_a_statefulset_and_service_per_group(capsys, tmp_path) -> None:
    doc = copy.deepcopy(GANG)
    del doc["spec"]["scheduling"]
    doc["spec"]["groupIdentity"] = "Hash"
    path = tmp_path / "hash.yaml"
    path.write_text(yaml.safe_dump(doc))
    code, _, objs, err = run(capsys, str(path), "--stage", "steady")
    assert code == 0, err
    assert list(by_name(objs, "Deployment")) == ["inf"]
    groups = [n for n in by_name(objs, "StatefulSet")]
    assert len(groups) == 2 and set(groups) < set(by_name(objs, "Service"))


def test_the_steady_state_is_a_fixed_point() -> None:
    expansion = steady_state(read_documents(EXCLUSIVE)[0])
    stage = expansion.reconciled.stage
    assert expansion.converged and stage.complete and stage.blocker is None and stage.actions == ()


@pytest.mark.parametrize(
    "flags, needle",
    [
        (["--nodes", "3"], "--nodes only with --stage steady"),
        (["--stage", "steady", "--zones", "2"], "--zones"),
        (["--stage", "steady", "--nodes", "0"], "--nodes"),
        (["--stage", "later"], "invalid choice"),
    ],
)
def test_bad_pool_flags_exit_2(capsys, flags, needle) -> None:
    code, _, objs, err = run(capsys, str(EXCLUSIVE), *flags)
    assert code == 2 and objs == [] and needle in err and "Traceback" not in err
