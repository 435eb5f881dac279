"""Least privilege on the real API server: a ServiceAccount bound to exactly what ``pulumi-lws
render --rbac`` prints runs the whole quickstart rollout with the real CLI and provider; with one
verb removed from that Role, ``pulumi up`` fails with a message naming the verb and resource."""

from __future__ import annotations

import json

import yaml
from e2e_harness import Invariants, roll, set_images

LWS = "leaderworkerset-sample"


def _identity(cluster, namespace: str, tmp_path) -> str:
    """A kubeconfig for ServiceAccount ``namespace/pulumi-lws`` (a TokenRequest token)."""
    cluster.kubectl("create", "serviceaccount", "pulumi-lws", "-n", namespace)
    token = cluster.kubectl("create", "token", "pulumi-lws", "-n", namespace, "--duration=2h").strip()
    with open(cluster.env["KUBECONFIG"]) as f:
        admin = json.load(f)
    admin["users"] = [{"name": "pulumi-lws", "user": {"token": token}}]
    admin["contexts"] = [{"name": "sa", "context": {"cluster": "e2e", "user": "pulumi-lws", "namespace": namespace}}]
    admin["current-context"] = "sa"
    path = tmp_path / "kubeconfig-sa"
    path.write_text(json.dumps(admin))
    return str(path)


def test_rendered_rbac_runs_the_rollout(cluster, namespace, make_stack, tmp_path):
    stack = make_stack("quickstart", "lws.yaml")
    rbac = cluster.run(
        ["pulumi-lws", "render", "--rbac", str(stack.manifest_path), "--service-account", f"{namespace}/pulumi-lws"]
    ).stdout
    documents = [d for d in yaml.safe_load_all(rbac) if d]
    assert {d["kind"] for d in documents} >= {"Role", "RoleBinding"}
    cluster.kubectl("apply", "-f", "-", stdin=rbac)
    # the stack's commands (pulumi, pulumi-lws status, settling reads) run as the ServiceAccount
    stack.cluster = type(cluster)(dict(cluster.env, KUBECONFIG=_identity(cluster, namespace, tmp_path)))

    invariants = Invariants(cluster, namespace)
    assert roll(stack, invariants, lws_name=LWS).complete
    stack.edit(set_images("nginxinc/nginx-unprivileged:1.28"))
    rolled = roll(stack, invariants, lws_name=LWS, limit=20)
    assert rolled.complete, rolled.stages
    assert invariants.violations == []

    # one verb less: patch on statefulsets (every stage's partition and replicas change is a patch)
    role = next(d for d in documents if d["kind"] == "Role")
    for rule in role["rules"]:
        if "statefulsets" in rule.get("resources", []):
            rule["verbs"] = [v for v in rule["verbs"] if v != "patch"]
    cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(role))
    stack.edit(set_images("nginxinc/nginx-unprivileged:1.29"))
    cluster.settle(namespace)
    failed = stack.cluster.run(
        ["pulumi", "up", "--yes", "--skip-preview", "--stack", namespace, "--non-interactive"],
        cwd=stack.workdir,
        check=False,
        timeout=300,
    )
    assert failed.returncode != 0
    text = failed.stdout + failed.stderr
    assert "statefulsets" in text and "patch" in text and "forbidden" in text.lower(), text[-3000:]
