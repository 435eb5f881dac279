"""ReconcilerRbac under Pulumi's mock engine, and `pulumi-lws render --rbac`: the same objects."""

from __future__ import annotations

import pulumi
import pytest
import yaml
from conftest import REPO_ROOT, validate_manifest
from rbac_scenarios import scenarios

from pulumi_lws.cli import main
from pulumi_lws.components.rbac import ReconcilerRbac
from pulumi_lws.core.contract.errors import SpecError

EXCLUSIVE = next(s for s in scenarios() if s.name == "lws-exclusive-placement")
MS = next(s for s in scenarios() if s.name == "ms-pd")


@pulumi.runtime.test
def test_component_registers_role_bindings_and_cluster_role_only_for_nodes(mocks):
    component = ReconcilerRbac(
        "lws-rbac",
        {
            "manifests": [EXCLUSIVE.manifest, MS.manifest, {"kind": "ConfigMap"}],
            "service_account": "pulumi-operator/lws-stack",
            "create_service_account": True,
        },
    )

    def check(outputs):
        namespaces, cluster_role = outputs[:2]
        registered = {a.typ: a for a in mocks.registered if a.custom}
        assert set(registered) == {
            "kubernetes:core/v1:ServiceAccount",
            "kubernetes:rbac.authorization.k8s.io/v1:Role",
            "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
            "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole",
            "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding",
        }
        assert namespaces == ["serving"] and cluster_role == "lws-rbac"  # both workloads share one namespace
        cluster = registered["kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"].inputs["rules"]
        assert [r["resources"] for r in cluster] == [["nodes"]]
        binding = registered["kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"].inputs
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "lws-stack", "namespace": "pulumi-operator"}]
        for doc in mocks.manifests():
            validate_manifest(doc)

    return pulumi.Output.all(
        component.role_namespaces, component.cluster_role, *[r.urn for r in component.resources]
    ).apply(check)


def test_component_rejects_bad_input_before_registering(mocks):
    bad = dict(MS.manifest, spec={**MS.manifest["spec"], "replicas": "many"})
    with pytest.raises(SpecError, match="replicas"):
        ReconcilerRbac("bad", {"manifests": [bad]})
    with pytest.raises(ValueError, match="NAMESPACE/NAME"):
        ReconcilerRbac("bad", {"manifests": [MS.manifest], "service_account": "nobody"})
    assert mocks.registered == []


def test_render_rbac_prints_the_same_objects(tmp_path, capsys):
    path = tmp_path / "workloads.yaml"
    path.write_text(
        yaml.safe_dump_all(
            [EXCLUSIVE.manifest, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}, MS.manifest]
        )
    )
    assert main(["render", str(path), "--rbac", "--service-account", "ops/runner"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# least-privilege RBAC for `pulumi up` of LeaderWorkerSet serving/")
    docs = list(yaml.safe_load_all(out))
    assert [d["kind"] for d in docs] == ["Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"]
    for doc in docs:
        validate_manifest(doc)
    role = docs[0]["rules"]
    pods = next(r for r in role if r["resources"] == ["pods"])
    assert pods["verbs"] == ["delete", "get", "list", "patch"]  # no create, no watch (skipAwait)
    assert main(["render", str(path), "--rbac", "--name", MS.manifest["metadata"]["name"]]) == 0
    only_ms = list(yaml.safe_load_all(capsys.readouterr().out))
    assert [d["kind"] for d in only_ms] == ["Role", "RoleBinding"]


def test_render_rbac_bad_input_prints_nothing(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(dict(MS.manifest, spec={**MS.manifest["spec"], "replicas": -1})))
    assert main(["render", str(path), "--rbac"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "replicas" in captured.err
    assert main(["render", str(REPO_ROOT / "examples/quickstart/lws.yaml"), "--rbac", "--service-account", "x"]) == 2
    assert "NAMESPACE/NAME" in capsys.readouterr().err
