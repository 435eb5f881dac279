"""RBAC of the opt-in capacity check (issue 24 item 5): list on nodes and on pods, cluster-wide (a
ClusterRole + ClusterRoleBinding), only when opted in — ``render --rbac --check-capacity``, the
ReconcilerRbac argument, or a manifest annotated ``pulumi-lws.io/check-capacity: "true"`` (where
the component argument is written) — for every API; and exactly what the live observer then sends
is allowed (kmock's request log matched against the policy)."""

from __future__ import annotations

import asyncio
import copy
import dataclasses

import pytest
import yaml
from conftest import validate_manifest
from support.capacity_helpers import CASES

from pulumi_lws import rbac
from pulumi_lws.cli import main
from pulumi_lws.core.features.control import CHECK_CAPACITY_ANNOTATION
from pulumi_lws.core.k8s.yamlio import dump_documents
from pulumi_lws.workloads import workload_for

API = pytest.mark.parametrize("api", sorted(CASES))
NODES = {"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]}
PODS = {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}


def cluster_rules(docs) -> list:
    return [r for d in docs if d and d["kind"] == "ClusterRole" for r in d["rules"]]


def annotated(manifest: dict) -> dict:
    out = copy.deepcopy(manifest)
    out["metadata"].setdefault("annotations", {})[CHECK_CAPACITY_ANNOTATION] = "true"
    return out


@API
def test_no_cluster_wide_read_without_the_opt_in(api):
    docs = list(yaml.safe_load_all(rbac.rbac_yaml([CASES[api][0]("img:1")])))
    assert PODS not in cluster_rules(docs) and NODES not in cluster_rules(docs)


@API
def test_controller_mode_refuses_the_flag_and_grants_nothing_for_the_annotation(api):
    from pulumi_lws.core.contract.errors import SpecError

    manifest = CASES[api][0]("img:1")
    with pytest.raises(SpecError, match="checkCapacity"):
        rbac.rbac_yaml([manifest], check_capacity=True, mode="controller")
    docs = list(yaml.safe_load_all(rbac.rbac_yaml([annotated(manifest)], mode="controller")))
    assert PODS not in cluster_rules(docs) and NODES not in cluster_rules(docs)


@API
def test_the_flag_or_the_annotation_grants_nodes_and_pods_list_cluster_wide(api):
    manifest = CASES[api][0]("img:1")
    for text in (
        rbac.rbac_yaml([manifest], check_capacity=True),
        rbac.rbac_yaml([annotated(manifest)]),
    ):
        docs = [d for d in yaml.safe_load_all(text) if d]
        rules = cluster_rules(docs)
        assert NODES in rules and PODS in rules, rules
        assert {d["kind"] for d in docs} >= {"ClusterRole", "ClusterRoleBinding"}
        for doc in docs:
            validate_manifest(doc)  # strict, Kubernetes 1.35
        namespaced = [r for d in docs if d["kind"] == "Role" for r in d["rules"]]
        assert not any(r["resources"] == ["nodes"] for r in namespaced)


def test_render_rbac_check_capacity(tmp_path, capsys):
    path = tmp_path / "w.yaml"
    path.write_text(dump_documents([CASES["LeaderWorkerSet"][0]("img:1")]))
    assert main(["render", str(path), "--rbac", "--check-capacity"]) == 0
    rules = cluster_rules(yaml.safe_load_all(capsys.readouterr().out))
    assert NODES in rules and PODS in rules
    assert main(["render", str(path), "--check-capacity"]) == 2  # only with --rbac
    assert "--check-capacity only with --rbac" in capsys.readouterr().err


@pytest.mark.asyncio
@pytest.mark.kmock
@API
async def test_every_request_of_the_capacity_observe_is_allowed(kmock, api):
    pytest.importorskip("kmock")
    from support.kmock_helpers import kmock_client

    from pulumi_lws.cluster.live import LiveCluster

    workload = workload_for(api)
    manifest = CASES[api][0]("img:1")
    spec = workload.parse(manifest)
    scope = dataclasses.replace(workload.scope(spec), capacity=True)
    live = LiveCluster(kmock_client(str(kmock.url)), gang_provider=workload.gang.provider())
    await asyncio.to_thread(live.observe, scope)
    policy = rbac.policy_for_manifest(manifest, check_capacity=True, gang_provider=workload.gang.provider())
    plain = rbac.policy_for_manifest(manifest, gang_provider=workload.gang.provider())
    requests = [r for r in kmock if r.resource is not None]
    wide = {(r.resource.plural, r.namespace) for r in requests if r.namespace is None}
    assert wide == {("nodes", None), ("pods", None)}  # the capacity LISTs are cluster-wide
    for request in requests:
        group, plural = request.resource.group, request.resource.plural
        cluster = request.namespace is None
        assert policy.allows(group, plural, "list", cluster=cluster), (group, plural, request.namespace)
    assert not plain.allows("", "pods", "list", cluster=True) and not plain.allows("", "nodes", "list", cluster=True)
